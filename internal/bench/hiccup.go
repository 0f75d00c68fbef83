package bench

import (
	"context"
	"os/exec"
	"runtime"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arena-lab/arena/internal/results"
)

// Hiccups is what the machine took from one core while a thread did nothing but read the
// clock on it, as jHiccup measures a JVM: every gap between two readings beyond the loop's
// own sub-microsecond step is time the thread was not running (interrupts, other threads,
// the hypervisor). Its counts are a floor under any client's lateness on that core.
type Hiccups struct {
	CPU     int     `json:"cpu"`
	Seconds float64 `json:"seconds"`
	// Loaded says the server was driven meanwhile (wrk pinned to the server's CPUs), as in
	// the open loop; else the machine was idle but for this thread.
	Loaded  bool    `json:"loaded"`
	Over100 int64   `json:"gaps_over_100us"`
	Over1ms int64   `json:"gaps_over_1ms"`
	Over5ms int64   `json:"gaps_over_5ms"`
	MaxMs   float64 `json:"max_ms"`
	// LostMs is the time lost in gaps over 1 ms, in all.
	LostMs float64 `json:"lost_ms"`
}

// MeasureHiccups spins on the first CPU this process may run on for d (or until ctx ends),
// its thread locked and pinned there, and counts the gaps between clock readings.
func MeasureHiccups(ctx context.Context, d time.Duration) Hiccups {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h := Hiccups{CPU: -1}
	var was unix.CPUSet
	if unix.SchedGetaffinity(0, &was) == nil {
		for c := 0; c < len(was)*64; c++ {
			if was.IsSet(c) {
				var one unix.CPUSet
				one.Set(c)
				if unix.SchedSetaffinity(0, &one) == nil {
					h.CPU = c
					defer func() { _ = unix.SchedSetaffinity(0, &was) }() // best effort: the thread is ending
				}
				break
			}
		}
	}
	gaps := results.NewHistogram()
	start := time.Now()
	last := start
	for i := 0; ; i++ {
		now := time.Now()
		gap := now.Sub(last)
		last = now
		if gap > 20*time.Microsecond { // below, the loop's own step and the clock's noise
			_ = gaps.RecordValue(min(int64(gap), results.HistHighest))
			if gap > time.Millisecond {
				h.LostMs += float64(gap) / 1e6
			}
		}
		if now.Sub(start) >= d || (i%4096 == 0 && ctx.Err() != nil) {
			break
		}
	}
	h.Seconds = time.Since(start).Seconds()
	above := func(v time.Duration) int64 {
		var n int64
		for _, b := range gaps.Distribution() {
			if b.From > int64(v) {
				n += b.Count
			}
		}
		return n
	}
	h.Over100, h.Over1ms, h.Over5ms = above(100*time.Microsecond), above(time.Millisecond), above(5*time.Millisecond)
	h.MaxMs = float64(gaps.Max()) / 1e6
	return h
}

// HiccupsUnderLoad measures the hiccups of this process's first CPU for d while wrk, pinned
// to serverCPUs (taskset), drives the server on addr+path: the client core as the open loop
// had it, less the open loop. Without wrk the machine is measured idle, and says so.
func HiccupsUnderLoad(ctx context.Context, addr, path, serverCPUs string, d time.Duration) Hiccups {
	wrk, err := WrkPath()
	if err != nil {
		return MeasureHiccups(ctx, d)
	}
	secs := strconv.Itoa(max(int(d.Seconds()), 1) + 1) // outlasts the measurement
	cmd := exec.CommandContext(ctx, "taskset", "-c", serverCPUs, wrk, "-t1", "-c16", "-d"+secs+"s", "http://"+addr+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if cmd.Start() != nil {
		return MeasureHiccups(ctx, d)
	}
	time.Sleep(200 * time.Millisecond) // wrk connected and busy
	h := MeasureHiccups(ctx, d)
	h.Loaded = true
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	return h
}
