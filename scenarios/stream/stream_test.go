package stream

import (
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/probe"
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
		if l.Env["BACKPRESSURE"] != want[l.Name] || !l.MemoryCap || l.Driver.Feature() != "stream" {
			t.Errorf("%s: env %v cap %v", l.Name, l.Env, l.MemoryCap)
		}
		ld := l.Driver.(streamload.Load)
		if strings.HasPrefix(l.Name, "slow") != (ld.Slow == ld.Clients && ld.ReadDelay == 200*time.Millisecond) {
			t.Errorf("%s: %d slow of %d, delay %s", l.Name, ld.Slow, ld.Clients, ld.ReadDelay)
		}
		if ld.Clients != quickShape.clients || ld.Size != 250 {
			t.Errorf("%s: %+v", l.Name, ld)
		}
	}
	seed, _ := Scenario{}.Plan(scenario.Options{Preset: "seed"})
	if ld := seed.Levels[0].Driver.(streamload.Load); ld.Clients != 1000 || ld.Rate != 1500 {
		t.Errorf("seed: %+v", ld)
	}
	if d, _ := (Scenario{}).Plan(scenario.Options{Duration: 3 * time.Second}); d.Levels[3].Driver.(streamload.Load).Duration != 3*time.Second {
		t.Error("--duration is not honoured")
	}
	if _, err := (Scenario{}).Plan(scenario.Options{Preset: "nope"}); err == nil || !strings.Contains(err.Error(), "default, seed") {
		t.Errorf("bad preset: %v", err)
	}
}

// cell builds a measured cell whose RSS goes from → to over 10 s.
func cell(contender, level string, from, to, perSecond float64, status string, responsive bool) results.Cell {
	c := results.Cell{Contender: contender, Level: level, Repeat: 1, Seconds: 10,
		Outcome: results.Outcome{Status: status}, Memory: &results.Memory{CapMB: 1024, By: "cgroup"},
		Stream: &results.Stream{PerSecond: perSecond, Responsive: responsive}}
	for i := 0; i <= 10; i++ {
		rss := from + (to-from)*float64(i)/10
		c.Server.Timeline = append(c.Server.Timeline, probe.Sample{T: float64(i), RSSMB: rss})
		c.Server.Summary.RSSMBMax = max(c.Server.Summary.RSSMBMax, rss)
	}
	return c
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
	verdicts, claims := Scenario{}.Judge(run)
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
	_, claims = Scenario{}.Judge(only)
	if claims[0].Verdict != "holds" || claims[1].Verdict != "holds" {
		t.Errorf("one good contender: %+v", claims)
	}
	_, claims = Scenario{}.Judge(&results.Run{Contenders: []results.Contender{{Name: "x"}}})
	if claims[0].Verdict != "untested" || claims[1].Verdict != "untested" {
		t.Errorf("nothing run: %+v", claims)
	}
}

func TestAnUnresponsiveServerFailedEvenIfItLived(t *testing.T) {
	f := FateOf(cell("x", SlowOff, 300, 900, 10, results.OutcomeOK, false))
	if f.Failed != "unresponsive" || f.Bounded() || !f.Grew() {
		t.Fatalf("%+v", f)
	}
	// stuck at its heap limit during the load (flat RSS, polls unanswered), answering again
	// once its clients had gone
	c := cell("x", SlowOff, 650, 650, 10, results.OutcomeOK, true)
	for i := 1; i <= 10; i++ {
		c.Stream.StatsTimeline = append(c.Stream.StatsTimeline, results.StatsSample{T: float64(i), OK: i < 6})
	}
	c.Stream.StatsFailed = 5
	if f := FateOf(c); f.Failed != "unresponsive" || !strings.Contains(f.String(), "5 of 10 stats polls unanswered") {
		t.Fatalf("stalled: %+v %s", f, f)
	}
	c.Stream.StatsFailed = 1 // one slow poll is no outage
	if f := FateOf(c); f.Failed != "" || !f.Bounded() {
		t.Fatalf("one unanswered poll: %+v", f)
	}
}
