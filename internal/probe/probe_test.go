package probe

import (
	"os/exec"
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
