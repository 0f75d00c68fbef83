// Package probe samples a process tree's (or a cgroup's processes') (CPU, RSS, threads, context switches,
// open files) on a fixed period, on the same clock as the load engine's timeline.
package probe

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/shirou/gopsutil/v4/process"

	"github.com/arena-lab/arena/internal/results"
)

// raw is a sample with the cumulative counters its rates are computed from.
type raw struct {
	results.Sample
	cpuSeconds [2]float64 // user, system
	switches   [2]int64   // voluntary, involuntary
}

// Probe samples one process (and, for a tree, its descendants) until stopped.
type Probe struct {
	root    int32
	tree    bool
	cgroup  string // the cgroup whose processes are sampled, in place of a root
	start   time.Time
	period  time.Duration
	mu      sync.Mutex
	samples []results.Sample
	exits   []Exit
	stop    context.CancelFunc
	done    chan struct{}
}

// Exit is a descendant of the root that died while the probe watched: a process of a server's
// tree gone while the server lives on (a cluster's worker, say, even if its primary makes
// another).
type Exit struct {
	Pid  int32
	Name string  // its command, as /proc knew it
	T    float64 // seconds since start, when the probe saw it gone
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

// StartCgroup samples every process of the cgroup at dir and of the cgroups below it: a
// server the lab did not start whose processes need not share one root (a container's, a
// systemd unit's, a pod's). Each process is read as a tree's member is, so its figures and
// a contender's are alike.
func StartCgroup(dir string, start time.Time, period time.Duration) *Probe {
	p := newProbe(start, period)
	p.cgroup = dir
	return p.begin()
}

func begin(pid int, tree bool, start time.Time, period time.Duration) *Probe {
	p := newProbe(start, period)
	p.root, p.tree = int32(pid), tree
	return p.begin()
}

func newProbe(start time.Time, period time.Duration) *Probe {
	return &Probe{start: start, period: period, done: make(chan struct{})}
}

func (p *Probe) begin() *Probe {
	ctx, cancel := context.WithCancel(context.Background())
	p.stop = cancel
	go p.loop(ctx)
	return p
}

func (p *Probe) loop(ctx context.Context) {
	defer close(p.done)
	t := time.NewTicker(p.period)
	defer t.Stop()
	var prev *raw
	var prevAt time.Time
	tree := newTree(p.root, p.tree)
	tree.cgroup = p.cgroup
	tree.died = func(pid int32, name string) {
		p.mu.Lock()
		p.exits = append(p.exits, Exit{Pid: pid, Name: name, T: time.Since(p.start).Seconds()})
		p.mu.Unlock()
	}
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
				p.samples = append(p.samples, s.Sample)
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

// Stop ends sampling and returns the samples taken. A nil Probe (no process to probe: a
// server the lab was not given, arena run --target without --target-pid) has none, nor exits.
func (p *Probe) Stop() []results.Sample {
	if p == nil {
		return nil
	}
	p.stop()
	<-p.done
	return p.Samples()
}

// Exits returns the descendants seen to die so far (never the root: its end is its
// parent's to see); for a cgroup, any of its processes.
func (p *Probe) Exits() []Exit {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Exit(nil), p.exits...)
}

// Samples returns the samples so far.
func (p *Probe) Samples() []results.Sample {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]results.Sample(nil), p.samples...)
}

func nonNeg(v float64) float64 { return max(v, 0) }

// tree tracks the root's descendants; it rescans for them every second, not every sample,
// because a scan reads all of /proc and the probe runs on the client's CPU. Between scans it
// keeps the set of descendants it has seen: one missing from the next scan that is no more
// (or a zombie) died, and is reported to died.
type tree struct {
	root     int32
	walk     bool   // false: the root alone
	cgroup   string // not "": the cgroup's processes, in place of the root's tree
	members  []*process.Process
	scanned  time.Time
	rescanIn time.Duration
	known    map[int32]string // descendants seen, by pid, with their command
	died     func(pid int32, name string)
}

func newTree(root int32, walk bool) *tree {
	return &tree{root: root, walk: walk, rescanIn: time.Second, known: map[int32]string{}}
}

func (t *tree) refresh(ctx context.Context) bool {
	if t.members != nil && time.Since(t.scanned) < t.rescanIn {
		return true
	}
	if t.cgroup != "" {
		return t.refreshCgroup(ctx)
	}
	rootProc, err := process.NewProcessWithContext(ctx, t.root)
	if err != nil {
		return false
	}
	members := []*process.Process{rootProc}
	if t.walk {
		kids := childrenByParent()
		for i := 0; i < len(members); i++ {
			for _, k := range kids[members[i].Pid] {
				if kp, err := process.NewProcessWithContext(ctx, k); err == nil {
					members = append(members, kp)
				}
			}
		}
	}
	t.members, t.scanned = members, time.Now()
	t.diff(members[1:])
	return true
}

// refreshCgroup reads the cgroup's processes afresh: none (the cgroup emptied or gone) is
// nothing to sample.
func (t *tree) refreshCgroup(ctx context.Context) bool {
	pids, err := CgroupProcs(t.cgroup)
	if err != nil || len(pids) == 0 {
		t.diff(nil)
		return false
	}
	var members []*process.Process
	for _, pid := range pids {
		if m, err := process.NewProcessWithContext(ctx, pid); err == nil {
			members = append(members, m)
		}
	}
	t.members, t.scanned = members, time.Now()
	t.diff(members)
	return len(members) > 0
}

// CgroupProcs are the processes of the cgroup at dir and of every cgroup below it (a pod's
// containers are cgroups under the pod's), read from their cgroup.procs files, in cgroup v1
// and v2 alike. A dir without cgroup.procs is no cgroup.
func CgroupProcs(dir string) ([]int32, error) {
	if _, err := os.Stat(filepath.Join(dir, "cgroup.procs")); err != nil {
		return nil, fmt.Errorf("%s is no cgroup: %w", dir, err)
	}
	var pids []int32
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path == dir {
				return err
			}
			return nil // a child cgroup removed during the walk
		}
		if d.IsDir() || d.Name() != "cgroup.procs" {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		for _, f := range bytes.Fields(raw) {
			if pid, err := strconv.ParseInt(string(f), 10, 32); err == nil {
				pids = append(pids, int32(pid))
			}
		}
		return nil
	})
	return pids, err
}

// diff compares the descendants of a scan with those seen before: one gone that is no longer
// alive died (one merely moved out of the tree, by a double fork, lives on and is no death).
func (t *tree) diff(descendants []*process.Process) {
	now := map[int32]bool{}
	for _, m := range descendants {
		now[m.Pid] = true
		if _, seen := t.known[m.Pid]; !seen {
			t.known[m.Pid] = command(m.Pid)
		}
	}
	for pid, name := range t.known {
		if now[pid] {
			continue
		}
		delete(t.known, pid)
		if !alive(pid) && t.died != nil {
			t.died(pid, name)
		}
	}
}

// childrenByParent reads every process's parent in one pass over /proc (gopsutil's Children
// reads all of /proc once per member: 20 ms for a 7-process tree, on the client's CPU, long
// enough to hold the client's pacers past their send times). Zombies are left out. It yields
// now and then, so the probe's work never holds the client's one core for long.
func childrenByParent() map[int32][]int32 {
	kids := map[int32][]int32{}
	dirs, _ := os.ReadDir("/proc")
	for n, d := range dirs {
		pid, err := strconv.ParseInt(d.Name(), 10, 32)
		if err != nil {
			continue
		}
		if n%16 == 0 {
			runtime.Gosched()
		}
		raw, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// state and parent follow the command, which is in parentheses and may hold anything
		i := bytes.LastIndexByte(raw, ')')
		if i < 0 {
			continue
		}
		fields := bytes.Fields(raw[i+1:])
		if len(fields) < 2 || string(fields[0]) == "Z" {
			continue
		}
		if ppid, err := strconv.ParseInt(string(fields[1]), 10, 32); err == nil {
			kids[int32(ppid)] = append(kids[int32(ppid)], int32(pid))
		}
	}
	return kids
}

// alive says whether pid exists and is no zombie.
func alive(pid int32) bool {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(int(pid)), "stat"))
	if err != nil {
		return false
	}
	// the state follows the command, which is in parentheses and may hold anything
	i := bytes.LastIndexByte(raw, ')')
	return i < 0 || i+2 >= len(raw) || raw[i+2] != 'Z'
}

// command is a process's command name, "" once it is gone.
func command(pid int32) string {
	raw, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(int(pid)), "comm"))
	return string(bytes.TrimSpace(raw))
}

func (t *tree) sample(ctx context.Context) (raw, bool) {
	if !t.refresh(ctx) {
		return raw{}, false
	}
	var s raw
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
