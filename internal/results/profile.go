package results

import (
	"cmp"
	"slices"
	"strings"
)

// Profile is a contender's CPU profile over one cell's measured load (arena run --profile),
// taken with its stack's own profiler and folded into one form for every stack.
type Profile struct {
	Tool string `json:"tool"` // "jfr", "v8", "pprof", "py-spy" or "perf"
	// File is the tool's own recording (open it in JMC, Chrome DevTools or go tool pprof);
	// Folded the samples as collapsed stacks ("root;…;leaf count", flamegraph.pl's input).
	// Both are relative to the run's folder.
	File   string `json:"file,omitempty"`
	Folded string `json:"folded,omitempty"`
	// Samples are the on-CPU samples inside the load's window; Outside those a JVM's
	// recording held from before or after it (start-up, warm-up, shutdown), left out.
	Samples int64 `json:"samples"`
	Outside int64 `json:"outside,omitempty"`
	// Top are the frames with the most samples of their own (self), most first.
	Top []Frame `json:"top,omitempty"`
	// Flame is the call tree for the report's flame graph, without the branches under
	// FlameMin of the samples (they stay in Folded).
	Flame *FlameNode `json:"flame,omitempty"`
	Error string     `json:"error,omitempty"` // why there is no profile, or only part of one
}

// Frame is one function's share of a profile: self in it, total in it or below it.
type Frame struct {
	Name  string `json:"name"`
	Self  int64  `json:"self"`
	Total int64  `json:"total"`
}

// FlameNode is a node of a call tree: the samples in the frame or below it.
type FlameNode struct {
	Name     string       `json:"n"`
	Value    int64        `json:"v"`
	Children []*FlameNode `json:"c,omitempty"`
}

// FlameMin is the share of a profile's samples below which a branch is left out of the
// flame graph kept in results.json; TopFrames is how many frames Top keeps.
const (
	FlameMin  = 0.003
	TopFrames = 40
)

// Stacks are collapsed stacks: frames root first, joined by ";", and their sample counts.
type Stacks map[string]int64

// Samples is the count of every stack.
func (s Stacks) Samples() int64 {
	var n int64
	for _, v := range s {
		n += v
	}
	return n
}

// Top is the n frames with the most self samples, with their totals (a frame counted once
// per stack, however often it recurs in it).
func (s Stacks) Top(n int) []Frame {
	self, total := s.counts()
	out := make([]Frame, 0, len(self))
	for name, v := range self {
		out = append(out, Frame{Name: name, Self: v, Total: total[name]})
	}
	sortFrames(out)
	if len(out) > n {
		out = out[:n]
	}
	return out
}

// Shares are every frame's shares (0..1) of the samples: in it (self), and in it or below it
// (total).
func (s Stacks) Shares() (self, total map[string]float64) {
	cs, ct := s.counts()
	all := float64(s.Samples())
	self, total = make(map[string]float64, len(cs)), make(map[string]float64, len(ct))
	for name, v := range cs {
		self[name] = float64(v) / all
	}
	for name, v := range ct {
		total[name] = float64(v) / all
	}
	return self, total
}

// counts are each frame's samples of its own (self) and in it or below it (total, a frame
// counted once per stack however often it recurs in it).
func (s Stacks) counts() (self, total map[string]int64) {
	self, total = map[string]int64{}, map[string]int64{}
	for stack, v := range s {
		frames := strings.Split(stack, ";")
		self[frames[len(frames)-1]] += v
		seen := map[string]bool{}
		for _, f := range frames {
			if !seen[f] {
				seen[f] = true
				total[f] += v
			}
		}
	}
	return self, total
}

func sortFrames(fs []Frame) {
	slices.SortFunc(fs, func(a, b Frame) int {
		if c := cmp.Compare(b.Self, a.Self); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
}

// Flame is the call tree of the stacks under one root named root, without the branches
// below min of the samples.
func (s Stacks) Flame(root string, min float64) *FlameNode {
	top := &FlameNode{Name: root}
	for stack, v := range s {
		top.add(strings.Split(stack, ";"), v)
	}
	top.prune(int64(min * float64(top.Value)))
	return top
}

func (n *FlameNode) add(frames []string, v int64) {
	n.Value += v
	if len(frames) == 0 {
		return
	}
	for _, c := range n.Children {
		if c.Name == frames[0] {
			c.add(frames[1:], v)
			return
		}
	}
	c := &FlameNode{Name: frames[0]}
	n.Children = append(n.Children, c)
	c.add(frames[1:], v)
}

// prune drops the branches under floor samples and orders children by name, as flame
// graphs do (the x axis is no time line).
func (n *FlameNode) prune(floor int64) {
	kept := n.Children[:0]
	for _, c := range n.Children {
		if c.Value >= floor && c.Value > 0 {
			c.prune(floor)
			kept = append(kept, c)
		}
	}
	n.Children = kept
	slices.SortFunc(n.Children, func(a, b *FlameNode) int { return strings.Compare(a.Name, b.Name) })
}

// mergeFlame adds b's tree into a's (same root).
func mergeFlame(a, b *FlameNode) {
	a.Value += b.Value
	for _, bc := range b.Children {
		found := false
		for _, ac := range a.Children {
			if ac.Name == bc.Name {
				mergeFlame(ac, bc)
				found = true
				break
			}
		}
		if !found {
			a.Children = append(a.Children, cloneFlame(bc))
		}
	}
}

func cloneFlame(n *FlameNode) *FlameNode {
	c := &FlameNode{Name: n.Name, Value: n.Value}
	for _, ch := range n.Children {
		c.Children = append(c.Children, cloneFlame(ch))
	}
	return c
}

// MergeProfiles is the repeats' profiles as one: samples and frames summed, flame trees
// added. A frame outside some repeat's Top counts nothing there, so the merged Top is
// exact for frames in every repeat's and a lower bound for the rest. Nil when no repeat
// has samples; a repeat without a profile is named in Error.
func MergeProfiles(ps []*Profile) *Profile {
	var out *Profile
	var missing []string
	self, total := map[string]int64{}, map[string]int64{}
	for _, p := range ps {
		if p == nil || p.Samples == 0 || p.Flame == nil {
			if p != nil && p.Error != "" {
				missing = append(missing, p.Error)
			}
			continue
		}
		if out == nil {
			out = &Profile{Tool: p.Tool, Flame: cloneFlame(p.Flame)}
		} else {
			mergeFlame(out.Flame, p.Flame)
		}
		out.Samples += p.Samples
		out.Outside += p.Outside
		for _, f := range p.Top {
			self[f.Name] += f.Self
			total[f.Name] += f.Total
		}
	}
	if out == nil {
		return nil
	}
	for name, v := range self {
		out.Top = append(out.Top, Frame{Name: name, Self: v, Total: total[name]})
	}
	sortFrames(out.Top)
	if len(out.Top) > TopFrames {
		out.Top = out.Top[:TopFrames]
	}
	if len(missing) > 0 {
		out.Error = "some repeats have no profile: " + strings.Join(missing, "; ")
	}
	return out
}
