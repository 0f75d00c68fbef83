package lab

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/arena-lab/arena/internal/results"
)

// capHeadroomMB is what a memory cap allows beyond the heap: a runtime's own needs (code,
// metaspace, thread stacks, direct buffers) without which a healthy server would die.
const capHeadroomMB = 512

// memCap is the cap a capped cell runs under: a memory cgroup of the heap + capHeadroomMB
// where the lab can make one, else only the runtime's own heap limit, with why.
type memCap struct {
	cg     *memCgroup
	heapMB int
	why    string // "" when the cgroup holds the process
}

// capMemory puts pid (and the children it makes later) under a cap for a heap of heapMB.
func capMemory(name string, pid, heapMB int) *memCap {
	cg, err := hostCgroups.newMemCgroup(name, heapMB+capHeadroomMB)
	if err == nil {
		if err = cg.add(pid); err != nil {
			cg.remove()
		}
	}
	if err != nil {
		return &memCap{heapMB: heapMB, why: err.Error()}
	}
	return &memCap{cg: cg, heapMB: heapMB}
}

// record is the cap as the results keep it: the cgroup's figures, or the heap and why.
func (m *memCap) record() *results.Memory {
	if m.cg == nil {
		return &results.Memory{CapMB: float64(m.heapMB), By: results.MemoryByHeap, Why: m.why}
	}
	return m.cg.record()
}

// release removes the cgroup once its processes are gone.
func (m *memCap) release() {
	if m.cg != nil {
		m.cg.remove()
	}
}

// cgroups is where the lab finds its cgroups: the host's, or a fake tree in tests.
type cgroups struct {
	self  string // /proc/self/cgroup: arena's own groups
	mount string // where the hierarchies are mounted
	pid   int    // arena's pid, which names its groups
	// rmdir removes a group; the kernel lets a group's folder go with its files in it.
	rmdir func(string) error
	// moved is the v2 leaf arena moved itself into to hand the memory controller down, and
	// from is the group it came from: restore moves it back.
	moved, from string
}

var hostCgroups = &cgroups{self: "/proc/self/cgroup", mount: "/sys/fs/cgroup", pid: os.Getpid(), rmdir: os.Remove}

// memCgroup is a memory cgroup around one contender's process tree, made under arena's own
// group so that it needs no more rights than arena has: running out of memory kills the
// contender at its cap, not something else on the machine. On cgroup v1 it lives in the
// memory hierarchy; on v2 (the unified hierarchy most current distributions have alone) in
// the subtree delegated to arena, capped by memory.max.
type memCgroup struct {
	dir   string
	capMB int
	v2    bool
	rmdir func(string) error
}

// groupName is a group's folder: arena's pid first, so that a later arena can tell a group
// left by a dead one.
func (cs *cgroups) groupName(what string) string { return fmt.Sprintf("arena-%d-%s", cs.pid, what) }

// newMemCgroup makes a group of capMB for name; an error says why it cannot (no memory
// controller arena may use, no rights).
func (cs *cgroups) newMemCgroup(name string, capMB int) (*memCgroup, error) {
	parent, v2, err := cs.memoryParent()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(parent, cs.groupName(name))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("making a memory cgroup: %w", err)
	}
	cg := &memCgroup{dir: dir, capMB: capMB, v2: v2, rmdir: cs.rmdir}
	limit := strconv.FormatInt(int64(capMB)<<20, 10)
	limitFile := "memory.limit_in_bytes"
	if v2 {
		limitFile = "memory.max"
	}
	if err := os.WriteFile(filepath.Join(dir, limitFile), []byte(limit), 0o644); err != nil {
		cg.remove()
		return nil, fmt.Errorf("setting the memory cap: %w", err)
	}
	// swap would let the group outgrow its cap slowly instead of meeting it; where the
	// kernel accounts swap, cap it alike (absent files are fine)
	if v2 {
		_ = os.WriteFile(filepath.Join(dir, "memory.swap.max"), []byte("0"), 0o644)
	} else {
		_ = os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(limit), 0o644)
		_ = os.WriteFile(filepath.Join(dir, "memory.swappiness"), []byte("0"), 0o644)
	}
	return cg, nil
}

// memoryParent is the folder arena may make memory groups in: its own group of the v1
// memory hierarchy, or its own v2 group once the memory controller is enabled for its
// children there.
func (cs *cgroups) memoryParent() (string, bool, error) {
	v1, v2, err := cs.own()
	if err != nil {
		return "", false, err
	}
	if v1 != "" {
		dir := filepath.Join(cs.mount, "memory", v1)
		if _, err := os.Stat(filepath.Join(dir, "memory.limit_in_bytes")); err != nil {
			return "", false, fmt.Errorf("no cgroup-v1 memory controller at %s: %w", filepath.Join(cs.mount, "memory"), err)
		}
		return dir, false, nil
	}
	if v2 == "" {
		return "", false, errors.New("no memory cgroup: neither a cgroup-v1 memory hierarchy nor cgroup v2")
	}
	dir := filepath.Join(cs.mount, v2)
	if err := cs.enableMemory(dir); err != nil {
		return "", true, err
	}
	return dir, true, nil
}

// own reads /proc/self/cgroup: arena's path in the v1 memory hierarchy, and in the v2 one.
func (cs *cgroups) own() (v1, v2 string, err error) {
	f, err := os.Open(cs.self)
	if err != nil {
		return "", "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		switch {
		case len(parts) != 3:
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			v1 = parts[2]
		}
	}
	return v1, v2, sc.Err()
}

// delegateHint is how a user gives arena a subtree of its own where systemd owns cgroup v2.
const delegateHint = "run arena in a delegated scope: systemd-run --user --scope -p Delegate=yes ./arena …"

// enableMemory makes the memory controller available to dir's children. A v2 group with
// processes may not hand controllers down (the no-internal-processes rule), so arena first
// moves itself into a leaf of its own; it does so only where it is alone in its group.
func (cs *cgroups) enableMemory(dir string) error {
	if has(filepath.Join(dir, "cgroup.subtree_control"), "memory") {
		return nil
	}
	if !has(filepath.Join(dir, "cgroup.controllers"), "memory") {
		return fmt.Errorf("cgroup v2 without the memory controller in arena's group %s: %s", dir, delegateHint)
	}
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return fmt.Errorf("cgroup v2: reading %s: %w", dir, err)
	}
	for _, p := range strings.Fields(string(procs)) {
		if p != strconv.Itoa(cs.pid) {
			return fmt.Errorf("cgroup v2: arena shares its group %s with other processes, so it cannot hand the memory controller down: %s", dir, delegateHint)
		}
	}
	leaf := filepath.Join(dir, cs.groupName("self"))
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("cgroup v2: making a group for arena itself in %s: %w (%s)", dir, err, delegateHint)
	}
	self := []byte(strconv.Itoa(cs.pid))
	if err := os.WriteFile(filepath.Join(leaf, "cgroup.procs"), self, 0o644); err != nil {
		_ = cs.rmdir(leaf)
		return fmt.Errorf("cgroup v2: moving arena into %s: %w (%s)", leaf, err, delegateHint)
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte("+memory"), 0o644); err != nil {
		_ = os.WriteFile(filepath.Join(dir, "cgroup.procs"), self, 0o644)
		_ = cs.rmdir(leaf)
		return fmt.Errorf("cgroup v2: enabling the memory controller in %s: %w (%s)", dir, err, delegateHint)
	}
	cs.moved, cs.from = leaf, dir
	return nil
}

// restore undoes enableMemory once every contender's group is gone: the memory controller
// handed back, arena back in its own group, its leaf removed.
func (cs *cgroups) restore() {
	if cs.moved == "" {
		return
	}
	_ = os.WriteFile(filepath.Join(cs.from, "cgroup.subtree_control"), []byte("-memory"), 0o644)
	_ = os.WriteFile(filepath.Join(cs.from, "cgroup.procs"), []byte(strconv.Itoa(cs.pid)), 0o644)
	if cs.rmdir(cs.moved) == nil {
		cs.moved, cs.from = "", ""
	}
}

// has says whether a cgroup file of words (cgroup.controllers, cgroup.subtree_control) names w.
func has(path, w string) bool {
	raw, err := os.ReadFile(path)
	return err == nil && slices.Contains(strings.Fields(string(raw)), w)
}

// add moves a process (and so the children it makes later) into the group.
func (cg *memCgroup) add(pid int) error {
	return os.WriteFile(filepath.Join(cg.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
}

// record reads the group's high-water mark and the kills at its cap.
func (cg *memCgroup) record() *results.Memory {
	m := &results.Memory{CapMB: float64(cg.capMB), By: results.MemoryByCgroup}
	peak, events, kills := "memory.max_usage_in_bytes", "memory.oom_control", "oom_kill"
	if cg.v2 {
		peak, events = "memory.peak", "memory.events"
	}
	if raw, err := os.ReadFile(filepath.Join(cg.dir, peak)); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil {
			m.MaxUsedMB = float64(n) / (1 << 20)
		}
	}
	if raw, err := os.ReadFile(filepath.Join(cg.dir, events)); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, " "); ok && k == kills {
				m.OOMKills, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
	}
	return m
}

// remove deletes the group once its processes are gone.
func (cg *memCgroup) remove() { _ = cg.rmdir(cg.dir) }

// staleGroup matches the groups arena makes, with the pid of the arena that made them.
var staleGroup = regexp.MustCompile(`^arena-(\d+)-`)

// sweepStaleCgroups removes the memory groups that arenas no longer running left behind (one
// killed outright, say), and says what it removed or could not.
func sweepStaleCgroups() []string { return hostCgroups.sweep() }

func (cs *cgroups) sweep() []string {
	v1, v2, err := cs.own()
	if err != nil {
		return nil
	}
	var parents []string
	if v1 != "" {
		parents = append(parents, filepath.Join(cs.mount, "memory", v1))
	}
	if v2 != "" && v1 == "" {
		// arena may run in its own leaf, arena-<pid>-self: stale groups are beside it
		dir := filepath.Join(cs.mount, v2)
		if staleGroup.MatchString(filepath.Base(dir)) {
			dir = filepath.Dir(dir)
		}
		parents = append(parents, dir)
	}
	var notes []string
	for _, parent := range parents {
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			m := staleGroup.FindStringSubmatch(e.Name())
			if !e.IsDir() || m == nil {
				continue
			}
			if pid, _ := strconv.Atoi(m[1]); pid == cs.pid || running(pid) {
				continue
			}
			dir := filepath.Join(parent, e.Name())
			if err := cs.rmdir(dir); err != nil {
				notes = append(notes, fmt.Sprintf("a memory cgroup left by an arena no longer running could not be removed: %s: %v", dir, err))
			} else {
				notes = append(notes, "removed a memory cgroup left by an arena no longer running: "+dir)
			}
		}
	}
	return notes
}

// running says whether a process of that pid exists.
func running(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// outOfMemory reads a dead contender's log for its runtime's own out-of-memory end.
func outOfMemory(tail []string) bool {
	for _, line := range tail {
		for _, sign := range []string{"OutOfMemoryError", "JavaScript heap out of memory", "runtime: out of memory", "Cannot allocate memory", "OutOfDirectMemoryError"} {
			if strings.Contains(line, sign) {
				return true
			}
		}
	}
	return false
}
