package lab

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ParseCPUs reads a taskset-style list ("1", "0-1", "0,2-3") and checks every CPU is one
// this process may use.
func ParseCPUs(list string) ([]int, error) {
	allowed, err := AllowedCPUs()
	if err != nil {
		return nil, err
	}
	var cpus []int
	for _, part := range strings.Split(list, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.Atoi(lo)
		b := a
		var err2 error
		if isRange {
			b, err2 = strconv.Atoi(hi)
		}
		if err1 != nil || err2 != nil || a < 0 || b < a {
			return nil, fmt.Errorf("CPU list %q: %q is not a CPU number or range like 0-1", list, part)
		}
		// Checked CPU by CPU as the range expands, so that a typo like 0-4000000000 fails
		// at its first unavailable CPU rather than expanding billions of them.
		for c := a; c <= b; c++ {
			if !slices.Contains(allowed, c) {
				return nil, fmt.Errorf("CPU list %q: CPU %d is not available here (available: %s)", list, c, FormatCPUs(allowed))
			}
			if !slices.Contains(cpus, c) {
				cpus = append(cpus, c)
			}
		}
	}
	slices.Sort(cpus)
	return cpus, nil
}

// AllowedCPUs are the CPUs this process may run on.
func AllowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("reading CPU affinity: %w", err)
	}
	var out []int
	for c := 0; c < 1024; c++ {
		if set.IsSet(c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// FormatCPUs writes a list back in taskset's form.
func FormatCPUs(cpus []int) string {
	parts := make([]string, len(cpus))
	for i, c := range cpus {
		parts[i] = strconv.Itoa(c)
	}
	return strings.Join(parts, ",")
}

// PinSelf confines every thread of this process (and the threads it makes later, which
// inherit the mask) to cpus, and sizes the Go scheduler to match: the client then competes
// for its own cores only.
func PinSelf(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	tids, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return err
	}
	for _, t := range tids {
		tid, err := strconv.Atoi(filepath.Base(t.Name()))
		if err != nil {
			continue
		}
		if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
			return fmt.Errorf("pinning the client to CPUs %s: %w", FormatCPUs(cpus), err)
		}
	}
	runtime.GOMAXPROCS(len(cpus))
	return nil
}
