package probe

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// The testdata logs are real: Temurin 25 running a small allocating program (it keeps one
// array in fifty, clears them halfway and calls System.gc()) with the lab's flag,
// -Xlog:gc:file=…:time,uptimemillis,level,tags, under each collector; the gcstar one with
// -Xlog:gc* (every gc tag set, whose detail lines must be passed over).

func parseFile(t *testing.T, name string) []GCEvent {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events, err := ParseGCLog(f)
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func at(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(gcTime, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestParseGCLogSerial(t *testing.T) {
	events := parseFile(t, "gclog-temurin25-serial.log")
	if len(events) != 47 { // the log's 48 lines less the "Using Serial" banner
		t.Fatalf("%d collections, want 47", len(events))
	}
	want := GCEvent{At: at(t, "2026-11-28T16:01:23.777+0000"), ID: 0, Cause: "Pause Young (Allocation Failure)",
		BeforeMB: 18, AfterMB: 1, HeapMB: 61, Ms: 1.321, Pause: true}
	if !events[0].At.Equal(want.At) || events[0].ID != want.ID || events[0].Cause != want.Cause || events[0].BeforeMB != want.BeforeMB ||
		events[0].AfterMB != want.AfterMB || events[0].HeapMB != want.HeapMB || events[0].Ms != want.Ms || !events[0].Pause {
		t.Errorf("first collection %+v, want %+v", events[0], want)
	}
	if events[0].Full() {
		t.Error("a young collection read as full")
	}
	full := events[24]
	if full.ID != 24 || full.Cause != "Pause Full (System.gc())" || !full.Full() || full.BeforeMB != 18 || full.AfterMB != 3 || full.Ms != 9.516 {
		t.Errorf("GC(24) read as %+v, want the full collection 18M->3M in 9.516 ms", full)
	}
	if last := events[46]; last.ID != 46 || last.AfterMB != 10 {
		t.Errorf("last collection %+v, want GC(46) leaving 10M", last)
	}
}

func TestParseGCLogOtherCollectors(t *testing.T) {
	g1 := parseFile(t, "gclog-temurin25-g1.log")
	if len(g1) != 23 {
		t.Fatalf("G1: %d collections, want 23", len(g1))
	}
	if e := g1[12]; e.Cause != "Pause Full (System.gc())" || !e.Full() || e.AfterMB != 1 || e.HeapMB != 64 || e.Ms != 21.081 {
		t.Errorf("G1's full collection read as %+v", e)
	}
	if e := g1[0]; e.Cause != "Pause Young (Normal) (G1 Evacuation Pause)" || e.BeforeMB != 8 || e.AfterMB != 1 {
		t.Errorf("G1's first collection read as %+v", e)
	}
	// ZGC: a start line without sizes, then the end with shares of the heap and the cycle's
	// length in seconds, concurrent: no pause, no committed size.
	z := parseFile(t, "gclog-temurin25-z.log")
	if len(z) != 5 {
		t.Fatalf("ZGC: %d collections, want 5 (the start lines skipped)", len(z))
	}
	if e := z[0]; e.Cause != "Major Collection (Warmup)" || !e.Full() || e.Pause || e.BeforeMB != 8 || e.AfterMB != 14 || e.HeapMB != 0 || math.Abs(e.Ms-41) > 1e-9 {
		t.Errorf("ZGC's first collection read as %+v", e)
	}
	if e := z[3]; e.Cause != "Minor Collection (Allocation Rate)" || e.Full() || e.AfterMB != 18 {
		t.Errorf("ZGC's minor collection read as %+v", e)
	}
}

// Under -Xlog:gc* the gc,heap lines carry sizes too (DefNew: 17472K(19648K)->420K(19648K)):
// only the summary line of the gc tag alone is a collection.
func TestParseGCLogSkipsDetail(t *testing.T) {
	events := parseFile(t, "gclog-temurin25-serial-gcstar.log")
	if len(events) != 6 {
		t.Fatalf("%d collections, want the 6 summary lines of tag gc", len(events))
	}
	for i, e := range events {
		if e.ID != i || e.HeapMB != 61 {
			t.Errorf("collection %d read as %+v", i, e)
		}
	}
}

func TestParseGCLogEdges(t *testing.T) {
	cases := []struct {
		line string
		ok   bool
		want GCEvent
	}{
		{"[2026-11-28T16:01:23.777+0000][146ms][info][gc] GC(7) Pause Young (Allocation Failure) 1536K->512K(2G) 0.5ms", true,
			GCEvent{ID: 7, BeforeMB: 1.5, AfterMB: 0.5, HeapMB: 2048, Ms: 0.5, Pause: true}},
		{"[2026-11-28T16:01:23.777+0000] GC(8) Pause Full (Allocation Failure) 3G->1G(4G) 1.5s", true, // no tags decorator
			GCEvent{ID: 8, BeforeMB: 3072, AfterMB: 1024, HeapMB: 4096, Ms: 1500, Pause: true}},
		{"[2026-11-28T16:01:23.777+0000][gc] GC(9) Pause Young (Allocation Failure) 18M->1M(61M)", true, // no duration
			GCEvent{ID: 9, BeforeMB: 18, AfterMB: 1, HeapMB: 61, Pause: true}},
		{"[146ms][info][gc] GC(0) Pause Young (Allocation Failure) 18M->1M(61M) 1.321ms", false, GCEvent{}}, // no wall clock
		{"[2026-11-28T16:01:23.777+0000][info][gc] Using Serial", false, GCEvent{}},
		{"[2026-11-28T16:01:23.777+0000][info][gc,start] GC(3) Pause Young (Allocation Failure)", false, GCEvent{}},
		{"[2026-11-28T16:01:23.777+0000][info][gc,heap] GC(0) Tenured: 1166K(43712K)->1166K(43712K)", false, GCEvent{}},
		// A line of another tag set that reads like a summary is still another tag's.
		{"[2026-11-28T16:01:23.777+0000][info][gc,phases] GC(5) Pause Young (Allocation Failure) 18M->1M(61M) 1ms", false, GCEvent{}},
		{"[2026-11-28T16:01:23.777+0000][info][gc] GC(4) Pause Young (Allocation Failure) 18M->1", false, GCEvent{}}, // cut off
		{"[2026-11-28T16:01:23.777+0000][info][gc] GC(99999999999999999999) Pause Young 18M->1M(61M) 1ms", false, GCEvent{}},
		{"[2026-11-28T16:01:23.777+0000", false, GCEvent{}},
		{"", false, GCEvent{}},
	}
	for _, c := range cases {
		e, ok := parseGCLine(c.line)
		if ok != c.ok {
			t.Errorf("%q: read %v, want %v", c.line, ok, c.ok)
			continue
		}
		if ok && (e.ID != c.want.ID || e.BeforeMB != c.want.BeforeMB || e.AfterMB != c.want.AfterMB || e.HeapMB != c.want.HeapMB ||
			math.Abs(e.Ms-c.want.Ms) > 1e-9 || e.Pause != c.want.Pause) {
			t.Errorf("%q: read %+v, want %+v", c.line, e, c.want)
		}
	}
}

func gcLogLine(at time.Time, id int, before, after float64) string {
	return fmt.Sprintf("[%s][info][gc] GC(%d) Pause Young (Allocation Failure) %.0fM->%.0fM(494M) 1.000ms\n", at.Format(gcTime), id, before, after)
}

// HotSpot rotates the log at each start and at its size, overwriting the oldest file: the
// collections of all files come back in time order, and other files beside it are not read.
func TestReadGCLogsRotated(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "vertx-r2-u5-r1.gc.log")
	t0 := at(t, "2026-11-28T16:00:00.000+0000")
	write := func(name string, ids ...int) {
		var b strings.Builder
		for _, id := range ids {
			b.WriteString(gcLogLine(t0.Add(time.Duration(id)*time.Second), id, 100, float64(id)))
		}
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(path+".1", 4, 5)
	write(path+".0", 0, 1, 2, 3)
	write(path, 6)
	write(path+".bak", 99)
	events, err := ReadGCLogs(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 7 {
		t.Fatalf("%d collections, want 7 (path.bak not read)", len(events))
	}
	for i, e := range events {
		if e.ID != i {
			t.Fatalf("collection %d is GC(%d): not in time order", i, e.ID)
		}
	}
	if _, err := ReadGCLogs(filepath.Join(dir, "none.gc.log")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing log: %v, want fs.ErrNotExist", err)
	}
}

func TestHeapOf(t *testing.T) {
	events := parseFile(t, "gclog-temurin25-serial.log")
	// The "load" from GC(10) to GC(30): those before and after it are the warm-up's and the stop's.
	start := events[10].At.Add(-time.Millisecond)
	span := events[30].At.Sub(start) + time.Millisecond
	h := HeapOf(events, start, span, 250*time.Millisecond)
	if h.Unread != "" || h.Collections != 21 || len(h.Timeline) != 21 || h.ThinnedS != 0 {
		t.Fatalf("heap %+v, want the 21 collections GC(10)…GC(30), every one kept", h)
	}
	if h.FullCollections != 1 || !h.Timeline[14].Full { // GC(24)
		t.Errorf("full collections %d, GC(24) full %v", h.FullCollections, h.Timeline[14].Full)
	}
	if h.MaxAfterMB != 9 || h.EndAfterMB != events[30].AfterMB {
		t.Errorf("after max %v end %v, want 9 and %v", h.MaxAfterMB, h.EndAfterMB, events[30].AfterMB)
	}
	if p := h.Timeline[0]; math.Abs(p.T-0.001) > 1e-9 || p.BeforeMB != 21 || p.AfterMB != 4 || p.HeapMB != 61 || p.PauseMs != 0.958 {
		t.Errorf("first point %+v, want GC(10) 1 ms into the load", p)
	}
	n := h.Numbers()
	if n[results.NumberLiveHeapMax] != 9 || n[results.NumberLiveHeapEnd] != h.EndAfterMB || len(n) != 2 {
		t.Errorf("numbers %v", n)
	}
	var c results.Cell
	c.PutHeap(h)
	if c.Numbers[results.NumberLiveHeapMax] != 9 || c.Heap != h {
		t.Errorf("cell numbers %v", c.Numbers)
	}

	// A load without a collection: no figure and why, never a zero.
	quiet := HeapOf(events, events[46].At.Add(time.Second), 10*time.Second, 250*time.Millisecond)
	if quiet.Collections != 0 || !strings.Contains(quiet.Unread, "no collection during the load (47 in the log outside it)") || quiet.Numbers() != nil {
		t.Errorf("a load without collections: %+v", quiet)
	}
	var none results.Cell
	none.PutHeap(quiet)
	if _, ok := none.Numbers[results.NumberLiveHeapMax]; ok {
		t.Error("a load without collections put a live-heap number")
	}
}

// Beyond MaxHeapPoints the timeline is thinned, and its highest and last collections stay.
func TestHeapOfThins(t *testing.T) {
	t0 := at(t, "2026-11-28T16:00:00.000+0000")
	var events []GCEvent
	for i := range 6000 { // a collection every 50 ms over 300 s
		events = append(events, GCEvent{At: t0.Add(time.Duration(i) * 50 * time.Millisecond), ID: i, BeforeMB: 200,
			AfterMB: 40 + float64(i%7), Pause: true, Ms: 1})
	}
	events[3001].AfterMB = 300
	events[5999].AfterMB = 1
	h := HeapOf(events, t0, 300*time.Second, 250*time.Millisecond)
	if h.Collections != 6000 || h.PauseMsTotal != 6000 || h.MaxAfterMB != 300 || h.EndAfterMB != 1 {
		t.Fatalf("heap %+v: its figures must be the whole load's", h)
	}
	if len(h.Timeline) > results.MaxHeapPoints || len(h.Timeline) < results.MaxHeapPoints/2 || h.ThinnedS < 0.25 {
		t.Fatalf("%d points thinned to %v s, want at most %d", len(h.Timeline), h.ThinnedS, results.MaxHeapPoints)
	}
	highest, last := 0.0, h.Timeline[len(h.Timeline)-1]
	for _, p := range h.Timeline {
		highest = max(highest, p.AfterMB)
	}
	if highest != 300 || last.AfterMB != 1 || math.Abs(last.T-299.95) > 1e-9 {
		t.Errorf("thinned timeline lost its highest (%v) or its last (%+v)", highest, last)
	}
}

// FuzzParseGCLog: whatever the log holds, the parser neither panics nor reads a negative or
// infinite size or duration.
func FuzzParseGCLog(f *testing.F) {
	for _, name := range []string{"gclog-temurin25-serial.log", "gclog-temurin25-g1.log", "gclog-temurin25-z.log", "gclog-temurin25-serial-gcstar.log"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		for _, l := range strings.SplitN(string(b), "\n", 8) {
			f.Add(l)
		}
	}
	f.Add("[2026-11-28T16:01:23.777+0000][gc] GC(1) Pause Young 99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999T->1M(2M) 1ms")
	f.Fuzz(func(t *testing.T, log string) {
		events, err := ParseGCLog(strings.NewReader(log))
		if err != nil {
			return // a line beyond the scanner's limit
		}
		for _, e := range events {
			for _, v := range []float64{e.BeforeMB, e.AfterMB, e.HeapMB, e.Ms} {
				if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("%q: read %+v", log, e)
				}
			}
			if e.ID < 0 || e.At.IsZero() {
				t.Fatalf("%q: read %+v", log, e)
			}
		}
	})
}
