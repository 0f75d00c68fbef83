package load

import (
	"runtime"
	"sort"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/arena-lab/arena/internal/results"
)

// IntervalSink receives each closed window's histogram (e.g. an .hlog writer). The
// histogram is the sink's only during the call: the recorder reuses it for a later window.
type IntervalSink interface {
	Interval(tag string, h *hdrhistogram.Histogram) error
}

// Recorder collects every attempt of a run: per tag, the response time (from the intended
// send), the service time (from the actual send), counters and a timeline of windows.
// It is safe for concurrent use; one mutex per tag keeps the hot path short.
type Recorder struct {
	start    time.Time
	sink     IntervalSink
	mu       sync.Mutex // guards tags and order
	tags     map[string]*tagRecord
	order    []string
	rotateMu sync.Mutex
}

type tagRecord struct {
	mu          sync.Mutex
	stats       results.TagStats
	response    *hdrhistogram.Histogram
	service     *hdrhistogram.Histogram
	window      *hdrhistogram.Histogram
	spare       *hdrhistogram.Histogram // the last window's, cleared: the next one's storage
	windowErrs  int64
	windowTOs   int64 // the window's timeouts, of windowErrs
	windowStart time.Time
	timeline    []results.Window
	cores       []*CoreTag // the client cores' parts, added in at each window and read
	own         *CoreTag   // the part Record counts into, for callers that are no core's loop
}

// NewRecorder starts a recorder whose timeline counts from start. sink may be nil.
func NewRecorder(start time.Time, sink IntervalSink) *Recorder {
	return &Recorder{start: start, sink: sink, tags: map[string]*tagRecord{}}
}

// Start is when the recorder's timeline begins.
func (r *Recorder) Start() time.Time { return r.start }

func (r *Recorder) tag(name string) *tagRecord {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := r.tags[name]
	if t == nil {
		t = &tagRecord{
			stats:       results.TagStats{Tag: name, Status: map[string]int64{}, Errors: map[string]int64{}},
			response:    results.NewHistogram(),
			service:     results.NewHistogram(),
			window:      results.NewHistogram(),
			windowStart: r.start,
		}
		r.tags[name] = t
		r.order = append(r.order, name)
	}
	return t
}

// Schedule declares a tag and how many hits its schedule intends.
func (r *Recorder) Schedule(tag string, hits int64) {
	t := r.tag(tag)
	t.mu.Lock()
	t.stats.Scheduled += hits
	t.mu.Unlock()
}

// Record adds one attempt. intended is when the schedule meant it to leave, sent when it
// left, done when it ended. Correct answers and timeouts enter the histograms (a timeout at
// the time it waited: leaving it out would flatter a starved server); a wrong answer (a
// status outside 2xx, or out.ErrKind ErrStatus or ErrBody) is counted as an error and under
// its status, and like a refused or reset connection has no latency worth the name.
func (r *Recorder) Record(tag string, intended, sent, done time.Time, out Outcome, lateAfter time.Duration) {
	t := r.tag(tag)
	t.mu.Lock()
	if t.own == nil {
		t.own = &CoreTag{core: &CoreRecorder{rec: r}, response: results.NewHistogram(), service: results.NewHistogram()}
		t.cores = append(t.cores, t.own)
	}
	own := t.own
	t.mu.Unlock()
	// One way to count an attempt, the cores': this recorder's own callers share one part.
	own.Record(Attempt{Lateness: sent.Sub(intended), Response: done.Sub(intended), Service: done.Sub(sent), Out: out}, lateAfter)
}

func record(h *hdrhistogram.Histogram, v int64) {
	if v < results.HistLowest {
		v = results.HistLowest
	}
	if v > results.HistHighest {
		v = results.HistHighest
	}
	_ = h.RecordValue(v) // in range by the clamps above
}

// statusClasses are the names results count statuses under, by statusIndex.
var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx", "other"}

func statusIndex(code int) int {
	if code < 100 || code > 599 {
		return len(statusClasses) - 1
	}
	return code/100 - 1
}

// TakenUp counts a hit the client took up (handed to a connection, or to the queue for
// one) later than lateAfter past its intended time: its own part of the lateness.
func (r *Recorder) TakenUp(tag string, intended time.Time, lateAfter time.Duration) {
	if time.Since(intended) <= lateAfter {
		return
	}
	t := r.tag(tag)
	t.mu.Lock()
	t.stats.ClientLate++
	t.mu.Unlock()
}

// RecordDelivery adds one delivered message (a chat frame): latency from when it was sent
// to when it arrived; no HTTP status.
func (r *Recorder) RecordDelivery(tag string, sent, received time.Time) {
	t := r.tag(tag)
	lat := int64(received.Sub(sent))
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stats.Sent++
	t.stats.Completed++
	record(t.response, lat)
	record(t.service, lat)
	record(t.window, lat)
}

// RecordLatencies adds delivered messages in one go, each with its latency from when it was
// made to when it arrived: for loads of millions of messages a second, one lock per batch.
func (r *Recorder) RecordLatencies(tag string, lats []time.Duration) {
	t := r.tag(tag)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stats.Sent += int64(len(lats))
	t.stats.Completed += int64(len(lats))
	for _, l := range lats {
		record(t.response, int64(l))
		record(t.service, int64(l))
		record(t.window, int64(l))
	}
}

// Update changes a tag's counters under its lock, for loads whose outcomes are not HTTP
// answers (e.g. chat deliveries missing or out of order).
func (r *Recorder) Update(tag string, f func(*results.TagStats)) {
	t := r.tag(tag)
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.stats)
}

// Rotate closes every tag's current window at now: it joins the timeline and goes to the sink.
func (r *Recorder) Rotate(now time.Time) error {
	r.rotateMu.Lock()
	defer r.rotateMu.Unlock()
	var firstErr error
	for _, name := range r.Tags() {
		t := r.tag(name)
		t.mu.Lock()
		t.collect()
		w := t.window
		errs, timeouts := t.windowErrs, t.windowTOs
		wStart := t.windowStart
		if t.spare == nil {
			t.spare = results.NewHistogram()
		}
		t.window, t.spare = t.spare, nil
		t.windowErrs, t.windowTOs = 0, 0
		t.windowStart = now
		win := results.WindowOf(now.Sub(r.start).Seconds(), w, errs, timeouts)
		t.timeline = append(t.timeline, win)
		t.mu.Unlock()
		if r.sink != nil {
			w.SetTag(name)
			w.SetStartTimeMs(wStart.UnixMilli())
			w.SetEndTimeMs(now.UnixMilli())
			if err := r.sink.Interval(name, w); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		// The window's storage serves the next one: 264 KiB a tag a second would otherwise
		// be garbage that the GC collects on the client's core, under its loops.
		w.Reset()
		t.mu.Lock()
		t.spare = w
		t.mu.Unlock()
		// Between tags the pacers get the client's core back: with one P, a rotation of
		// several tags' windows (their percentiles, their hlog encoding) would otherwise
		// hold every pacer past its send time.
		runtime.Gosched()
	}
	return firstErr
}

// Tags lists the tags in the order they were first seen.
func (r *Recorder) Tags() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.order...)
}

// TagResult is everything recorded for one tag.
type TagResult struct {
	results.TagStats
	Response *hdrhistogram.Histogram
	Service  *hdrhistogram.Histogram
	Timeline []results.Window
}

// Results returns a copy of every tag's record, sorted by tag order of first use.
func (r *Recorder) Results() []TagResult {
	var out []TagResult
	for _, name := range r.Tags() {
		t := r.tag(name)
		t.mu.Lock()
		t.collect()
		st := t.stats
		st.Status = copyCounts(st.Status)
		st.Errors = copyCounts(st.Errors)
		out = append(out, TagResult{
			TagStats: st,
			Response: hdrhistogram.Import(t.response.Export()),
			Service:  hdrhistogram.Import(t.service.Export()),
			Timeline: append([]results.Window(nil), t.timeline...),
		})
		t.mu.Unlock()
	}
	return out
}

func copyCounts(m map[string]int64) map[string]int64 {
	c := make(map[string]int64, len(m))
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		c[k] = m[k]
	}
	return c
}
