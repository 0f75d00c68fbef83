package stream

import (
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
	want := map[string]string{ThroughputOn: "on", ThroughputOff: "off", SlowOn: "on", SlowOff: "off"}
	if len(p.Levels) != 4 {
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
	}
	seed, _ := Scenario{}.Plan(scenario.Options{Preset: "seed"})
	if ld := seed.Levels[0].Load.(streamload.Load); ld.Clients != 1000 || ld.Rate != 1500 {
		t.Errorf("seed: %+v", ld)
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
	add(cell("good", SlowOn, 300, 310, 500, ok, true), cell("good", SlowOff, 300, 1000, 400, results.OutcomeOutOfMemory, false),
		cell("good", ThroughputOn, 300, 320, 900_000, ok, true), cell("good", ThroughputOff, 300, 900, 1_000_000, ok, true))
	// costly: bounded, but half the throughput
	add(cell("costly", SlowOn, 200, 205, 500, ok, true), cell("costly", SlowOff, 200, 1000, 400, results.OutcomeOutOfMemory, false),
		cell("costly", ThroughputOn, 200, 210, 400_000, ok, true), cell("costly", ThroughputOff, 200, 600, 1_000_000, ok, true))
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
	if claims[0].Verdict != "partly" || !strings.Contains(claims[0].Why, "grew but lasted the run: leaky") {
		t.Errorf("claim a: %+v", claims[0])
	}
	if claims[1].Verdict != "partly" || !strings.Contains(claims[1].Why, "costing more than 20 %: costly") || !strings.Contains(claims[1].Why, "not bounded: leaky") {
		t.Errorf("claim b: %+v", claims[1])
	}

	only := &results.Run{Contenders: []results.Contender{{Name: "good"}}, Cells: run.Cells[:4]}
	_, claims = judgeRun(t, only)
	if claims[0].Verdict != "holds" || claims[1].Verdict != "holds" {
		t.Errorf("one good contender: %+v", claims)
	}
	_, claims = judgeRun(t, &results.Run{Contenders: []results.Contender{{Name: "x"}}})
	if claims[0].Verdict != "untested" || claims[1].Verdict != "untested" {
		t.Errorf("nothing run: %+v", claims)
	}
	// Slow readers only (the matrix's form): bounded, but the cost is untested, never held.
	slowOnly := &results.Run{Contenders: []results.Contender{{Name: "good"}}, Cells: run.Cells[:2]}
	_, claims = judgeRun(t, slowOnly)
	if claims[1].Verdict != "partly" || !strings.Contains(claims[1].Why, "bounded, its cost not measured (no throughput levels): good") {
		t.Errorf("bounded, cost unmeasured: %+v", claims[1])
	}
}

func TestAnUnresponsiveServerFailedEvenIfItLived(t *testing.T) {
	f := FateOf(cell("x", SlowOff, 300, 900, 10, results.OutcomeOK, false))
	if f.Failed != "unresponsive" || f.Bounded() || !f.Grew() || !strings.Contains(f.String(), "unanswered for 8.0 s from 3.0 s") {
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
				cell("good", ThroughputOn, 300, 320, 900_000, ok, true), cell("good", ThroughputOff, 300, 900, 1_000_000, ok, true),
			}}
			verdicts, claims := judgeRun(t, run)
			if verdicts[0].Verdict != "faults" || verdicts[0].Tone != results.Bad || !strings.Contains(verdicts[0].Why, tt.cell.Level+": "+tt.fault) {
				t.Errorf("verdict %+v; want faults naming %s: %s", verdicts[0], tt.cell.Level, tt.fault)
			}
			if f, _ := worst(measured(run, "x", tt.cell.Level)); f.Bounded() && tt.cell.Level == SlowOn {
				t.Errorf("a faulty cell is bounded: %+v", f)
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

// A rate is over the time it was measured: a server that died during its throughput run has
// its rate over the seconds it lasted, or none, and the verdict says which.
func TestADeadServersRateSaysWhatItIsOver(t *testing.T) {
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
	run := &results.Run{Contenders: []results.Contender{{Name: "x"}}, Cells: append(base, died(ThroughputOff, 2.5))}
	verdicts, _ := judgeRun(t, run)
	if !strings.Contains(verdicts[0].Why, "40000 msg/s with back-pressure, 30000 without") || !strings.Contains(verdicts[0].Why, "it died (crashed) 2.5 s in: its rate is over those 2.5 s") {
		t.Errorf("died after 2.5 s: %s", verdicts[0].Why)
	}
	run = &results.Run{Contenders: []results.Contender{{Name: "x"}}, Cells: append(base, died(ThroughputOff, 0))}
	verdicts, _ = judgeRun(t, run)
	if !strings.Contains(verdicts[0].Why, "no throughput cost: throughput without back-pressure: it died (crashed) within a second: no rate") {
		t.Errorf("died at once: %s", verdicts[0].Why)
	}
	if off := run.Summary[len(run.Summary)-1]; off.Level != ThroughputOff {
		t.Fatalf("summary order: %+v", run.Summary)
	} else if _, has := off.Numbers[streamload.NumberDelivered]; has {
		t.Errorf("a rate for a load with none: %+v", off.Numbers)
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
