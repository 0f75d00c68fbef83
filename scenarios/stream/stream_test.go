package stream

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	streamload "github.com/arena-lab/arena/internal/stream"
)

func TestPlanHasBothModesWithAndWithoutBackpressureUnderACap(t *testing.T) {
	p, err := Scenario{}.Plan(scenario.Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ThroughputOn: "on", ThroughputOff: "off", SlowOn: "on", SlowOff: "off", PacedOn: "on", PacedOff: "off"}
	if len(p.Levels) != 6 {
		t.Fatalf("%d levels", len(p.Levels))
	}
	for _, l := range p.Levels {
		if l.Env["BACKPRESSURE"] != want[l.Name] || !l.MemoryCap || l.Feature() != "stream" {
			t.Errorf("%s: env %v cap %v", l.Name, l.Env, l.MemoryCap)
		}
		ld := l.Load.(streamload.Load)
		if strings.HasPrefix(l.Name, "slow") != (ld.Slow == ld.Clients && ld.ReadDelay == 200*time.Millisecond) {
			t.Errorf("%s: %d slow of %d, delay %s", l.Name, ld.Slow, ld.Clients, ld.ReadDelay)
		}
		if ld.Clients != quickShape.clients || ld.Size != 250 {
			t.Errorf("%s: %+v", l.Name, ld)
		}
		// the paced levels feed a rate both sides can carry; the rest as fast as the server can
		paced := l.Name == PacedOn || l.Name == PacedOff
		if wantRate := map[bool]int{true: pacedTotal / quickShape.clients, false: 0}[paced]; ld.Rate != wantRate || (paced && ld.Slow != 0) {
			t.Errorf("%s: rate %d, %d slow; want rate %d", l.Name, ld.Rate, ld.Slow, wantRate)
		}
	}
	// the study's preset runs at the study's fixed rate already: no paced levels
	seed, _ := Scenario{}.Plan(scenario.Options{Preset: "seed"})
	if ld := seed.Levels[0].Load.(streamload.Load); ld.Clients != 1000 || ld.Rate != 1500 || len(seed.Levels) != 4 {
		t.Errorf("seed: %d levels, %+v", len(seed.Levels), ld)
	}
	if d, _ := (Scenario{}).Plan(scenario.Options{Duration: 3 * time.Second}); d.Levels[3].Load.(streamload.Load).Duration != 3*time.Second {
		t.Error("--duration is not honoured")
	}
	if _, err := (Scenario{}).Plan(scenario.Options{Preset: "nope"}); err == nil || !strings.Contains(err.Error(), "default, seed") {
		t.Errorf("bad preset: %v", err)
	}
}

// cell builds a measured cell whose RSS goes from → to over 10 s; an unresponsive one left
// /stream/stats unanswered from 3 s on.
func cell(contender, level string, from, to, perSecond float64, status string, responsive bool) results.Cell {
	c := results.Cell{Contender: contender, Level: level, Repeat: 1, Seconds: 10,
		Outcome: results.Outcome{Status: status}, Memory: &results.Memory{CapMB: 1024, By: "cgroup"}}
	f := &streamload.Figures{PerSecond: perSecond, Seconds: 10, Responsive: responsive}
	for t := 1; t <= 11; t++ {
		f.StatsTimeline = append(f.StatsTimeline, streamload.StatsSample{T: float64(t), OK: responsive || t <= 3})
	}
	withFigures(&c, f)
	for i := 0; i <= 10; i++ {
		rss := from + (to-from)*float64(i)/10
		c.Server.Timeline = append(c.Server.Timeline, results.Sample{T: float64(i), RSSMB: rss})
		c.Server.Summary.RSSMBMax = max(c.Server.Summary.RSSMBMax, rss)
	}
	return c
}

// three are three repeats of cell, its rate 0.5 % either side of perSecond: a reproduction's,
// enough for a ratio's 90 % interval.
func three(contender, level string, from, to, perSecond float64, status string, responsive bool) []results.Cell {
	var out []results.Cell
	for i, k := range []float64{0.995, 1, 1.005} {
		c := cell(contender, level, from, to, perSecond*k, status, responsive)
		c.Repeat = i + 1
		out = append(out, c)
	}
	return out
}

// withFigures gives c these figures, and only them.
func withFigures(c *results.Cell, f *streamload.Figures) {
	c.Figures, c.Numbers, c.Faults = nil, nil, nil
	if err := c.PutFigures(f); err != nil {
		panic(err)
	}
}

// judge summarises the run's cells, as the lab does before judging, and judges it.
func judgeRun(t *testing.T, run *results.Run) ([]results.Verdict, []results.Claim) {
	t.Helper()
	var err error
	if run.Summary, err = results.Summarise(run.Cells); err != nil {
		t.Fatal(err)
	}
	return Scenario{}.Judge(run)
}

func TestJudgeReadsMemoryAndCost(t *testing.T) {
	run := &results.Run{Contenders: []results.Contender{{Name: "good"}, {Name: "costly"}, {Name: "leaky"}}}
	add := func(cs ...results.Cell) { run.Cells = append(run.Cells, cs...) }
	ok := results.OutcomeOK
	// good: bounded with back-pressure, dies without; back-pressure costs 10 %
	add(cell("good", SlowOn, 300, 310, 500, ok, true), cell("good", SlowOff, 300, 1000, 400, results.OutcomeOutOfMemory, false))
	add(three("good", ThroughputOn, 300, 320, 900_000, ok, true)...)
	add(three("good", ThroughputOff, 300, 900, 1_000_000, ok, true)...)
	// costly: bounded, but half the throughput
	add(cell("costly", SlowOn, 200, 205, 500, ok, true), cell("costly", SlowOff, 200, 1000, 400, results.OutcomeOutOfMemory, false))
	add(three("costly", ThroughputOn, 200, 210, 400_000, ok, true)...)
	add(three("costly", ThroughputOff, 200, 600, 1_000_000, ok, true)...)
	// leaky: grows with back-pressure on, and without it grows but lives
	add(cell("leaky", SlowOn, 200, 700, 500, ok, true), cell("leaky", SlowOff, 200, 800, 400, ok, true))
	verdicts, claims := judgeRun(t, run)
	got := map[string]string{}
	for _, v := range verdicts {
		got[v.Contender] = v.Verdict
	}
	if got["good"] != "bounded" || got["costly"] != "bounded, costly" || got["leaky"] != "unbounded" {
		t.Fatalf("verdicts %v", verdicts)
	}
	// leaky lived, its memory on its way to the cap: that holds the claim as a death does
	if claims[0].Verdict != "holds" || !strings.Contains(claims[0].Why, "grew towards the cap, to reach it within 10× the load's length: leaky") {
		t.Errorf("claim a: %+v", claims[0])
	}
	// memory: 2 of 3 bounded; the cost: 1 of the 2 bounded within 20 %
	if claims[1].Verdict != "partly" || !strings.Contains(claims[1].Why, "the cost of back-pressure at most 20 % in 1 of 2, more in 1") ||
		!strings.Contains(claims[1].Why, "costly (throughput-on 400000 msg/s with back-pressure, throughput-off 1000000 without: cost +60 %; with over without: ratio 0.4, 90 % interval 0.396–0.404 (3 against 3 repeats), wholly below ×0.8") || !strings.Contains(claims[1].Why, "not bounded: leaky") {
		t.Errorf("claim b: %+v", claims[1])
	}

	only := &results.Run{Contenders: []results.Contender{{Name: "good"}}, Cells: run.Cells[:8]}
	_, claims = judgeRun(t, only)
	if claims[0].Verdict != "holds" || claims[1].Verdict != "holds" {
		t.Errorf("one good contender: %+v", claims)
	}
	_, claims = judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "x"}}})
	if claims[0].Verdict != "untested" || claims[1].Verdict != "untested" {
		t.Errorf("nothing run: %+v", claims)
	}
	// Slow readers only (the matrix's form): bounded, the cost untested, no mark against it.
	slowOnly := &results.Run{Contenders: []results.Contender{{Name: "good"}}, Cells: run.Cells[:2]}
	_, claims = judgeRun(t, slowOnly)
	if claims[1].Verdict != results.ClaimHoldsWhereTested || !strings.Contains(claims[1].Why, "untested: the cost of back-pressure") || !strings.Contains(claims[1].Why, "good (no throughput levels run)") {
		t.Errorf("bounded, cost unmeasured: %+v", claims[1])
	}
}

func TestAnUnresponsiveServerFailedEvenIfItLived(t *testing.T) {
	f := FateOf(cell("x", SlowOff, 300, 900, 10, results.OutcomeOK, false))
	if f.Failed != "unresponsive" || f.Bounded() || shapeOfRepeat(f) != Failed || !strings.Contains(f.String(), "unanswered for 8.0 s from 3.0 s") {
		t.Fatalf("%+v %s", f, f)
	}
	// stuck at its heap limit during the load (flat RSS, polls unanswered), answering again
	// once its clients had gone
	c := cell("x", SlowOff, 650, 650, 10, results.OutcomeOK, true)
	figures := &streamload.Figures{PerSecond: 10, Seconds: 10, Responsive: true}
	stats := func(answered func(t float64) bool) {
		figures.StatsTimeline = nil
		for t := 1.0; t <= 11; t++ {
			figures.StatsTimeline = append(figures.StatsTimeline, streamload.StatsSample{T: t, OK: answered(t)})
		}
		withFigures(&c, figures)
	}
	stats(func(t float64) bool { return t < 4 || t > 9 }) // answered at 3 s, unanswered until the poll that ended at 9 s
	if f := FateOf(c); f.Failed != "unresponsive" || !strings.Contains(f.String(), "unanswered for 6.0 s from 3.0 s") {
		t.Fatalf("stalled: %+v %s", f, f)
	}
	stats(func(t float64) bool { return t < 4 || t > 8 }) // 5 s: the limit, just
	if f := FateOf(c); f.Failed != "unresponsive" {
		t.Fatalf("silent for the limit: %+v", f)
	}
	stats(func(t float64) bool { return t < 4 || t > 7 }) // 4 s: short of it
	if f := FateOf(c); f.Failed != "" {
		t.Fatalf("silent for less than the limit: %+v", f)
	}
	stats(func(t float64) bool { return int(t)%2 == 0 || t > 9 }) // every other poll: slow, not silent
	if f := FateOf(c); f.Failed != "" || !f.Bounded() {
		t.Fatalf("every other poll unanswered: %+v", f)
	}
	// the lab's watchdog found it unresponsive: the same word, whatever its stats said
	lab := cell("x", SlowOn, 300, 300, 10, results.OutcomeUnresponsive, true)
	if f := FateOf(lab); f.Failed != "unresponsive" || f.Bounded() {
		t.Fatalf("unresponsive outcome: %+v", f)
	}
}

// A contender whose clients caught it dropping without counting, copying, corrupting, or
// dropping when told not to, is judged faults, never bounded, and no claim counts it.
func TestDeliveryFaultsAreAVerdict(t *testing.T) {
	ok := results.OutcomeOK
	faulty := func(name, level string, f *streamload.Figures) results.Cell {
		c := cell(name, level, 300, 310, 500, ok, true)
		f.PerSecond, f.Seconds, f.Responsive = 500, 10, true
		withFigures(&c, f)
		return c
	}
	dropped := func(n int64) *streamload.Stats { return &streamload.Stats{Generated: 1000, Sent: 1000 - n, Dropped: n} }
	cases := []struct {
		name  string
		cell  results.Cell
		fault string
	}{
		{"gaps beyond what it counted", faulty("x", SlowOn, &streamload.Figures{Gaps: 12, Server: dropped(10)}), "2 lost"},
		{"copies", faulty("x", SlowOn, &streamload.Figures{Duplicated: 3, Server: dropped(0)}), "3 duplicated"},
		{"corrupt frames", faulty("x", ThroughputOn, &streamload.Figures{Malformed: 1, Server: dropped(0)}), "1 malformed"},
		{"out of order", faulty("x", ThroughputOff, &streamload.Figures{OutOfOrder: 2, Lossless: true, Server: dropped(0)}), "2 out-of-order"},
		{"drops told not to", faulty("x", SlowOff, &streamload.Figures{Gaps: 40, Lossless: true, Server: dropped(40)}), "40 dropped-without-backpressure"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			run := &results.Run{Contenders: []results.Contender{{Name: "x"}, {Name: "good"}}, Cells: []results.Cell{
				tt.cell, cell("x", SlowOn, 300, 305, 500, ok, true), // a clean repeat beside it
				cell("good", SlowOn, 300, 310, 500, ok, true), cell("good", SlowOff, 300, 1000, 400, results.OutcomeOutOfMemory, false),
			}}
			run.Cells = append(append(run.Cells, three("good", ThroughputOn, 300, 320, 900_000, ok, true)...), three("good", ThroughputOff, 300, 900, 1_000_000, ok, true)...)
			verdicts, claims := judgeRun(t, run)
			if verdicts[0].Verdict != "faults" || verdicts[0].Tone != results.Bad || !strings.Contains(verdicts[0].Why, tt.cell.Level+": "+tt.fault) {
				t.Errorf("verdict %+v; want faults naming %s: %s", verdicts[0], tt.cell.Level, tt.fault)
			}
			if m, _ := memoryOf(measured(run, "x", tt.cell.Level)); bounded(m) == results.ClaimHolds && tt.cell.Level == SlowOn {
				t.Errorf("a faulty cell is bounded: %+v", m)
			}
			if claims[1].Verdict != "holds" || !strings.Contains(claims[1].Why, "not counted: x (delivery faults") {
				t.Errorf("claim b: %+v; want x left out, good alone holding it", claims[1])
			}
		})
	}
	// gaps all counted as dropped are back-pressure doing its job
	honest := faulty("x", SlowOn, &streamload.Figures{Gaps: 10, Server: dropped(10)})
	if len(honest.Faults) != 0 || !FateOf(honest).Bounded() {
		t.Errorf("counted drops read as faults: %v", honest.Faults)
	}
}

// A baseline that died gives no cost: neither a rate over the seconds it lasted nor none at
// all is set against the side that lived.
func TestADeadBaselineGivesNoCost(t *testing.T) {
	died := func(level string, seconds float64) results.Cell {
		c := cell("x", level, 300, 900, 0, results.OutcomeCrashed, true)
		f := &streamload.Figures{Responsive: true, CutShort: true, Seconds: seconds}
		if seconds > 0 {
			f.PerSecond = 30_000
		}
		withFigures(&c, f)
		return c
	}
	base := []results.Cell{cell("x", SlowOn, 300, 305, 500, results.OutcomeOK, true), cell("x", ThroughputOn, 300, 305, 40_000, results.OutcomeOK, true)}
	for _, tt := range []struct {
		seconds float64
		why     string
	}{
		{2.5, "no throughput cost: throughput-off: it died (crashed) 2.5 s in, after 30000 msg/s over those seconds: a rate that did not last the load is no baseline"},
		{0, "no throughput cost: throughput-off: it did not last the load (crashed): no rate to compare"},
	} {
		run := &results.Run{Contenders: []results.Contender{{Name: "x"}}, Cells: append(slices.Clone(base), died(ThroughputOff, tt.seconds))}
		verdicts, claims := judgeRun(t, run)
		if verdicts[0].Verdict != "bounded" || !strings.Contains(verdicts[0].Why, tt.why) {
			t.Errorf("died after %.1f s: %+v", tt.seconds, verdicts[0])
		}
		if claims[1].Verdict != results.ClaimHoldsWhereTested || !strings.Contains(claims[1].Why, "untested: the cost of back-pressure") || !strings.Contains(claims[1].Why, tt.why) {
			t.Errorf("died after %.1f s: claim b %+v; want the cost untested, saying why", tt.seconds, claims[1])
		}
	}
}

// The cost is measured at the paced levels where the run has them: a baseline that died at
// rate 0 is not used, one that lived at the paced rate is, and the claim's cost part is
// judged on it.
func TestTheCostIsMeasuredWhereBothSidesLived(t *testing.T) {
	ok := results.OutcomeOK
	cells := []results.Cell{
		cell("undertow", SlowOn, 300, 305, 500, ok, true),
		cell("undertow", ThroughputOn, 300, 320, 29_147, ok, true),
		cell("undertow", ThroughputOff, 300, 1000, 335, results.OutcomeOutOfMemory, false),
	}
	// At a paced rate both sides keep up with by construction the cost cannot fail: untested
	// here, the figure kept as context and the condition recorded (the old rule held it).
	lived := append(slices.Clone(cells), cell("undertow", PacedOn, 300, 305, 9_600, ok, true), cell("undertow", PacedOff, 300, 310, 10_000, ok, true))
	_, claims := judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "undertow"}}, Cells: lived})
	if claims[1].Verdict != results.ClaimHoldsWhereTested || !strings.Contains(claims[1].Why, "untested here: the cost of back-pressure: measured at a paced rate both sides keep up with by construction") ||
		!strings.Contains(claims[1].Why, "throughput-paced-on 9600 msg/s with back-pressure, throughput-paced-off 10000 without: cost +4 %") ||
		len(claims[1].Conditions) != 1 || claims[1].Conditions[0].Met || claims[1].Conditions[0].Name != "cost measured at capacity" {
		t.Errorf("both lived at the paced rate: %+v", claims[1])
	}
	costly := append(slices.Clone(cells), cell("undertow", PacedOn, 300, 305, 6_000, ok, true), cell("undertow", PacedOff, 300, 310, 10_000, ok, true))
	if _, claims := judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "undertow"}}, Cells: costly}); claims[1].Verdict != results.ClaimHoldsWhereTested || !strings.Contains(claims[1].Why, "cost +40 %") {
		t.Errorf("40 %% cost at the paced rate: %+v", claims[1])
	}
	dead := append(slices.Clone(cells), cell("undertow", PacedOn, 300, 305, 9_600, ok, true), cell("undertow", PacedOff, 300, 1000, 400, results.OutcomeOutOfMemory, false))
	_, claims = judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "undertow"}}, Cells: dead})
	if claims[1].Verdict != results.ClaimHoldsWhereTested || !strings.Contains(claims[1].Why, "throughput-paced-off: it died (out-of-memory)") || strings.Contains(claims[1].Why, "cost -") {
		t.Errorf("the paced baseline died: %+v; want no cost, and no fall back to rate 0", claims[1])
	}
}

// The findings' cost row reads the levels the claim's cost rests on, so that a verdict on
// the cost always has its figure beside it.
func TestTheCostRowReadsTheLevelsTheVerdictRestsOn(t *testing.T) {
	plan, err := Scenario{}.Plan(scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{}
	for _, l := range plan.Levels {
		run.Scenario.Levels = append(run.Scenario.Levels, results.Level{Name: l.Name})
	}
	on, off := costLevels(run)
	var found bool
	for _, p := range (Scenario{}).Reproduction().Published {
		if p.Per != nil {
			found = true
			if p.Ours.Level != on || p.Per.Level != off || p.Value != 0.8 || p.Differs == nil {
				t.Errorf("cost row reads %s over %s (value %g); the claim's cost rests on %s over %s", p.Ours.Level, p.Per.Level, p.Value, on, off)
			}
		}
	}
	if !found {
		t.Error("no cost row")
	}
}

// A contender whose slow-consumer cell was client-bound gets no verdict on its memory, and
// no claim counts it.
func TestAClientBoundCellIsInconclusive(t *testing.T) {
	c := cell("x", SlowOn, 300, 305, 500, results.OutcomeOK, true)
	c.ClientBound = true
	run := &results.Run{Contenders: []results.Contender{{Name: "x"}}, Cells: []results.Cell{c}}
	verdicts, claims := judgeRun(t, run)
	if verdicts[0].Verdict != "inconclusive (client-bound)" || claims[1].Verdict != "untested" || !strings.Contains(claims[1].Why, "x (client-bound at slow-on)") {
		t.Errorf("verdict %+v, claim %+v", verdicts[0], claims[1])
	}
}

// rising is a slow-off cell of a load of seconds whose RSS follows rss(t), sampled every
// second, under a 1024 MB cap.
func rising(name string, seconds float64, status string, rss func(t float64) float64) results.Cell {
	c := cell(name, SlowOff, 0, 0, 10, status, true)
	c.Seconds, c.Server.Timeline, c.Server.Summary.RSSMBMax = seconds, nil, 0
	for t := 0.0; t <= seconds; t++ {
		c.Server.Timeline = append(c.Server.Timeline, results.Sample{T: t, RSSMB: rss(t)})
		c.Server.Summary.RSSMBMax = max(c.Server.Summary.RSSMBMax, rss(t))
	}
	return c
}

// Claim (a) is judged on the trend: memory growing steadily towards the cap holds it though
// the run ended first (the undertow: 534 MB of 1,024 MB, +62 MB in the last third of
// 30 s); flat memory, or growth too slow to reach the cap within 10× the load, fails it.
func TestClaimAIsJudgedOnTheTrend(t *testing.T) {
	ok := results.OutcomeOK
	cases := []struct {
		name    string
		cell    results.Cell
		verdict string
		whyHas  string
	}{
		{"growing, the run ended first", rising("undertow", 30, ok, func(t float64) float64 { return 348 + 6.2*t }), results.ClaimHolds,
			"+6.2 MB/s over the last two thirds: the 1024 MB cap 79 s after the load's end (3.6× its 30 s)"},
		{"flat", rising("undertow", 30, ok, func(t float64) float64 { return 500 + 3*math.Sin(t) }), results.ClaimFails, "held its memory: undertow"},
		{"growing too slowly to reach the cap within 10×", rising("undertow", 30, ok, func(t float64) float64 { return 400 + 0.5*t }), results.ClaimFails, "the 1024 MB cap 1218 s after the load's end (41.6× its 30 s)"},
		{"died of it", rising("undertow", 12, results.OutcomeOutOfMemory, func(t float64) float64 { return 600 + 35*t }), results.ClaimHolds, "failed: undertow (failed in 1 of 1 repeats"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, claims := judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "undertow"}}, Cells: []results.Cell{tt.cell}})
			if claims[0].Verdict != tt.verdict || !strings.Contains(claims[0].Why, tt.whyHas) {
				t.Errorf("claim a: %s (%s); want %s saying %q", claims[0].Verdict, claims[0].Why, tt.verdict, tt.whyHas)
			}
		})
	}
	// two samples in the last two thirds are no trend: not counted, never a mark either way
	few := rising("undertow", 30, ok, func(t float64) float64 { return 400 + 6*t })
	few.Server.Timeline = few.Server.Timeline[:12]
	_, claims := judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "undertow"}}, Cells: []results.Cell{few}})
	if claims[0].Verdict != results.ClaimUntested || !strings.Contains(claims[0].Why, "no trend to judge") {
		t.Errorf("too few samples: %+v", claims[0])
	}
}

func TestLeastSquares(t *testing.T) {
	slope, intercept, ok := leastSquares([]float64{1, 2, 3, 4}, []float64{3, 5, 7, 9})
	if !ok || math.Abs(slope-2) > 1e-9 || math.Abs(intercept-1) > 1e-9 {
		t.Errorf("slope %g intercept %g ok %v; want 2, 1", slope, intercept, ok)
	}
	if _, _, ok := leastSquares([]float64{1, 2}, []float64{1, 2}); ok {
		t.Error("a line through two points")
	}
	if _, _, ok := leastSquares([]float64{2, 2, 2}, []float64{1, 2, 3}); ok {
		t.Error("a line through points at one x")
	}
}

// The published figures say why ours differs from the run's recorded cores and load.
func TestPublishedDiffersFromTheRunsConditions(t *testing.T) {
	plan, err := Scenario{}.Plan(scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{Env: results.Environment{ServerCPUs: "1"}}
	for _, l := range plan.Levels {
		run.Scenario.Levels = append(run.Scenario.Levels, results.Level{Name: l.Name, Streams: l.Load.Describe().Streams})
	}
	pub := Scenario{}.Reproduction().Published
	if pub[0].Value != 1_351_598 {
		t.Errorf("delivered: value %g", pub[0].Value)
	}
	got := pub[0].Differs(run, 29_147)
	for _, w := range []string{"337900 messages/s a core", "Here 1 server core(s), 100 clients fed as fast as the server can", "1 core(s) deliver 337900 messages/s; ours is 0.09× that"} {
		if !strings.Contains(got, w) {
			t.Errorf("delivered differs %q lacks %q", got, w)
		}
	}
	if got := pub[1].Differs(run, 0.3); !strings.Contains(got, "100 fast readers fed 10000 messages/s in all") || !strings.Contains(got, "30 %") {
		t.Errorf("cost differs %q", got)
	}
	if got := pub[0].Differs(&results.Run{}, 29_147); got != "" {
		t.Errorf("differs without the run's conditions: %q", got)
	}
}

// The cost at capacity over the repeats: at most 20 % holds on the ratio's interval, a gain
// reads as a gain, and an interval across ×0.8 shows nothing.
func TestTheCostAtCapacityOnItsInterval(t *testing.T) {
	ok := results.OutcomeOK
	runWith := func(on, off float64) results.Claim {
		cells := []results.Cell{cell("x", SlowOn, 300, 305, 500, ok, true)}
		cells = append(append(cells, three("x", ThroughputOn, 300, 305, on, ok, true)...), three("x", ThroughputOff, 300, 320, off, ok, true)...)
		_, claims := judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "x"}}, Cells: cells})
		return claims[1]
	}
	if c := runWith(1_050_000, 1_000_000); c.Verdict != results.ClaimHolds || !strings.Contains(c.Why, "a gain of 5 %, no cost") || strings.Contains(c.Why, "cost -") {
		t.Errorf("a gain: %+v", c)
	}
	if c := runWith(800_000, 1_000_000); c.Verdict != results.ClaimHoldsWhereTested || !strings.Contains(c.Why, "ratio 0.8, 90 % interval 0.792–0.808 (3 against 3 repeats), across ×0.8") {
		t.Errorf("at the line: %+v", c)
	}
}

// One growth rule for (a) and (b), over all the repeats: the same shape reads the same with
// or without back-pressure (the netty, +13.1 MB/s with back-pressure, called bounded
// beside undertow's +4.8 MB/s called growing), and repeats that disagree show nothing.
func TestOneGrowthRule(t *testing.T) {
	ok := results.OutcomeOK
	growing := func(level string) results.Cell {
		c := rising("netty", 30, ok, func(t float64) float64 { return 300 + 13.1*t })
		c.Level = level
		return c
	}
	flat := func(level string) results.Cell {
		c := rising("netty", 30, ok, func(t float64) float64 { return 500 + 3*math.Sin(t) })
		c.Level = level
		return c
	}
	_, claims := judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "netty"}}, Cells: []results.Cell{growing(SlowOn), growing(SlowOff)}})
	if claims[0].Verdict != results.ClaimHolds || claims[1].Verdict != results.ClaimFails || !strings.Contains(claims[1].Why, "not bounded: netty (grows towards the cap in 1 of 1 repeats") {
		t.Errorf("the same growth: (a) %s, (b) %s (%s)", claims[0].Verdict, claims[1].Verdict, claims[1].Why)
	}
	_, claims = judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "netty"}}, Cells: []results.Cell{flat(SlowOn), flat(SlowOff)}})
	if claims[0].Verdict != results.ClaimFails || claims[1].Verdict != results.ClaimHoldsWhereTested {
		t.Errorf("the same plateau: (a) %s, (b) %s (%s)", claims[0].Verdict, claims[1].Verdict, claims[1].Why)
	}
	// two repeats grow, one holds: no worst of three, not shown either way
	mixed := []results.Cell{growing(SlowOff), growing(SlowOff), flat(SlowOff)}
	for i := range mixed {
		mixed[i].Repeat = i + 1
	}
	_, claims = judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "netty"}}, Cells: mixed})
	if claims[0].Verdict != results.ClaimNotShown || !strings.Contains(claims[0].Why, "the 3 repeats disagree (grows towards the cap, grows towards the cap, a plateau): not shown") {
		t.Errorf("repeats disagree: %+v", claims[0])
	}
	mixedOn := slices.Clone(mixed)
	for i := range mixedOn {
		mixedOn[i].Level = SlowOn
	}
	if verdicts, _ := judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "netty"}}, Cells: mixedOn}); verdicts[0].Verdict != NotShown.Text {
		t.Errorf("verdict with repeats disagreeing: %+v", verdicts[0])
	}
}
