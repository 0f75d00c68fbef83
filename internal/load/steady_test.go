package load

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// warmingDoer answers slowly at first and faster as it serves, halving its latency every
// halveEvery requests down to floor: a JIT warming up, in miniature. It counts every request.
type warmingDoer struct {
	served     atomic.Int64
	start      time.Duration
	floor      time.Duration
	halveEvery int64
}

func (w *warmingDoer) Do(context.Context, Request, time.Duration) Outcome {
	n := w.served.Add(1)
	lat := w.start >> min(n/w.halveEvery, 30)
	time.Sleep(max(lat, w.floor))
	return Outcome{Status: 200}
}

func steadyOf(window time.Duration) Steady {
	return Steady{
		Loop:   ClosedLoop{Tag: "data", Request: Request{Path: "/data/1"}, Connections: 4, Timeout: time.Second},
		Window: window, Agree: 3, Within: 0.30, MaxWarmup: 20 * window, Measure: 3 * window,
	}
}

// While throughput keeps doubling no three windows agree; once it stops changing, three do,
// and only then is the load measured. The warm-up's requests stay out of the recorder.
func TestSteadyWaitsForThroughputToSettle(t *testing.T) {
	window := 100 * time.Millisecond
	// 4 connections at 16 ms serve about 25 requests a window: the latency halves about every
	// window until it reaches 2 ms, three windows in.
	doer := &warmingDoer{start: 16 * time.Millisecond, floor: 2 * time.Millisecond, halveEvery: 25}
	s := steadyOf(window)
	start := time.Now()
	rec := NewRecorder(start, nil)
	figs, err := s.Run(context.Background(), Target{Driver: DoerDriver{doer}}, rec)
	if err != nil {
		t.Fatal(err)
	}
	f := figs.(SteadyFigures)
	if !f.Settled || f.Numbers()[NumberSettled] != 1 {
		t.Fatalf("did not settle: windows %v", f.Windows)
	}
	if len(f.Windows) < 5 {
		t.Errorf("settled after %d windows %v; the first three were still doubling", len(f.Windows), f.Windows)
	}
	if first, last := f.Windows[0], f.Windows[len(f.Windows)-1]; last < 2*first {
		t.Errorf("windows %v: the last should be several times the first", f.Windows)
	}
	if f.WarmupS < float64(len(f.Windows))*window.Seconds()*0.9 {
		t.Errorf("warm-up %.2f s for %d windows of %s", f.WarmupS, len(f.Windows), window)
	}
	got := rec.Results()
	if len(got) != 1 || got[0].Tag != "data" {
		t.Fatalf("recorded tags %v; want only the measured one", rec.Tags())
	}
	if measured, all := got[0].Completed, doer.served.Load(); measured == 0 || measured >= all {
		t.Errorf("recorded %d of %d requests; want the measurement only, not the warm-up", measured, all)
	}
	if el := time.Since(start).Seconds(); el < f.WarmupS+s.Measure.Seconds()*0.9 {
		t.Errorf("ran %.2f s in all; want the warm-up (%.2f s) and the measurement (%s)", el, f.WarmupS, s.Measure)
	}
}

// A load that never settles is measured anyway once MaxWarmup has passed, marked unsettled.
func TestSteadyMeasuresAnUnsettledLoadAfterMaxWarmup(t *testing.T) {
	// Its latency doubles every window (a server degrading): throughput halves from one window
	// to the next, so no three agree.
	s := steadyOf(50 * time.Millisecond)
	s.MaxWarmup = 300 * time.Millisecond
	began := time.Now()
	doer := doerFunc(func(Request) Outcome {
		time.Sleep(time.Millisecond << (time.Since(began) / s.Window))
		return Outcome{Status: 200}
	})
	rec := NewRecorder(time.Now(), nil)
	figs, _ := s.Run(context.Background(), Target{Driver: DoerDriver{doer}}, rec)
	f := figs.(SteadyFigures)
	if f.Settled {
		t.Fatalf("settled on alternating windows %v", f.Windows)
	}
	if f.WarmupS < s.MaxWarmup.Seconds() || f.WarmupS > s.MaxWarmup.Seconds()+1 {
		t.Errorf("warm-up %.2f s; want MaxWarmup (%s) and at most a window more", f.WarmupS, s.MaxWarmup)
	}
	if f.SpreadPct <= s.Within*100 {
		t.Errorf("spread %.0f %% of the last windows, yet not settled", f.SpreadPct)
	}
	if got := rec.Results(); len(got) != 1 || got[0].Completed == 0 {
		t.Fatalf("an unsettled load must still be measured: %v", got)
	}
	if n := f.Numbers(); n[NumberWarmup] < s.MaxWarmup.Seconds() || n[NumberSettled] != 0 {
		t.Errorf("numbers %v; want the warm-up's seconds and settled 0", n)
	}
}

// The measurement's throughput counts over Measure, not the warm-up: Describe says it is
// paced over Measure, and the closed loop under it is bounded by time alone.
func TestSteadyDescribe(t *testing.T) {
	s := Steady{Loop: ClosedLoop{Tag: "data", Request: Request{Path: "/data/1"}, Connections: 100, Requests: 10000, Timeout: 10 * time.Second},
		Window: 5 * time.Second, Agree: 3, Within: 0.05, MaxWarmup: 2 * time.Minute, Measure: 20 * time.Second}
	d := s.Describe()
	want := "steady state: warm-up in 5s windows until 3 agree within 5 % (at most 2m0s), then closed loop, 100 connections for 20s, request timeout 10s"
	if d.Text != want {
		t.Errorf("text %q\nwant %q", d.Text, want)
	}
	if !d.Paced || d.Duration != 20*time.Second || d.Expected != 35*time.Second || d.Timeout != 10*time.Second {
		t.Errorf("description %+v", d)
	}
	if len(d.Streams) != 1 || d.Streams[0].Mode != "closed" || d.Streams[0].Requests != 0 || d.Streams[0].Connections != 100 {
		t.Errorf("streams %+v; want one closed stream bounded by time", d.Streams)
	}
}

// Cancelled during the warm-up, it returns at once.
func TestSteadyStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	doer := doerFunc(func(Request) Outcome { cancel(); time.Sleep(time.Millisecond); return Outcome{Status: 200} })
	s := steadyOf(time.Second)
	start := time.Now()
	figs, _ := s.Run(ctx, Target{Driver: DoerDriver{doer}}, NewRecorder(start, nil))
	if el := time.Since(start); el > s.Window {
		t.Fatalf("returned after %s; want at once after cancel", el)
	}
	if figs.(SteadyFigures).Settled {
		t.Error("a cancelled warm-up settled")
	}
}

// A server whose answers take longer than the measurement: the loop stops sending at Measure
// and waits for what is in flight, and its throughput is the responses over that whole span.
// Over Measure alone, 4 connections answered every 150 ms in a 100-ms measurement would read
// as 40 a second where the server gives about 27.
func TestSteadySpanCoversTheDrain(t *testing.T) {
	s := steadyOf(100 * time.Millisecond)
	s.Agree, s.MaxWarmup, s.Measure = 1, time.Millisecond, 100*time.Millisecond
	doer := doerFunc(func(Request) Outcome {
		time.Sleep(150 * time.Millisecond)
		return Outcome{Status: 200}
	})
	rec := NewRecorder(time.Now(), nil)
	figs, err := s.Run(context.Background(), Target{Driver: DoerDriver{doer}}, rec)
	if err != nil {
		t.Fatal(err)
	}
	f := figs.(SteadyFigures)
	if span := f.Span(); span < 150*time.Millisecond || span > time.Second {
		t.Fatalf("span %s; want the 150-ms answers in flight at the end included", span)
	}
	done := rec.Results()[0].Completed
	if done != 4 {
		t.Fatalf("completed %d; want one answer per connection", done)
	}
	if rate := float64(done) / f.Span().Seconds(); rate > 4/0.15*1.05 {
		t.Errorf("%.1f responses/s over the span; the server gives at most %.1f", rate, 4/0.15)
	}
}
