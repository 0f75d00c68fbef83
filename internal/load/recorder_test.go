package load

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// A correct answer completes and has a latency; a wrong one (a 404, a 200 of the wrong
// length) is an error under its status, as a refusal is, and has none; a timeout is an
// error at the time it waited.
func TestRecorderCountsStatusErrorsAndTimeouts(t *testing.T) {
	start := time.Unix(1000, 0)
	rec := NewRecorder(start, nil)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	rec.Record("a", at(0), at(0), at(10), Outcome{Status: 200}, time.Millisecond)
	rec.Record("a", at(0), at(5), at(20), Outcome{Status: 404}, time.Millisecond)
	rec.Record("a", at(0), at(0), at(2), Outcome{Status: 200, ErrKind: ErrBody}, time.Millisecond)
	rec.Record("a", at(0), at(0), at(3), Outcome{Status: 503, ErrKind: ErrStatus}, time.Millisecond)
	rec.Record("a", at(0), at(0), at(60000), Outcome{ErrKind: ErrTimeout}, time.Millisecond)
	rec.Record("a", at(0), at(0), at(1), Outcome{ErrKind: ErrRefused}, time.Millisecond)
	r := rec.Results()[0]
	if r.Sent != 6 || r.Completed != 1 || r.Status["2xx"] != 2 || r.Status["4xx"] != 1 || r.Status["5xx"] != 1 {
		t.Fatalf("counts %+v: want 6 sent, 1 completed, every status that came back counted", r.TagStats)
	}
	if r.Errors[ErrStatus] != 2 || r.Errors[ErrBody] != 1 || r.Errors[ErrTimeout] != 1 || r.Errors[ErrRefused] != 1 || r.Late != 1 || r.MaxLateMs != 5 {
		t.Fatalf("errors/late %+v", r.TagStats)
	}
	// The correct answer and the timeout are in the histograms, the timeout at the time it
	// waited; the wrong answers and the refusal are not.
	if r.Response.TotalCount() != 2 || r.Response.Max() < int64(59*time.Second) {
		t.Fatalf("histogram count %d max %d", r.Response.TotalCount(), r.Response.Max())
	}
	if got := time.Duration(r.Service.Min()); got < 9*time.Millisecond || got > 11*time.Millisecond {
		t.Fatalf("service min %v; want the correct answer's 10ms", got)
	}
}

// Repeats are combined by merging their histograms, never by averaging percentiles.
func TestHistogramMergeIsNotAnAverageOfPercentiles(t *testing.T) {
	a, b := results.NewHistogram(), results.NewHistogram()
	for i := 0; i < 990; i++ {
		_ = a.RecordValue(int64(time.Millisecond))
	}
	for i := 0; i < 10; i++ {
		_ = a.RecordValue(int64(time.Second))
	}
	for i := 0; i < 1000; i++ {
		_ = b.RecordValue(int64(time.Millisecond))
	}
	avgOfP99 := (a.ValueAtQuantile(99.6) + b.ValueAtQuantile(99.6)) / 2
	m := results.NewHistogram()
	m.Merge(a)
	m.Merge(b)
	if m.TotalCount() != 2000 {
		t.Fatalf("merged count %d", m.TotalCount())
	}
	got := m.ValueAtQuantile(99.6)
	if got < int64(990*time.Millisecond) {
		t.Fatalf("merged p99.6 = %v; want the 1 s tail (the top 0.4%% of 2000 lies in its 10 slow hits)", time.Duration(got))
	}
	if avgOfP99 == got {
		t.Fatalf("merged p99.6 equals the average of percentiles; the test is not telling them apart")
	}
}

// A window keeps its timeouts apart from its answers: their waits are in its latencies and
// they are errors, so that a reader of the window (the live view, the exporters) counts each
// attempt once and no timeout as an answer.
func TestAWindowCountsItsTimeouts(t *testing.T) {
	start := time.Now()
	rec := NewRecorder(start, nil)
	core := rec.Core().Tag("data")
	core.Record(Attempt{Response: 2 * time.Millisecond, Out: Outcome{Status: 200}}, time.Millisecond)
	core.Record(Attempt{Response: time.Second, Out: Outcome{ErrKind: ErrTimeout}}, time.Millisecond)
	rec.Record("data", start, start, start.Add(time.Second), Outcome{ErrKind: ErrTimeout}, time.Millisecond)
	rec.Record("data", start, start, start.Add(time.Millisecond), Outcome{ErrKind: ErrRefused}, time.Millisecond)
	if err := rec.Rotate(start.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := rec.Rotate(start.Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	tl := rec.Results()[0].Timeline
	if w := tl[0]; w.Count != 3 || w.Errors != 3 || w.Timeouts != 2 || w.Answered() != 1 || w.Ended() != 4 {
		t.Fatalf("window %+v: want 3 latencies, 3 errors of which 2 timeouts; 1 answered of 4 ended", w)
	}
	if w := tl[1]; w.Timeouts != 0 || w.Errors != 0 {
		t.Fatalf("the next window %+v: the timeouts carried over", w)
	}
}

func TestRotateBuildsTimelineAndHlog(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	hl, err := CreateHlog(filepath.Join(dir, "x.hlog"), start, "test")
	if err != nil {
		t.Fatal(err)
	}
	rec := NewRecorder(start, hl)
	rec.Record("instant", start, start, start.Add(2*time.Millisecond), Outcome{Status: 200}, time.Millisecond)
	if err := rec.Rotate(start.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	rec.Record("instant", start, start, start.Add(4*time.Millisecond), Outcome{Status: 200}, time.Millisecond)
	rec.Record("instant", start, start, start.Add(time.Millisecond), Outcome{Status: 500}, time.Millisecond)
	if err := rec.Rotate(start.Add(2 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := hl.Close(); err != nil {
		t.Fatal(err)
	}
	tl := rec.Results()[0].Timeline
	if len(tl) != 2 || tl[0].Count != 1 || tl[0].Errors != 0 || tl[1].Count != 1 || tl[1].Errors != 1 || tl[1].T != 2 {
		t.Fatalf("timeline %+v", tl)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "x.hlog"))
	r := hdrhistogram.NewHistogramLogReader(bytes.NewReader(raw))
	var n int
	for {
		h, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			break
		}
		if h.Tag() != "instant" || h.TotalCount() != 1 {
			t.Fatalf("interval %d: tag %q count %d", n, h.Tag(), h.TotalCount())
		}
		n++
	}
	if n != 2 {
		t.Fatalf("read %d intervals back; want 2", n)
	}
}
