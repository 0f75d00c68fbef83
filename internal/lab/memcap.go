package lab

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// memCgroup is a cgroup-v1 memory group around one contender's process tree, made under
// arena's own group so that it needs no more rights than arena has: running out of memory
// kills the contender at its cap, not something else on the machine.
type memCgroup struct {
	dir   string
	capMB int
}

// memoryRoot is the memory hierarchy's mount.
const memoryRoot = "/sys/fs/cgroup/memory"

// newMemCgroup makes a group of capMB for name; an error says why it cannot (no v1 memory
// controller, no rights), and the caller falls back to the runtime's heap limit.
func newMemCgroup(name string, capMB int) (*memCgroup, error) {
	own, err := ownMemoryCgroup()
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(memoryRoot, own, fmt.Sprintf("arena-%d-%s", os.Getpid(), name))
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("making a memory cgroup: %w", err)
	}
	cg := &memCgroup{dir: dir, capMB: capMB}
	limit := strconv.FormatInt(int64(capMB)<<20, 10)
	if err := os.WriteFile(filepath.Join(dir, "memory.limit_in_bytes"), []byte(limit), 0); err != nil {
		cg.remove()
		return nil, fmt.Errorf("setting the memory cap: %w", err)
	}
	// swap would let the group outgrow its cap slowly instead of meeting it; where the
	// kernel accounts swap, cap memory+swap alike (absent files are fine)
	_ = os.WriteFile(filepath.Join(dir, "memory.memsw.limit_in_bytes"), []byte(limit), 0)
	_ = os.WriteFile(filepath.Join(dir, "memory.swappiness"), []byte("0"), 0)
	return cg, nil
}

// ownMemoryCgroup is arena's own path in the memory hierarchy, from /proc/self/cgroup.
func ownMemoryCgroup() (string, error) {
	f, err := os.Open("/proc/self/cgroup")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) == 3 && slices.Contains(strings.Split(parts[1], ","), "memory") {
			if _, err := os.Stat(filepath.Join(memoryRoot, parts[2], "memory.limit_in_bytes")); err != nil {
				return "", fmt.Errorf("no cgroup-v1 memory controller at %s: %w", memoryRoot, err)
			}
			return parts[2], nil
		}
	}
	return "", errors.New("no cgroup-v1 memory controller (cgroup v2 only, or none)")
}

// add moves a process (and so the children it makes later) into the group.
func (cg *memCgroup) add(pid int) error {
	return os.WriteFile(filepath.Join(cg.dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// record reads the group's high-water mark and the kills at its cap.
func (cg *memCgroup) record() *results.Memory {
	m := &results.Memory{CapMB: float64(cg.capMB), By: "cgroup"}
	if raw, err := os.ReadFile(filepath.Join(cg.dir, "memory.max_usage_in_bytes")); err == nil {
		if n, err := strconv.ParseInt(strings.TrimSpace(string(raw)), 10, 64); err == nil {
			m.MaxUsedMB = float64(n) / (1 << 20)
		}
	}
	if raw, err := os.ReadFile(filepath.Join(cg.dir, "memory.oom_control")); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, " "); ok && k == "oom_kill" {
				m.OOMKills, _ = strconv.Atoi(strings.TrimSpace(v))
			}
		}
	}
	return m
}

// remove deletes the group once its processes are gone.
func (cg *memCgroup) remove() { _ = os.Remove(cg.dir) }

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
