package probe

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// GCEvent is one collection as HotSpot's unified logging (-Xlog:gc) reports it, e.g.
//
//	[2026-11-28T16:01:23.777+0000][146ms][info][gc] GC(0) Pause Young (Allocation Failure) 18M->1M(61M) 1.321ms
//
// HotSpot prints the sizes in whole units (18M), so a figure is good to 1 MiB at a heap's
// sizes.
type GCEvent struct {
	At    time.Time // the `time` decorator: the lab's wall clock
	ID    int       // GC(n), counted from the JVM's start
	Cause string    // what the line names: "Pause Young (Allocation Failure)", "Pause Full (System.gc())"
	// BeforeMB and AfterMB are the heap used before and after the collection; HeapMB the heap
	// committed after it (0 where the line gives a share of the maximum instead, as ZGC's do).
	BeforeMB, AfterMB, HeapMB float64
	// Ms is the duration the line gives: a stop-the-world pause when Pause is set, else a
	// concurrent cycle's length (ZGC's "Major Collection … 0.041s"), which stops nothing.
	Ms    float64
	Pause bool
}

// Full says the collection went over the whole heap (Serial's and Parallel's "Pause Full",
// ZGC's "Major Collection"): what it leaves is the live data alone, where a young collection
// leaves the old generation's garbage in place too.
func (e GCEvent) Full() bool {
	return strings.HasPrefix(e.Cause, "Pause Full") || strings.HasPrefix(e.Cause, "Major Collection")
}

// gcLine is the message of a collection's summary line: the id, the cause, before (with
// ZGC's share in parentheses) -> after (committed, or a share), then the duration.
var gcLine = regexp.MustCompile(`^GC\((\d+)\) (.+?) (\d+(?:\.\d+)?)([BKMGT])(?:\(\d+%\))?->(\d+(?:\.\d+)?)([BKMGT])(?:\((\d+(?:\.\d+)?)([BKMGT])\)|\(\d+%\))?(?: (\d+(?:\.\d+)?)(ms|s))?\s*$`)

// gcTime is the layout of the `time` and `utctime` decorators.
const gcTime = "2006-01-02T15:04:05.000-0700"

// ParseGCLog reads the collections of a unified GC log: lines that carry a `time`
// decorator and, when they carry their tags, the tag `gc` alone (so the detail of
// -Xlog:gc* is passed over, gc,heap's per-generation sizes included). Every other line (the
// "Using Serial" banner, a collection's start line, G1's concurrent phases) is skipped; only
// a read error is an error.
func ParseGCLog(r io.Reader) ([]GCEvent, error) {
	var events []GCEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		if e, ok := parseGCLine(sc.Text()); ok {
			events = append(events, e)
		}
	}
	return events, sc.Err()
}

func parseGCLine(line string) (GCEvent, bool) {
	var e GCEvent
	tags := ""
	for strings.HasPrefix(line, "[") {
		end := strings.IndexByte(line, ']')
		if end < 0 {
			return e, false
		}
		deco := strings.TrimSpace(line[1:end])
		line = strings.TrimLeft(line[end+1:], " ")
		if t, err := time.Parse(gcTime, deco); err == nil {
			e.At = t
		} else if deco == "gc" || strings.HasPrefix(deco, "gc,") {
			tags = deco
		}
	}
	if e.At.IsZero() || (tags != "" && tags != "gc") {
		return e, false
	}
	m := gcLine.FindStringSubmatch(line)
	if m == nil {
		return e, false
	}
	id, err := strconv.Atoi(m[1])
	if err != nil {
		return e, false
	}
	e.ID, e.Cause = id, m[2]
	e.Pause = strings.HasPrefix(e.Cause, "Pause")
	e.BeforeMB, e.AfterMB = sizeMB(m[3], m[4]), sizeMB(m[5], m[6])
	if m[7] != "" {
		e.HeapMB = sizeMB(m[7], m[8])
	}
	if m[9] != "" {
		e.Ms, _ = strconv.ParseFloat(m[9], 64) // the pattern admits only digits and a point
		if m[10] == "s" {
			e.Ms *= 1000
		}
	}
	for _, v := range []float64{e.BeforeMB, e.AfterMB, e.HeapMB, e.Ms} {
		if math.IsInf(v, 0) { // digits beyond a float's range: no size HotSpot prints
			return e, false
		}
	}
	return e, true
}

// sizeMB is HotSpot's size (digits and a unit: B, K, M, G, T, binary) in MiB.
func sizeMB(digits, unit string) float64 {
	v, _ := strconv.ParseFloat(digits, 64) // the pattern admits only digits and a point
	shift := map[string]float64{"B": 1.0 / (1 << 20), "K": 1.0 / 1024, "M": 1, "G": 1024, "T": 1 << 20}[unit]
	return v * shift
}

// ReadGCLogs reads the log at path and its rotations (path.0, path.1, …: HotSpot moves the
// file aside at each start and whenever it reaches its size, overwriting the oldest), and
// returns their collections in time order. A missing log is fs.ErrNotExist.
func ReadGCLogs(path string) ([]GCEvent, error) {
	rotated, err := filepath.Glob(globEscape(path) + ".*")
	if err != nil {
		return nil, err
	}
	files := []string{path}
	for _, f := range rotated {
		if _, err := strconv.Atoi(strings.TrimPrefix(f, path+".")); err == nil {
			files = append(files, f)
		}
	}
	var events []GCEvent
	found := false
	for _, f := range files {
		es, err := readGCLog(f)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("gc log %s: %w", f, err)
		}
		found = true
		events = append(events, es...)
	}
	if !found {
		return nil, fmt.Errorf("gc log %s: %w", path, fs.ErrNotExist)
	}
	slices.SortStableFunc(events, func(a, b GCEvent) int { return a.At.Compare(b.At) })
	return events, nil
}

func readGCLog(path string) ([]GCEvent, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseGCLog(f)
}

// globEscape quotes the characters filepath.Glob would read as a pattern.
func globEscape(path string) string {
	var b strings.Builder
	for _, r := range path {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// HeapOf is the heap figure of the collections that fell in the load, from start for span:
// every one of them on the load's clock, thinned beyond results.MaxHeapPoints to one per
// period (the probe's) or wider (results.Heap says how). Collections before the load (the
// warm-up's, an earlier start's in a rotated file) or after it are left out; none in it is
// no figure, and Unread says so, with how many the log held.
func HeapOf(events []GCEvent, start time.Time, span, period time.Duration) *results.Heap {
	h := &results.Heap{}
	end := start.Add(span)
	var points []results.HeapPoint
	for _, e := range events {
		if e.At.Before(start) || e.At.After(end) {
			continue
		}
		p := results.HeapPoint{T: e.At.Sub(start).Seconds(), BeforeMB: e.BeforeMB, AfterMB: e.AfterMB, HeapMB: e.HeapMB, Full: e.Full()}
		if e.Pause {
			p.PauseMs = e.Ms
			h.PauseMsTotal += e.Ms
			h.PauseMsMax = max(h.PauseMsMax, e.Ms)
		}
		if p.Full {
			h.FullCollections++
		}
		h.MaxAfterMB = max(h.MaxAfterMB, p.AfterMB)
		h.EndAfterMB = p.AfterMB
		points = append(points, p)
	}
	h.Collections = len(points)
	if h.Collections == 0 {
		h.Unread = fmt.Sprintf("no collection during the load (%d in the log outside it): no heap after a collection to read", len(events))
		return h
	}
	h.Timeline, h.ThinnedS = thinHeap(points, span, period)
	return h
}

// thinHeap keeps points when they are few enough; else one per bucket of width (period, or
// wider so that at most results.MaxHeapPoints remain): the one that left the most, and the
// last point besides, so that the highest and the last are still drawn.
func thinHeap(points []results.HeapPoint, span, period time.Duration) ([]results.HeapPoint, float64) {
	if len(points) <= results.MaxHeapPoints {
		return points, 0
	}
	width := max(period.Seconds(), span.Seconds()/float64(results.MaxHeapPoints-2)) // buckets 0 … Max-2, and the last
	var kept []results.HeapPoint
	bucket := -1
	for _, p := range points {
		b := int(p.T / width)
		switch {
		case b != bucket:
			kept, bucket = append(kept, p), b
		case p.AfterMB > kept[len(kept)-1].AfterMB:
			kept[len(kept)-1] = p
		}
	}
	if last := points[len(points)-1]; kept[len(kept)-1] != last {
		kept = append(kept, last)
	}
	return kept, width
}
