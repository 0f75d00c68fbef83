package scenario

import (
	"fmt"
	"time"

	"github.com/arena-lab/arena/internal/load"
)

// PresetSteady is the preset of every throughput scenario's steady-state form, beside the
// study's own: warm up until throughput settles, then measure for a fixed time.
const PresetSteady = "steady"

// The steady-state form's settings: 5-s windows until three agree within 5 % (at most
// 2 minutes), then 20 s measured; the quick form's are shorter.
var (
	steadyFull  = load.Steady{Window: 5 * time.Second, Agree: 3, Within: 0.05, MaxWarmup: 2 * time.Minute, Measure: 20 * time.Second}
	steadyQuick = load.Steady{Window: 2 * time.Second, Agree: 3, Within: 0.05, MaxWarmup: 30 * time.Second, Measure: 5 * time.Second}
)

// Steady is loop in the steady-state form: its Requests and Duration are the form's;
// --duration sets the measured length.
func (r Resolved) Steady(loop load.ClosedLoop) load.Steady {
	s := steadyFull
	if r.Quick {
		s = steadyQuick
	}
	s.Loop, s.Measure = loop, r.Duration(s.Measure)
	return s
}

// SteadyNote says what the steady-state form does, for a plan's notes.
func (r Resolved) SteadyNote() string {
	s := r.Steady(load.ClosedLoop{})
	return fmt.Sprintf("Steady state: the load runs in %s windows until %d in a row agree within %.0f %% on throughput (at most %s; the results say whether it settled, and after how long), then %s is measured. The study's own form measures a fixed count of requests after a fixed warm-up, whatever state the JIT is in by then.",
		s.Window, s.Agree, s.Within*100, s.MaxWarmup, s.Measure)
}

// SteadyWhy says how a contender's warm-up went at a level in the steady-state form, from the
// summary: "" where the level was not run in it.
func SteadyWhy(idx Summaries, contender, level string) string {
	cs := idx[contender][level]
	warm, ok := cs.Numbers[load.NumberWarmup]
	settled := cs.Numbers[load.NumberSettled]
	switch {
	case !ok:
		return ""
	case settled.Max == 0:
		return fmt.Sprintf("%s did not settle (measured after %.0f s of warm-up)", contender, warm.Median)
	case settled.Min == 0:
		return fmt.Sprintf("%s settled in some repeats only (warm-up %.0f s)", contender, warm.Median)
	}
	return fmt.Sprintf("%s settled after %.0f s", contender, warm.Median)
}

// Unsettled says whether a contender's level ran in the steady-state form and some repeat of
// it was measured before its throughput settled.
func Unsettled(idx Summaries, contender, level string) bool {
	settled, ok := idx[contender][level].Numbers[load.NumberSettled]
	return ok && settled.Min < 1
}
