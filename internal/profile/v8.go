package profile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// cpuProfile is V8's .cpuprofile (what node --cpu-prof writes): a call tree of nodes, the
// node each sample hit, and the µs between samples from StartTime.
type cpuProfile struct {
	Nodes []struct {
		ID        int `json:"id"`
		CallFrame struct {
			FunctionName string `json:"functionName"`
			URL          string `json:"url"`
			LineNumber   int    `json:"lineNumber"` // from 0
		} `json:"callFrame"`
		Children []int `json:"children"`
	} `json:"nodes"`
	StartTime  int64   `json:"startTime"` // µs, V8's monotonic clock
	Samples    []int   `json:"samples"`
	TimeDeltas []int64 `json:"timeDeltas"`
}

// v8Skipped are V8's pseudo-frames that are no work: the loop waiting for events, and the
// tree's root.
var v8Skipped = map[string]bool{"(idle)": true, "(root)": true}

// foldV8Dir folds every process's profile in dir (a cluster's workers write one each) into
// one set of stacks, keeping the samples stamped between from and to.
func foldV8Dir(dir string, from, to int64) (results.Stacks, int64, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.cpuprofile"))
	if len(files) == 0 {
		return nil, 0, fmt.Errorf("no .cpuprofile in %s: no Node process of the contender wrote one (its profiler starts and stops on SIGUSR2; was it killed?)", dir)
	}
	stacks, outside := results.Stacks{}, int64(0)
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return stacks, outside, err
		}
		var p cpuProfile
		if err := json.Unmarshal(raw, &p); err != nil {
			return stacks, outside, fmt.Errorf("%s: %w", filepath.Base(f), err)
		}
		outside += foldV8(&p, from, to, stacks)
	}
	return stacks, outside, nil
}

// foldV8 adds p's samples between from and to (µs) into stacks and returns how many samples
// of work fell outside.
func foldV8(p *cpuProfile, from, to int64, stacks results.Stacks) (outside int64) {
	parent := map[int]int{}
	name := map[int]string{}
	for _, n := range p.Nodes {
		for _, c := range n.Children {
			parent[c] = n.ID
		}
		cf := n.CallFrame
		fn := cf.FunctionName
		if fn == "" {
			fn = "(anonymous)"
		}
		if cf.URL != "" {
			fn += " " + shortURL(cf.URL) + fmt.Sprintf(":%d", cf.LineNumber+1)
		}
		name[n.ID] = frameName(fn)
	}
	folded := map[int]string{} // node → its stack, built once
	stackOf := func(id int) string {
		if s, ok := folded[id]; ok {
			return s
		}
		var frames []string
		for at, ok := id, true; ok; at, ok = parent[at] {
			if n := name[at]; !v8Skipped[n] {
				frames = append(frames, n)
			}
		}
		for i, j := 0, len(frames)-1; i < j; i, j = i+1, j-1 {
			frames[i], frames[j] = frames[j], frames[i]
		}
		s := strings.Join(frames, ";")
		folded[id] = s
		return s
	}
	t := p.StartTime
	for i, id := range p.Samples {
		if i < len(p.TimeDeltas) {
			t += p.TimeDeltas[i]
		}
		if v8Skipped[name[id]] {
			continue
		}
		if t < from || t > to {
			outside++
			continue
		}
		if s := stackOf(id); s != "" {
			stacks[s]++
		}
	}
	return outside
}

// shortURL keeps what names a script: the package path below node_modules, or the file's
// name for the application's own, node:internal/… as it is.
func shortURL(u string) string {
	u = strings.TrimPrefix(u, "file://")
	if i := strings.LastIndex(u, "node_modules/"); i >= 0 {
		return u[i+len("node_modules/"):]
	}
	if strings.HasPrefix(u, "node:") {
		return u
	}
	return filepath.Base(u)
}
