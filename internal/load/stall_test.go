package load

import (
	"context"
	"sync"
	"testing"
	"time"
)

// The coordinated-omission arithmetic, in virtual time: one connection at a fixed rate,
// a server that stalls for S seconds in a run of D seconds. A closed-loop view (service
// time) sees one slow request; from the intended send times, every hit due during the
// stall waits for its end, so p(q) ≈ S − (1−q)·D.
func TestResponseTimeCorrectsForAStall(t *testing.T) {
	const (
		rate    = 1000 // hits/s
		d       = 10 * time.Second
		stallAt = 4 * time.Second
		stall   = time.Second
		service = 100 * time.Microsecond
	)
	start := time.Unix(1_700_000_000, 0)
	rec := NewRecorder(start, nil)
	p := PerSecond(rate)
	free := start // when the single connection is next free
	for n := int64(0); ; n++ {
		due, ok := p.Due(n)
		if !ok || due >= d {
			break
		}
		intended := start.Add(due)
		sent := intended
		if free.After(sent) {
			sent = free
		}
		done := sent.Add(service)
		if s, e := start.Add(stallAt), start.Add(stallAt+stall); !sent.Before(s) && sent.Before(e) {
			done = e.Add(service)
		}
		free = done
		rec.Record("t", intended, sent, done, Outcome{Status: 200}, time.Millisecond)
	}
	r := rec.Results()[0]
	predicted := stall.Seconds() - 0.01*d.Seconds() // 0.9 s
	p99 := float64(r.Response.ValueAtQuantile(99)) / 1e9
	if p99 < predicted*0.95 || p99 > predicted*1.05 {
		t.Fatalf("corrected p99 = %.3fs; arithmetic predicts %.3fs", p99, predicted)
	}
	if svc := time.Duration(r.Service.ValueAtQuantile(99)); svc > time.Millisecond {
		t.Fatalf("service-time p99 = %v; want the uncorrected view to miss the stall", svc)
	}
	if got := time.Duration(r.Service.Max()); got < stall-time.Millisecond {
		t.Fatalf("service-time max = %v; want the one stalled request", got)
	}
	if r.Late < int64(stall.Seconds()*rate)*9/10 {
		t.Fatalf("late sends = %d; want about %d (every hit due during the stall)", r.Late, int(stall.Seconds()*rate))
	}
}

// stallDoer answers in about a millisecond, except that nothing answers during its stall.
type stallDoer struct {
	mu         sync.Mutex
	stallFrom  time.Time
	stallUntil time.Time
}

func (s *stallDoer) Do(ctx context.Context, r Request, timeout time.Duration) Outcome {
	time.Sleep(time.Millisecond)
	s.mu.Lock()
	from, until := s.stallFrom, s.stallUntil
	s.mu.Unlock()
	if now := time.Now(); !now.Before(from) && now.Before(until) {
		time.Sleep(until.Sub(now))
	}
	return Outcome{Status: 200}
}

// The same stall in real time through the engine: with few connections the backlog of
// hits due during the stall is measured from their intended times.
func TestOpenLoopMeasuresAStallFromIntendedTimes(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time engine test")
	}
	const d, stall = 2 * time.Second, 500 * time.Millisecond
	start := time.Now()
	doer := &stallDoer{stallFrom: start.Add(500 * time.Millisecond), stallUntil: start.Add(500*time.Millisecond + stall)}
	rec := NewRecorder(start, nil)
	drive(context.Background(), OpenLoop{
		Streams:  []Stream{{Tag: "t", Request: Request{Path: "/"}, Pacer: PerSecond(400), Connections: 4}},
		Duration: d, Timeout: 5 * time.Second,
	}, doer, rec, 100*time.Millisecond)
	r := rec.Results()[0]
	if r.Sent != 800 || r.Scheduled != 800 {
		t.Fatalf("sent %d of %d scheduled; want 800 of 800", r.Sent, r.Scheduled)
	}
	predicted := stall.Seconds() - 0.01*d.Seconds() // 0.48 s, plus a short drain
	p99 := float64(r.Response.ValueAtQuantile(99)) / 1e9
	if p99 < predicted*0.9 || p99 > predicted*1.5 {
		t.Fatalf("response p99 = %.3fs; predicted ≈ %.3fs", p99, predicted)
	}
	svc := float64(r.Service.ValueAtQuantile(99)) / 1e9
	if svc > p99/3 {
		t.Fatalf("service p99 = %.3fs; want well below the corrected %.3fs", svc, p99)
	}
	if len(r.Timeline) < 15 {
		t.Fatalf("timeline has %d windows; want one per 100 ms", len(r.Timeline))
	}
}

func TestOpenLoopUnboundedSendsOnTimeAndCountsErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time engine test")
	}
	start := time.Now()
	rec := NewRecorder(start, nil)
	doer := doerFunc(func(r Request) Outcome {
		if r.Path == "/bad" {
			return Outcome{ErrKind: ErrRefused}
		}
		time.Sleep(50 * time.Millisecond)
		return Outcome{Status: 503}
	})
	drive(context.Background(), OpenLoop{
		Streams: []Stream{
			{Tag: "slow", Request: Request{Path: "/slow"}, Pacer: PerSecond(100)},
			{Tag: "bad", Request: Request{Path: "/bad"}, Pacer: PerSecond(20)},
		},
		Duration: 500 * time.Millisecond, Timeout: time.Second, LateAfter: 20 * time.Millisecond,
	}, doer, rec, time.Second)
	res := map[string]TagResult{}
	for _, r := range rec.Results() {
		res[r.Tag] = r
	}
	if s := res["slow"]; s.Sent != 50 || s.Status["5xx"] != 50 || s.Late > 2 {
		t.Fatalf("slow: sent %d, 5xx %d, late %d; want 50, 50, ~0", s.Sent, s.Status["5xx"], s.Late)
	}
	if s := res["slow"]; s.Completed != 0 || s.Errors[ErrStatus] != 50 || s.Response.TotalCount() != 0 {
		t.Fatalf("slow: completed %d, status errors %d, latencies %d; want a 503 an error, never an answer", s.Completed, s.Errors[ErrStatus], s.Response.TotalCount())
	}
	if b := res["bad"]; b.Errors[ErrRefused] != 10 || b.Response.TotalCount() != 0 {
		t.Fatalf("bad: refused %d, latencies %d; want 10 refused and none timed", b.Errors[ErrRefused], b.Response.TotalCount())
	}
}

// A cell starts its recorder's clock, then sets up its probes before the load: the schedule
// counts from the load's own start, so none of that setup makes its first hits late.
func TestOpenLoopScheduleStartsWithTheLoadNotTheRecorder(t *testing.T) {
	if testing.Short() {
		t.Skip("real-time engine test")
	}
	rec := NewRecorder(time.Now().Add(-50*time.Millisecond), nil)
	doer := doerFunc(func(Request) Outcome { return Outcome{Status: 200} })
	drive(context.Background(), OpenLoop{
		Streams:  []Stream{{Tag: "a", Request: Request{Path: "/a"}, Pacer: PerSecond(10)}, {Tag: "b", Request: Request{Path: "/b"}, Pacer: PerSecond(10)}},
		Duration: 300 * time.Millisecond, Timeout: time.Second, LateAfter: 20 * time.Millisecond,
	}, doer, rec, time.Second)
	for _, r := range rec.Results() {
		if r.Sent != 3 || r.Late != 0 {
			t.Errorf("%s: sent %d, late %d (max %.0f ms); want 3 on time", r.Tag, r.Sent, r.Late, r.MaxLateMs)
		}
	}
}

type doerFunc func(Request) Outcome

func (f doerFunc) Do(_ context.Context, r Request, _ time.Duration) Outcome { return f(r) }

func TestClosedLoopStopsAtItsCount(t *testing.T) {
	rec := NewRecorder(time.Now(), nil)
	drive(context.Background(), ClosedLoop{Tag: "c", Request: Request{Path: "/"}, Connections: 8, Requests: 1000, Duration: 10 * time.Second, Timeout: time.Second},
		doerFunc(func(Request) Outcome { return Outcome{Status: 200} }), rec, time.Second)
	if got := rec.Results()[0].Sent; got != 1000 {
		t.Fatalf("sent %d; want exactly 1000", got)
	}
}

func TestClosedLoopStopsAtItsDuration(t *testing.T) {
	start := time.Now()
	rec := NewRecorder(start, nil)
	drive(context.Background(), ClosedLoop{Tag: "c", Request: Request{Path: "/"}, Connections: 2, Duration: 200 * time.Millisecond, Timeout: time.Second},
		doerFunc(func(Request) Outcome { time.Sleep(10 * time.Millisecond); return Outcome{Status: 200} }), rec, time.Second)
	if el := time.Since(start); el > time.Second {
		t.Fatalf("ran %v; want about 200ms", el)
	}
	if got := rec.Results()[0].Sent; got < 10 || got > 60 {
		t.Fatalf("sent %d; want about 40", got)
	}
}

func TestRunStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	drive(ctx, OpenLoop{
		Streams:  []Stream{{Tag: "t", Request: Request{Path: "/"}, Pacer: PerSecond(10)}},
		Duration: time.Minute, Timeout: time.Minute,
	}, doerFunc(func(Request) Outcome { time.Sleep(time.Minute); return Outcome{} }), NewRecorder(start, nil), time.Second)
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("Run returned after %v; want soon after cancel", el)
	}
}

// drive runs a load over doer as the lab does: windows rotated every interval around it.
func drive(ctx context.Context, l Load, doer Doer, rec *Recorder, interval time.Duration) {
	stop := RotateEvery(rec, interval)
	defer stop()
	_, _ = l.Run(ctx, Target{Driver: DoerDriver{doer}}, rec)
}
