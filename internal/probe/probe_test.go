package probe

import (
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// A busy child and an idle grandchild: the probe must see both processes and the busy
// loop's CPU, which only a tree walk (not the root alone) finds.
func TestProbeSeesTheWholeTree(t *testing.T) {
	cmd := exec.Command("sh", "-c", `sh -c 'while :; do :; done' & sleep 5; wait`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = exec.Command("pkill", "-P", itoa(cmd.Process.Pid)).Run()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
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
	sum := Summarise(samples, 0.5, 0)
	if sum.CPUPctMean < 30 {
		t.Fatalf("mean CPU %.0f%%; want the busy loop's near 100%%", sum.CPUPctMean)
	}
	if sum.RSSMBMax <= 0 || sum.ThreadsMax < 3 {
		t.Fatalf("summary %+v", sum)
	}
}

func TestSummariseWindowsAndIntegrates(t *testing.T) {
	s := []Sample{
		{T: 1, CPUPct: 50, UserPct: 40, SysPct: 10, RSSMB: 100, Threads: 10},
		{T: 2, CPUPct: 100, UserPct: 80, SysPct: 20, RSSMB: 200, Threads: 20},
		{T: 3, CPUPct: 0, RSSMB: 300, Threads: 5},
	}
	sum := Summarise(s, 1.5, 2.5)
	if sum.Samples != 1 || sum.CPUPctMean != 100 || sum.RSSMBMax != 200 || sum.ThreadsMax != 20 {
		t.Fatalf("%+v", sum)
	}
	all := Summarise(s, 0, 0)
	if all.UserSeconds != 0.8 || all.RSSMBMean != 200 {
		t.Fatalf("%+v", all)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// The client is probed alone: its children are the servers it measures.
func TestStartAloneLeavesChildrenOut(t *testing.T) {
	cmd := exec.Command("sh", "-c", `sh -c 'while :; do :; done' & wait`)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = exec.Command("pkill", "-P", strconv.Itoa(cmd.Process.Pid)).Run()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	p := StartAlone(cmd.Process.Pid, time.Now(), 100*time.Millisecond)
	time.Sleep(time.Second)
	samples := p.Stop()
	if len(samples) == 0 || samples[len(samples)-1].Procs != 1 {
		t.Fatalf("samples %+v; want the root alone", samples)
	}
	if sum := Summarise(samples, 0.3, 0); sum.CPUPctMean > 20 {
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
