package load

import (
	"testing"
	"time"
)

// A live view reads each tag's latest closed window: none before the first rotation, then
// the last one with its number and length, its answers and errors, never the window still
// open.
func TestLastWindowsAreTheLatestClosed(t *testing.T) {
	start := time.Unix(1000, 0)
	rec := NewRecorder(start, nil)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	rec.Record("a", at(0), at(0), at(10), Outcome{Status: 200}, time.Second)
	if got := rec.LastWindows(); len(got) != 0 {
		t.Fatalf("before any window closed: %+v, want none", got)
	}
	if err := rec.Rotate(at(1000)); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		rec.Record("a", at(1000), at(1000), at(1020), Outcome{Status: 200}, time.Second)
	}
	rec.Record("a", at(1000), at(1000), at(1001), Outcome{Status: 503, ErrKind: ErrStatus}, time.Second)
	if err := rec.Rotate(at(2500)); err != nil {
		t.Fatal(err)
	}
	rec.Record("a", at(2500), at(2500), at(2600), Outcome{Status: 200}, time.Second) // the open window's
	got := rec.LastWindows()
	if len(got) != 1 {
		t.Fatalf("windows %+v, want one tag's", got)
	}
	w := got[0]
	if w.Tag != "a" || w.K != 1 || w.Seconds != 1.5 || w.Window.Count != 3 || w.Window.Errors != 1 {
		t.Fatalf("last window %+v: want tag a's second window, 1.5 s, 3 answers and 1 error", w)
	}
	if w.Window.P99 < 19 || w.Window.P99 > 21 {
		t.Fatalf("p99 %.2f ms, want the window's 20 ms", w.Window.P99)
	}
}
