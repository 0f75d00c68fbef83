// Package probe samples a process tree's resources (CPU, RSS, threads, context switches,
// open files) on a fixed period, on the same clock as the load engine's timeline.
package probe

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// Sample is the whole tree at one instant; rates cover the period since the last sample.
type Sample struct {
	T          float64 `json:"t"`        // seconds since the run's start
	CPUPct     float64 `json:"cpu_pct"`  // user+system, % of one core
	UserPct    float64 `json:"user_pct"` // % of one core
	SysPct     float64 `json:"sys_pct"`
	RSSMB      float64 `json:"rss_mb"`
	Threads    int32   `json:"threads"`
	Procs      int     `json:"procs"`
	FDs        int32   `json:"fds"`
	VolCSPerS  float64 `json:"vol_cs_per_s"`   // voluntary context switches per second
	InvCSPerS  float64 `json:"invol_cs_per_s"` // involuntary context switches per second
	cpuSeconds [2]float64
	switches   [2]int64
}

// Summary condenses a series of samples.
type Summary struct {
	CPUPctMean    float64 `json:"cpu_pct_mean"`
	CPUPctMax     float64 `json:"cpu_pct_max"`
	UserSeconds   float64 `json:"user_s"`
	SystemSeconds float64 `json:"system_s"`
	RSSMBMean     float64 `json:"rss_mb_mean"`
	RSSMBMax      float64 `json:"rss_mb_max"`
	ThreadsMax    int32   `json:"threads_max"`
	FDsMax        int32   `json:"fds_max"`
	VolCS         int64   `json:"vol_cs"`
	InvolCS       int64   `json:"invol_cs"`
	Samples       int     `json:"samples"`
}

// Probe samples one process (and, for a tree, its descendants) until stopped.
type Probe struct {
	root    int32
	tree    bool
	start   time.Time
	period  time.Duration
	mu      sync.Mutex
	samples []Sample
	stop    context.CancelFunc
	done    chan struct{}
}

// Start samples pid and its descendants (a server's whole tree) every period, with times
// relative to start.
func Start(pid int, start time.Time, period time.Duration) *Probe {
	return begin(pid, true, start, period)
}

// StartAlone samples pid alone: the client, whose children are the servers it measures.
func StartAlone(pid int, start time.Time, period time.Duration) *Probe {
	return begin(pid, false, start, period)
}

func begin(pid int, tree bool, start time.Time, period time.Duration) *Probe {
	ctx, cancel := context.WithCancel(context.Background())
	p := &Probe{root: int32(pid), tree: tree, start: start, period: period, stop: cancel, done: make(chan struct{})}
	go p.loop(ctx)
	return p
}

func (p *Probe) loop(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.period)
	defer t.Stop()
	var prev *Sample
	var prevAt time.Time
	tree := newTree(p.root, p.tree)
	for final := false; ; {
		now := time.Now()
		if s, ok := tree.sample(context.Background()); ok {
			s.T = now.Sub(p.start).Seconds()
			if prev != nil {
				dt := now.Sub(prevAt).Seconds()
				s.UserPct = nonNeg(s.cpuSeconds[0]-prev.cpuSeconds[0]) / dt * 100
				s.SysPct = nonNeg(s.cpuSeconds[1]-prev.cpuSeconds[1]) / dt * 100
				s.CPUPct = s.UserPct + s.SysPct
				s.VolCSPerS = nonNeg(float64(s.switches[0]-prev.switches[0])) / dt
				s.InvCSPerS = nonNeg(float64(s.switches[1]-prev.switches[1])) / dt
				p.mu.Lock()
				p.samples = append(p.samples, s)
				p.mu.Unlock()
			}
			prev, prevAt = &s, now
		}
		if final {
			return
		}
		select {
		case <-ctx.Done():
			// One last sample at the stop, so that a load shorter than the period still
			// has its CPU measured.
			final = true
		case <-t.C:
		}
	}
}

// Stop ends sampling and returns the samples taken.
func (p *Probe) Stop() []Sample {
	p.stop()
	<-p.done
	return p.Samples()
}

// Samples returns the samples so far.
func (p *Probe) Samples() []Sample {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Sample(nil), p.samples...)
}

// Summarise condenses samples taken between from and to seconds (to ≤ 0: to the end).
func Summarise(samples []Sample, from, to float64) Summary {
	var s Summary
	var cpuSum, rssSum float64
	for i, x := range samples {
		if x.T < from || (to > 0 && x.T > to) {
			continue
		}
		s.Samples++
		cpuSum += x.CPUPct
		rssSum += x.RSSMB
		s.CPUPctMax = max(s.CPUPctMax, x.CPUPct)
		s.RSSMBMax = max(s.RSSMBMax, x.RSSMB)
		s.ThreadsMax = max(s.ThreadsMax, x.Threads)
		s.FDsMax = max(s.FDsMax, x.FDs)
		if i > 0 {
			dt := x.T - samples[i-1].T
			s.UserSeconds += x.UserPct / 100 * dt
			s.SystemSeconds += x.SysPct / 100 * dt
			s.VolCS += int64(x.VolCSPerS * dt)
			s.InvolCS += int64(x.InvCSPerS * dt)
		}
	}
	if s.Samples > 0 {
		s.CPUPctMean = cpuSum / float64(s.Samples)
		s.RSSMBMean = rssSum / float64(s.Samples)
	}
	return s
}

func nonNeg(v float64) float64 { return max(v, 0) }

// tree tracks the root's descendants; it rescans for them every second, not every sample,
// because a scan reads all of /proc and the probe runs on the client's CPU.
type tree struct {
	root     int32
	walk     bool // false: the root alone
	members  []*process.Process
	scanned  time.Time
	rescanIn time.Duration
}

func newTree(root int32, walk bool) *tree {
	return &tree{root: root, walk: walk, rescanIn: time.Second}
}

func (t *tree) refresh(ctx context.Context) bool {
	if t.members != nil && time.Since(t.scanned) < t.rescanIn {
		return true
	}
	rootProc, err := process.NewProcessWithContext(ctx, t.root)
	if err != nil {
		return false
	}
	members := []*process.Process{rootProc}
	for i := 0; t.walk && i < len(members); i++ {
		kids, _ := members[i].ChildrenWithContext(ctx) // none is not an error here
		members = append(members, kids...)
	}
	t.members, t.scanned = members, time.Now()
	return true
}

func (t *tree) sample(ctx context.Context) (Sample, bool) {
	if !t.refresh(ctx) {
		return Sample{}, false
	}
	var s Sample
	alive := 0
	for _, m := range t.members {
		times, err := m.TimesWithContext(ctx)
		if err != nil {
			t.members = nil // a member exited: rescan next time
			continue
		}
		alive++
		s.cpuSeconds[0] += times.User
		s.cpuSeconds[1] += times.System
		if mem, err := m.MemoryInfoWithContext(ctx); err == nil {
			s.RSSMB += float64(mem.RSS) / (1 << 20)
		}
		if n, err := m.NumThreadsWithContext(ctx); err == nil {
			s.Threads += n
		}
		if n, err := m.NumFDsWithContext(ctx); err == nil {
			s.FDs += n
		}
		v, i := threadSwitches(m.Pid)
		s.switches[0] += v
		s.switches[1] += i
	}
	s.Procs = alive
	return s, alive > 0
}

// threadSwitches sums context switches over every thread of pid. /proc/PID/status counts
// only the main thread, which in a JVM mostly sleeps, so the threads are read one by one.
func threadSwitches(pid int32) (vol, invol int64) {
	dir := filepath.Join("/proc", strconv.Itoa(int(pid)), "task")
	tids, err := os.ReadDir(dir)
	if err != nil {
		return 0, 0
	}
	for _, tid := range tids {
		raw, err := os.ReadFile(filepath.Join(dir, tid.Name(), "status"))
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			line := sc.Bytes()
			if v, ok := field(line, "voluntary_ctxt_switches:"); ok {
				vol += v
			} else if v, ok := field(line, "nonvoluntary_ctxt_switches:"); ok {
				invol += v
			}
		}
	}
	return vol, invol
}

func field(line []byte, name string) (int64, bool) {
	if !bytes.HasPrefix(line, []byte(name)) {
		return 0, false
	}
	v, err := strconv.ParseInt(string(bytes.TrimSpace(line[len(name):])), 10, 64)
	return v, err == nil
}
