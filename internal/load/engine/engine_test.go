package engine

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arena-lab/arena/internal/load"
)

// Loops 0: one loop per CPU the process may run on (the lab pins the client first).
func TestNewTakesOneLoopPerAllowedCPUByDefault(t *testing.T) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Skip(err)
	}
	e, err := New("127.0.0.1:1", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Loops() != set.Count() {
		t.Fatalf("%d loops; the process may run on %d CPUs", e.Loops(), set.Count())
	}
	if e, _ := New("127.0.0.1:1", Options{Loops: 3}); e.Loops() != 3 {
		t.Fatalf("%d loops; asked for 3", e.Loops())
	}
}

func TestNewRejectsAnAddressWithoutPort(t *testing.T) {
	if _, err := New("127.0.0.1", Options{}); err == nil {
		t.Fatal("no error for an address without a port")
	}
}

// The closed loop's count and connections are dealt out among the loops with evenPart:
// nothing lost, nothing added, no part more than one larger than another.
func TestEvenPartSplitsACountExactly(t *testing.T) {
	for total := int64(0); total < 50; total++ {
		for n := int64(1); n < 9; n++ {
			var sum, lo, hi int64 = 0, total, 0
			for i := int64(0); i < n; i++ {
				p := evenPart(total, i, n)
				sum += p
				lo, hi = min(lo, p), max(hi, p)
			}
			if sum != total || hi-lo > 1 {
				t.Fatalf("%d in %d parts: sum %d, parts from %d to %d", total, n, sum, lo, hi)
			}
		}
	}
}

// The loop's timers and backlogs are rings: first in, first out, across their growth
// and wrap-around.
func TestRingIsFirstInFirstOutAcrossGrowth(t *testing.T) {
	var r ring[int]
	next, want := 0, 0
	for round := 0; round < 50; round++ {
		for i := 0; i < round%7+1; i++ {
			r.push(next)
			next++
		}
		for i := 0; i < round%5 && r.len() > 0; i++ {
			if v, _ := r.peek(); v != want {
				t.Fatalf("peek %d; want %d", v, want)
			}
			if v, ok := r.pop(); !ok || v != want {
				t.Fatalf("pop %d %v; want %d", v, ok, want)
			}
			want++
		}
	}
	for r.len() > 0 {
		if v, _ := r.pop(); v != want {
			t.Fatalf("pop %d; want %d", v, want)
		}
		want++
	}
	if want != next {
		t.Fatalf("popped %d of %d", want, next)
	}
	if _, ok := r.pop(); ok {
		t.Fatal("pop from an empty ring")
	}
}

// The engine as the lab makes it (one loop per CPU), in both loops, on a Go server.
func TestEngineWithDefaultLoopsCountsEveryAnswer(t *testing.T) {
	addr := healthy(t)
	e := newEngine(t, addr, 0)
	r := runClosed(t, e, load.ClosedLoop{Request: load.Request{Path: "/small"}, Connections: 4, Requests: 1000, Timeout: time.Second})
	wantCounts(t, r, 1000, counts{"2xx": 1000}, nil)
	o := runOpen(t, e, load.Stream{Request: load.Request{Path: "/small"}, Pacer: load.PerSecond(1000), Connections: 4}, 500*time.Millisecond, time.Second)
	wantCounts(t, o, 500, counts{"2xx": 500}, nil)
}
