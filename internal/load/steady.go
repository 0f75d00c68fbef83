package load

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

var _ Load = Steady{}

// Steady measures a closed loop in its steady state: it runs the loop in warm-up windows
// until Agree consecutive windows' throughputs lie within Within of each other (the JIT done,
// the pools grown) or MaxWarmup has passed, then measures it for Measure. A study's fixed
// count of requests after a fixed warm-up measures whatever state the server happens to be
// in by then; this waits until the state stops changing, and says whether it did.
type Steady struct {
	// Loop is the load: its Tag, Request, Connections and Timeout. Its Requests and Duration
	// are set per phase.
	Loop      ClosedLoop
	Window    time.Duration // one warm-up window, e.g. 5 s
	Agree     int           // consecutive windows that must agree, e.g. 3
	Within    float64       // how far apart they may be: (max − min) / median, e.g. 0.05
	MaxWarmup time.Duration // then measured anyway, and marked unsettled
	Measure   time.Duration // the measured load's length
}

// SteadyKind is the kind of the figures a Steady load returns.
const SteadyKind = "steady"

// The numbers a Steady load's cells carry, summarised over repeats: the seconds of warm-up
// before the measurement, and whether it settled (1) or ran out of time (0).
const (
	NumberWarmup  = "warmup_s"
	NumberSettled = "settled"
)

// SteadyFigures are what the warm-up came to.
type SteadyFigures struct {
	Settled bool    `json:"settled"`  // Agree windows agreed within MaxWarmup
	WarmupS float64 `json:"warmup_s"` // seconds of warm-up before the measurement
	// Windows are each warm-up window's throughput, per second; SpreadPct the spread of the
	// last Agree of them.
	Windows   []float64 `json:"windows_per_s"`
	SpreadPct float64   `json:"spread_pct"`
	// MeasuredS is how long the measured loop ran, from its first request until its last
	// response: its throughput's span. The loop stops sending at Measure, then waits for the
	// responses in flight, which are counted; over Measure alone, 800 connections waiting
	// 5 s each in a 5-s measurement read as twice the server's rate.
	MeasuredS float64 `json:"measured_s"`
}

var _ Spanned = SteadyFigures{}

// Span is the measured loop's length, its drain included.
func (f SteadyFigures) Span() time.Duration { return time.Duration(f.MeasuredS * float64(time.Second)) }

// Kind names the figures in a cell.
func (SteadyFigures) Kind() string { return SteadyKind }

// Numbers: the warm-up's length, and whether it settled.
func (f SteadyFigures) Numbers() map[string]float64 {
	settled := 0.0
	if f.Settled {
		settled = 1
	}
	return map[string]float64{NumberWarmup: math.Round(f.WarmupS*10) / 10, NumberSettled: settled}
}

// SteadyFiguresOf reads a cell's steady-state figures; false when its load was not Steady.
func SteadyFiguresOf(c results.Cell) (SteadyFigures, bool) {
	var f SteadyFigures
	return f, c.FiguresOf(SteadyKind, &f)
}

// Describe: the measured loop, after its warm-up. Its throughput counts over the measured
// loop (Paced; its figures' Span once it ran), not over the warm-up before it; the warm-up's
// least length is the ETA's guess.
func (s Steady) Describe() Description {
	d := s.measured(s.Measure).Describe()
	d.Text = fmt.Sprintf("steady state: warm-up in %s windows until %d agree within %.0f %% (at most %s), then %s",
		s.Window, s.Agree, s.Within*100, s.MaxWarmup, d.Text)
	d.Duration, d.Paced = s.Measure, true
	d.Expected = time.Duration(s.Agree)*s.Window + s.Measure
	return d
}

// measured is the loop bounded by time alone.
func (s Steady) measured(d time.Duration) ClosedLoop {
	l := s.Loop
	l.Requests, l.Duration, l.Expect = 0, d, 0
	return l
}

// Run warms up, then measures into rec. The warm-up windows record into recorders of their
// own, so nothing of them reaches the cell's figures.
func (s Steady) Run(ctx context.Context, target Target, rec *Recorder) (results.Figures, error) {
	target.Answers = target.answers() // learned once, by the first window, for every loop after it
	f := s.warm(ctx, target)
	// A closed loop stops at its recorder's start plus its Duration, and rec started with
	// the drive, before the warm-up: the measurement's end is counted from there.
	began := time.Now()
	_, err := s.measured(time.Since(rec.Start())+s.Measure).Run(ctx, target, rec)
	f.MeasuredS = time.Since(began).Seconds()
	return f, err
}

// warm runs windows until Agree of them agree within Within, or MaxWarmup has passed.
func (s Steady) warm(ctx context.Context, target Target) SteadyFigures {
	var f SteadyFigures
	began := time.Now()
	for ctx.Err() == nil && time.Since(began) < s.MaxWarmup {
		f.Windows = append(f.Windows, s.window(ctx, target))
		if len(f.Windows) < s.Agree {
			continue
		}
		last := results.SpreadOf(f.Windows[len(f.Windows)-s.Agree:])
		f.SpreadPct = last.Pct
		if last.Median > 0 && last.Pct <= s.Within*100 {
			f.Settled = true
			break
		}
	}
	f.WarmupS = time.Since(began).Seconds()
	return f
}

// window runs the loop for one window and returns its throughput: responses per second.
func (s Steady) window(ctx context.Context, target Target) float64 {
	start := time.Now()
	scratch := NewRecorder(start, nil)
	_, _ = s.measured(s.Window).Run(ctx, target, scratch) // a closed loop never fails to run
	var done int64
	for _, t := range scratch.Results() {
		done += t.Completed
	}
	return math.Round(float64(done)/time.Since(start).Seconds()*10) / 10
}
