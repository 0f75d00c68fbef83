package lab

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

func TestOtherWorkIsWhatTheLabDidNotDo(t *testing.T) {
	before, after := cpuWork{busy: 100, steal: 1}, cpuWork{busy: 107, steal: 1.5}
	// 10 s on one core: 7 s busy, 4 of them the contender's, 0.5 s stolen
	other, steal := otherWork(before, after, 4, 1, 10*time.Second)
	if other != 0.3 || steal != 0.05 {
		t.Fatalf("other %.3f, steal %.3f; want 0.3 and 0.05", other, steal)
	}
	// two cores: half the share
	if other, _ := otherWork(before, after, 4, 2, 10*time.Second); other != 0.15 {
		t.Fatalf("two cores: other %.3f, want 0.15", other)
	}
	// the probe's integration may credit the contender a little more than the CPU counted
	if other, _ := otherWork(before, after, 7.2, 1, 10*time.Second); other != 0 {
		t.Fatalf("own above busy: other %.3f, want 0", other)
	}
	if other, steal := otherWork(before, after, 0, 1, 0); other != 0 || steal != 0 {
		t.Fatal("no time, no share")
	}
}

func TestSharedWhyAppliesTheThresholds(t *testing.T) {
	server, client := sharedWhy(&results.Interference{ServerOtherPct: 8, ServerStealPct: 1, ClientOtherPct: 20}, []int{1}, []int{0})
	if server != "" || client != "" {
		t.Fatalf("under the thresholds: %q %q", server, client)
	}
	server, client = sharedWhy(&results.Interference{ServerOtherPct: 8, ServerStealPct: 3, ClientOtherPct: 40}, []int{1}, []int{0})
	if !strings.Contains(server, "other work took 11% of the server's CPU 1 (stolen by the hypervisor: 3%)") ||
		!strings.Contains(client, "other work took 40% of the client's CPU 0") {
		t.Fatalf("over them: %q %q", server, client)
	}
	if s, c := sharedWhy(nil, []int{1}, []int{0}); s != "" || c != "" {
		t.Fatal("no reading is no verdict")
	}
}

// A busy loop pinned to the server's CPU, outside the contender's tree, takes a share of it:
// the cell is marked shared_cpu, with the share it was judged on.
func TestABusyNeighbourSharesTheServersCPU(t *testing.T) {
	r, _ := duringLoad(t, "neighboured", "", 4*time.Second)
	hog := exec.Command("taskset", "-c", FormatCPUs(r.lab.ServerCPUs), "sh", "-c", "while :; do :; done")
	if err := hog.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = hog.Process.Kill(); _ = hog.Wait() }()
	c := r.wait(t)
	if c.Interference == nil || !c.SharedCPU || c.Interference.ServerOtherPct < 30 {
		t.Fatalf("shared %v (%s), interference %+v; want the busy loop's share of the server's CPU", c.SharedCPU, c.SharedCPUWhy, c.Interference)
	}
	t.Logf("recorded: shared_cpu %v: %s; %+v", c.SharedCPU, c.SharedCPUWhy, *c.Interference)
}

func TestPerCPUKernelThreads(t *testing.T) {
	for comm, want := range map[string]bool{"ksoftirqd/1": true, "kworker/1:2": true, "kworker/1:0H-events": true,
		"ksoftirqd/0": false, "kworker/u4:1": false, "kworker/10:1": false, "java": false, "migration/1": false} {
		if got := perCPUThreadOf(comm, []int{1}); got != want {
			t.Errorf("%s: %v, want %v", comm, got, want)
		}
	}
	if k := readProcSeconds([]int{0}, 0, nil).kernel; k < 0 {
		t.Fatalf("kernel work %v", k)
	}
}

// A contender busy through a load of one second is its own work, not other work: its CPU
// seconds are read at the same moments as the CPU's, so a short load is not marked shared
// (the probes' samples, 250 ms from the load's ends, once made a quarter of it "other").
// The same busy loop outside the contender's group is other work.
func TestABusyContenderInAShortLoadIsItsOwnWork(t *testing.T) {
	busy := busyGroupOnCPU1(t)
	time.Sleep(300 * time.Millisecond) // running at full speed
	l := &Lab{ServerCPUs: []int{1}, ClientCPUs: []int{0}}
	measure := func(group int) results.Interference {
		before := readCPUShares(l.ServerCPUs, l.ClientCPUs, group, nil)
		time.Sleep(time.Second)
		i := l.interference(before, readCPUShares(l.ServerCPUs, l.ClientCPUs, group, nil))
		if i == nil {
			t.Skip("no per-CPU figures in /proc/stat here")
		}
		return *i
	}
	if own := measure(busy.Process.Pid); own.ServerOtherPct > sharedServerShare*100 {
		t.Errorf("the contender's own loop counted as other work: %+v", own)
	}
	if other := measure(0); other.ServerOtherPct < 50 {
		t.Errorf("a loop outside the contender's group: %+v; want most of the CPU as other work", other)
	}
}

// A contender that ends during the load (killed at its memory cap, as a server without
// back-pressure is) takes its CPU seconds with it: the reading is no measure of other work,
// not a shared CPU.
func TestAContenderThatEndsMidLoadIsNotSharedCPU(t *testing.T) {
	busy := busyGroupOnCPU1(t)
	l := &Lab{ServerCPUs: []int{1}, ClientCPUs: []int{0}}
	before := readCPUShares(l.ServerCPUs, l.ClientCPUs, busy.Process.Pid, nil)
	if len(before.procs.serverPids) == 0 {
		t.Fatal("the contender's group was not found")
	}
	time.Sleep(time.Second)
	_ = busy.Process.Kill()
	_ = busy.Wait()
	if i := l.interference(before, readCPUShares(l.ServerCPUs, l.ClientCPUs, busy.Process.Pid, nil)); i != nil {
		t.Fatalf("a contender gone before the end measured as %+v; want no reading", *i)
	}
}

// busyGroupOnCPU1 starts a busy loop on CPU 1 in a process group of its own, as a contender
// is, and kills it when t ends.
func busyGroupOnCPU1(t *testing.T) *exec.Cmd {
	t.Helper()
	short(t)
	needTools(t, "taskset")
	busy := exec.Command("taskset", "-c", "1", "sh", "-c", "while :; do :; done")
	busy.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = busy.Process.Kill(); _ = busy.Wait() })
	return busy
}
