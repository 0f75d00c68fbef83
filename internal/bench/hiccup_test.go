package bench

import (
	"context"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A quarter second's spin comes back with its CPU, its length and nested counts; a context
// already done ends it at once.
func TestHiccupsMeasureTheCoreTheyRunOn(t *testing.T) {
	h := MeasureHiccups(context.Background(), 250*time.Millisecond)
	if h.CPU < 0 || h.Seconds < 0.25 || h.Seconds > 1 {
		t.Fatalf("hiccups %+v: want a CPU and about 0.25 s", h)
	}
	if h.Over5ms > h.Over1ms || h.Over1ms > h.Over100 || h.MaxMs < 0 || h.Loaded {
		t.Fatalf("hiccups %+v: counts must nest (over 5 ms ≤ over 1 ms ≤ over 100 µs)", h)
	}
	if h.Over1ms > 0 && h.LostMs < float64(h.Over1ms) {
		t.Fatalf("hiccups %+v: %d gaps over 1 ms lost only %.1f ms", h, h.Over1ms, h.LostMs)
	}
	// A context already done ends the spin at once.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if h := MeasureHiccups(ctx, time.Minute); h.Seconds > 1 {
		t.Fatalf("a cancelled spin ran %.1f s", h.Seconds)
	}
}

// A second thread spinning on the same core takes about half of it: the meter loses that
// time in gaps of the scheduler's slices, each well over a millisecond.
func TestHiccupsSeeAThreadThatSharesTheCore(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	cpu := -1
	for c := 0; c < len(set)*64 && cpu < 0; c++ {
		if set.IsSet(c) {
			cpu = c
		}
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 3)))
	const d = 500 * time.Millisecond
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var one, was unix.CPUSet
		_ = unix.SchedGetaffinity(0, &was)
		defer func() { _ = unix.SchedSetaffinity(0, &was) }()
		one.Set(cpu)
		_ = unix.SchedSetaffinity(0, &one)
		for start := time.Now(); time.Since(start) < d+100*time.Millisecond; {
		}
	}()
	h := MeasureHiccups(context.Background(), d)
	<-done
	if h.CPU != cpu || h.Over1ms < 1 || h.LostMs < 0.2*float64(d.Milliseconds()) {
		t.Fatalf("hiccups %+v beside a spinning thread on CPU %d: want gaps over 1 ms losing a fifth of %v or more", h, cpu, d)
	}
}
