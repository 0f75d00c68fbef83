package probe

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// A busy child and an idle grandchild: the probe must see both processes and the busy
// loop's CPU, which only a tree walk (not the root alone) finds.
func TestProbeSeesTheWholeTree(t *testing.T) {
	cmd := shell(t, `sh -c 'while :; do :; done' & sleep 5; wait`)
	start := time.Now()
	p := Start(cmd.Process.Pid, start, 100*time.Millisecond)
	time.Sleep(1500 * time.Millisecond)
	samples := p.Stop()
	if len(samples) < 8 {
		t.Fatalf("%d samples in 1.5 s at 10 Hz", len(samples))
	}
	last := samples[len(samples)-1]
	if last.Procs < 3 {
		t.Fatalf("saw %d processes; want the shell, the busy loop and sleep", last.Procs)
	}
	sum := results.UsageOf(samples, 0.5, 0)
	if sum.CPUPctMean < 30 {
		t.Fatalf("mean CPU %.0f%%; want the busy loop's near 100%%", sum.CPUPctMean)
	}
	if sum.RSSMBMax <= 0 || sum.ThreadsMax < 3 {
		t.Fatalf("summary %+v", sum)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// shell starts sh -c script, and ends it and its children when the test ends.
func shell(t *testing.T, script string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command("sh", "-c", script)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exec.Command("pkill", "-P", itoa(cmd.Process.Pid)).Run()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// The client is probed alone: its children are the servers it measures.
func TestStartAloneLeavesChildrenOut(t *testing.T) {
	cmd := shell(t, `sh -c 'while :; do :; done' & wait`)
	p := StartAlone(cmd.Process.Pid, time.Now(), 100*time.Millisecond)
	time.Sleep(time.Second)
	samples := p.Stop()
	if len(samples) == 0 || samples[len(samples)-1].Procs != 1 {
		t.Fatalf("samples %+v; want the root alone", samples)
	}
	if sum := results.UsageOf(samples, 0.3, 0); sum.CPUPctMean > 20 {
		t.Fatalf("the idle root shows %.0f%% CPU: its busy child was counted", sum.CPUPctMean)
	}
}

// A load shorter than the period still gets its CPU: Stop takes a last sample.
func TestStopSamplesOnceMore(t *testing.T) {
	cmd := exec.Command("sh", "-c", `while :; do :; done`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	p := Start(cmd.Process.Pid, time.Now(), time.Hour)
	time.Sleep(300 * time.Millisecond)
	samples := p.Stop()
	if len(samples) != 1 || samples[0].CPUPct < 30 {
		t.Fatalf("samples %+v; want one final sample showing the busy loop", samples)
	}
}

// A descendant that dies while the root lives is an exit, with its command; one still
// running, and the root itself, are not.
func TestProbeSeesADescendantDie(t *testing.T) {
	cmd := shell(t, `sleep 600 & sleep 601 & wait`)
	p := Start(cmd.Process.Pid, time.Now(), 50*time.Millisecond)
	defer p.Stop()
	// both sleeps in the tree first
	kids := waitFor(t, func() []int32 {
		if s := p.Samples(); len(s) > 0 && s[len(s)-1].Procs == 3 {
			return children(t, cmd.Process.Pid)
		}
		return nil
	})
	if len(p.Exits()) != 0 {
		t.Fatalf("exits before any death: %+v", p.Exits())
	}
	victim := kids[0]
	if err := exec.Command("kill", "-KILL", itoa(int(victim))).Run(); err != nil {
		t.Fatal(err)
	}
	exits := waitFor(t, p.Exits)
	if len(exits) != 1 || exits[0].Pid != victim || exits[0].Name != "sleep" || exits[0].T <= 0 {
		t.Fatalf("exits %+v; want the sleep %d", exits, victim)
	}
}

// waitFor polls f until it returns something, for up to 10 s.
func waitFor[T any](t *testing.T, f func() []T) []T {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got := f(); len(got) > 0 {
			return got
		}
	}
	t.Fatal("nothing within 10 s")
	return nil
}

// children lists pid's children.
func children(t *testing.T, pid int) []int32 {
	out, err := exec.Command("pgrep", "-P", itoa(pid)).Output()
	if err != nil {
		t.Fatalf("pgrep: %v", err)
	}
	var pids []int32
	for _, f := range strings.Fields(string(out)) {
		n, _ := strconv.Atoi(f)
		pids = append(pids, int32(n))
	}
	return pids
}

// A cgroup's processes are those of its cgroup.procs and of every cgroup below it; a folder
// without cgroup.procs is refused as no cgroup.
func TestCgroupProcsReadsTheGroupAndBelow(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		path := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("cgroup.procs", "7\n")
	write("app/cgroup.procs", "11\n12\n")
	write("app/cgroup.threads", "11\n12\n13\n") // threads, not processes
	write("sidecar/cgroup.procs", "")
	pids, err := CgroupProcs(dir)
	slices.Sort(pids)
	if err != nil || !slices.Equal(pids, []int32{7, 11, 12}) {
		t.Fatalf("pids %v, %v; want 7, 11, 12", pids, err)
	}
	if _, err := CgroupProcs(filepath.Join(dir, "nothing")); err == nil {
		t.Error("a folder that does not exist read as a cgroup")
	}
	if _, err := CgroupProcs(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no cgroup") {
		t.Errorf("a folder without cgroup.procs: %v; want it refused as no cgroup", err)
	}
}

// A real cgroup holding two processes of no common parent but the test: both are sampled,
// the busy one's CPU seen, and one killed is an exit. Skipped where the test may not make a
// cgroup (not root, or no pids hierarchy).
func TestProbeSeesACgroup(t *testing.T) {
	dir := filepath.Join("/sys/fs/cgroup/pids", fmt.Sprintf("arena-probe-test-%d", os.Getpid()))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("no cgroup to make here (%v)", err)
	}
	busy, idle := exec.Command("sh", "-c", `while :; do :; done`), exec.Command("sleep", "600")
	for _, cmd := range []*exec.Cmd{busy, idle} {
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(itoa(cmd.Process.Pid)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, cmd := range []*exec.Cmd{busy, idle} {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		if err := os.Remove(dir); err != nil {
			t.Errorf("the test's cgroup stays: %v", err)
		}
	})
	p := StartCgroup(dir, time.Now(), 50*time.Millisecond)
	defer p.Stop()
	time.Sleep(1200 * time.Millisecond)
	samples := p.Samples()
	if len(samples) < 10 || samples[len(samples)-1].Procs != 2 {
		t.Fatalf("%d samples, last %+v; want both processes, 20 a second", len(samples), samples[len(samples)-1:])
	}
	if sum := results.UsageOf(samples, 0.3, 0); sum.CPUPctMean < 30 || sum.ThreadsMax < 2 {
		t.Fatalf("summary %+v; want the busy loop's CPU and both processes' threads", sum)
	}
	_ = idle.Process.Kill()
	_ = idle.Wait()
	exits := waitFor(t, p.Exits)
	if len(exits) != 1 || exits[0].Pid != int32(idle.Process.Pid) || exits[0].Name != "sleep" {
		t.Fatalf("exits %+v; want the sleep %d", exits, idle.Process.Pid)
	}
}
