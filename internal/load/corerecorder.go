package load

import (
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/arena-lab/arena/internal/results"
)

// A CoreRecorder is one client core's part of a Recorder, as wrk2 keeps one histogram per
// thread: the core's event loop records into histograms of its own, behind a lock nobody
// else takes between two rotations, and the Recorder adds them into the shared ones when
// it closes a window or is read. No lock is shared between cores on the hot path.
type CoreRecorder struct {
	rec *Recorder
	mu  sync.Mutex // the core's own; the Recorder takes it once a window to collect
}

// CoreTag is one tag's figures on one core since they were last collected.
type CoreTag struct {
	core     *CoreRecorder
	sent     int64
	late     int64
	ownLate  int64
	maxLate  time.Duration
	done     int64
	status   [len(statusClasses)]int64 // by statusIndex
	errs     [len(errKinds)]int64
	winErrs  int64
	winTOs   int64 // the window's timeouts, of winErrs
	response *hdrhistogram.Histogram
	service  *hdrhistogram.Histogram
}

// errKinds orders the error kinds for CoreTag's counters.
var errKinds = [...]string{ErrTimeout, ErrRefused, ErrReset, ErrClosed, ErrStatus, ErrBody, ErrOther}

// Core returns a new part of r for one core's loop.
func (r *Recorder) Core() *CoreRecorder { return &CoreRecorder{rec: r} }

// Tag is this core's record of tag, declared on the Recorder so that it is collected.
func (c *CoreRecorder) Tag(name string) *CoreTag {
	ct := &CoreTag{core: c, response: results.NewHistogram(), service: results.NewHistogram()}
	t := c.rec.tag(name)
	t.mu.Lock()
	t.cores = append(t.cores, ct)
	t.mu.Unlock()
	return ct
}

// An Attempt is one request as a core's loop saw it.
type Attempt struct {
	// Lateness is sent − intended, Response done − intended, Service done − sent.
	Lateness, Response, Service time.Duration
	// TakenUp is how late past its intended time the loop took the hit up: the client's own
	// part of Lateness, the rest being a wait for a free connection.
	TakenUp time.Duration
	Out     Outcome
}

// Record adds one attempt as Recorder.Record does, from its durations.
func (t *CoreTag) Record(a Attempt, lateAfter time.Duration) {
	lateness, out := a.Lateness, a.Out
	t.core.mu.Lock()
	t.sent++
	if lateness > lateAfter {
		t.late++
	}
	if a.TakenUp > lateAfter {
		t.ownLate++
	}
	if lateness > t.maxLate {
		t.maxLate = lateness
	}
	kind := out.ErrKind
	if kind == "" && (out.Status < 200 || out.Status > 299) {
		kind = ErrStatus // no answer outside 2xx is correct, whoever classified it
	}
	if out.Status != 0 {
		t.status[statusIndex(out.Status)]++ // every status that came back, right or wrong
	}
	if kind != "" {
		t.errs[errIndex(kind)]++
		t.winErrs++
		if kind == ErrTimeout {
			t.winTOs++
		}
	} else {
		t.done++
	}
	// Correct answers and timeouts (at the time they waited) are the latency; a wrong
	// answer is an error beside it, however fast.
	if kind == "" || kind == ErrTimeout {
		record(t.response, int64(a.Response))
		record(t.service, int64(a.Service))
	}
	t.core.mu.Unlock()
}

func errIndex(kind string) int {
	for i, k := range errKinds {
		if k == kind {
			return i
		}
	}
	return len(errKinds) - 1
}

// collect adds every core's figures since the last collection into t and clears them.
// The caller holds t.mu.
func (t *tagRecord) collect() {
	for _, c := range t.cores {
		c.core.mu.Lock()
		st := &t.stats
		st.Sent += c.sent
		st.Late += c.late
		st.ClientLate += c.ownLate
		if ms := float64(c.maxLate) / 1e6; ms > st.MaxLateMs {
			st.MaxLateMs = ms
		}
		st.Completed += c.done
		for i, n := range c.status {
			if n > 0 {
				st.Status[statusClasses[i]] += n
			}
		}
		for i, n := range c.errs {
			if n > 0 {
				st.Errors[errKinds[i]] += n
			}
		}
		t.windowErrs += c.winErrs
		t.windowTOs += c.winTOs
		if c.response.TotalCount() > 0 {
			t.response.Merge(c.response)
			t.window.Merge(c.response)
			t.service.Merge(c.service)
			c.response.Reset()
			c.service.Reset()
		}
		c.sent, c.late, c.ownLate, c.maxLate, c.done, c.winErrs, c.winTOs = 0, 0, 0, 0, 0, 0, 0
		c.status, c.errs = [len(statusClasses)]int64{}, [len(errKinds)]int64{}
		c.core.mu.Unlock()
	}
}
