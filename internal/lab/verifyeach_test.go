package lab

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Jobs finishing out of order are handed over in order, and never more than jobs run at once.
func TestInOrderHandsResultsInOrder(t *testing.T) {
	var running, most atomic.Int32
	var got []int
	inOrder(context.Background(), 6, 2, func(i int) int {
		now := running.Add(1)
		for {
			m := most.Load()
			if now <= m || most.CompareAndSwap(m, now) {
				break
			}
		}
		time.Sleep(time.Duration(6-i) * 5 * time.Millisecond) // the later ones finish first
		running.Add(-1)
		return i
	}, func(i int) { got = append(got, i) })
	if want := []int{0, 1, 2, 3, 4, 5}; !slices.Equal(got, want) {
		t.Errorf("handed over %v, want %v", got, want)
	}
	if most.Load() != 2 {
		t.Errorf("%d jobs ran at once, want 2", most.Load())
	}
}

// Once the context ends, nothing more is started.
func TestInOrderStartsNothingAfterCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran atomic.Int32
	inOrder(ctx, 5, 1, func(i int) int {
		ran.Add(1)
		if i == 1 {
			cancel()
		}
		return i
	}, func(int) {})
	if ran.Load() != 2 {
		t.Errorf("%d ran, want 2 (the one that cancelled and the one before)", ran.Load())
	}
}

// Lines of several jobs come out whole, each with its job's name, however they are written.
func TestNamedLinesKeepLinesWhole(t *testing.T) {
	var out bytes.Buffer
	lw := &lineWriter{w: &out}
	a, b := lw.named("a"), lw.named("b")
	var wg sync.WaitGroup
	for _, w := range []struct {
		w    interface{ Write([]byte) (int, error) }
		text string
	}{{a, "one"}, {b, "two"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				for _, part := range []string{w.text[:1], w.text[1:], "\n"} {
					_, _ = w.w.Write([]byte(part))
				}
			}
		}()
	}
	wg.Wait()
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 100 {
		t.Fatalf("%d lines, want 100", len(lines))
	}
	for _, l := range lines {
		if l != "[a] one" && l != "[b] two" {
			t.Fatalf("a line came out broken: %q", l)
		}
	}
}
