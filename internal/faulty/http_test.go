package faulty

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/load/engine"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/scenarios/downstream"
	"github.com/arena-lab/arena/scenarios/isolation"
)

// driven is one cell: the wrapped server with fault driven through level's warm-ups and
// load by the lab's engine, recorded as the lab records a cell's tags.
func driven(t *testing.T, fault Fault, lv scenario.Level) results.Cell {
	t.Helper()
	s, err := Start("127.0.0.1:0", fault, true)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	eng, err := engine.New(s.Addr(), engine.Options{Loops: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	target := load.Target{Addr: s.Addr(), Driver: eng}
	ctx := context.Background()
	for _, w := range lv.Warmup {
		if _, err := w.Run(ctx, target, load.NewRecorder(time.Now(), nil)); err != nil {
			t.Fatalf("%s warm-up: %v", fault, err)
		}
	}
	began := time.Now()
	rec := load.NewRecorder(began, nil)
	if _, err := lv.Load.Run(ctx, target, rec); err != nil {
		t.Fatalf("%s load: %v", fault, err)
	}
	over := time.Since(began)
	if d := lv.Load.Describe(); d.Paced {
		over = d.Duration
	}
	cell := results.Cell{Contender: "wrapped-" + string(fault), Level: lv.Name, Repeat: 1, Outcome: results.Outcome{Status: results.OutcomeOK}}
	for _, tr := range rec.Results() {
		tag := results.Tag{TagStats: tr.TagStats, Response: results.LatencyOf(tr.Response), Service: results.LatencyOf(tr.Service),
			RPS: float64(tr.Completed) / over.Seconds()}
		tag.ResponseHist, _ = results.EncodeHist(tr.Response)
		tag.ServiceHist, _ = results.EncodeHist(tr.Service)
		cell.Tags = append(cell.Tags, tag)
	}
	t.Logf("recorded %s at %s: %s", fault, lv.Name, tagLine(cell))
	return cell
}

func tagLine(c results.Cell) string {
	var out []string
	for _, tg := range c.Tags {
		out = append(out, tg.Tag+" "+results.FormatMs(tg.Response.P99)+" "+results.FormatFaults(tg.Errors))
	}
	return strings.Join(out, "; ")
}

// judgedBy summarises cells as the lab does at the end of a run and has s judge them.
func judgedBy(t *testing.T, s scenario.Scenario, run *results.Run, cells ...results.Cell) map[string][]results.Verdict {
	t.Helper()
	run.Cells = cells
	for _, c := range cells {
		run.Contenders = append(run.Contenders, results.Contender{Name: c.Contender})
	}
	var err error
	if run.Summary, err = results.Summarise(cells); err != nil {
		t.Fatal(err)
	}
	run.Verdicts, run.Claims = s.Judge(run)
	by := map[string][]results.Verdict{}
	for _, v := range run.Verdicts {
		by[v.Contender] = append(by[v.Contender], v)
		t.Logf("judged %s at %s: %s (%s)", v.Contender, v.Level, v.Verdict, v.Why)
	}
	return by
}

// The reference server shedding load, a fast 503 on /instant and the probes while /delayed
// waits, is driven by the isolation scenario's own load and judged by its own judge: failing
// (errors), never isolated, and no claim counts it isolated. The same server unwrapped is
// isolated.
func TestA503ServerIsNeverIsolated(t *testing.T) {
	if testing.Short() {
		t.Skip("drives servers for seconds")
	}
	plan, err := isolation.Scenario{}.Plan(scenario.Options{Quick: true, Duration: 4 * time.Second, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	lv := plan.Levels[0]
	run := &results.Run{Scenario: results.ScenarioInfo{Name: "isolation", Preset: plan.Preset, Duration: 4, Timeout: 2}}
	by := judgedBy(t, isolation.Scenario{}, run, driven(t, None, lv), driven(t, Unavailable503, lv))
	if v := by["wrapped-"+string(None)]; len(v) != 1 || v[0].Verdict != isolation.Isolated.Text {
		t.Errorf("the unwrapped server: %+v, want isolated", v)
	}
	v := by["wrapped-"+string(Unavailable503)]
	if len(v) != 1 || v[0].Verdict != scenario.Failing.Text || !strings.Contains(v[0].Why, "status") {
		t.Errorf("the 503 server: %+v, want failing (errors) naming wrong statuses", v)
	}
	for _, c := range run.Claims {
		if strings.Contains(c.Why, "wrapped-"+string(Unavailable503)+" isolated") {
			t.Errorf("claim %s counts the 503 server isolated: %s", c.ID, c.Why)
		}
	}
}

// The reference server answering /data/1 with an empty 200, driven by the downstream
// scenario's own load, is failing (errors) and never ranked by its requests/s, however fast;
// the unwrapped one beside it is ranked alone, fastest.
func TestAnEmptyDataServerIsNeverRanked(t *testing.T) {
	if testing.Short() {
		t.Skip("drives servers for seconds")
	}
	plan, err := downstream.Scenario{}.Plan(scenario.Options{Quick: true, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	plan, err = plan.Filter([]string{downstream.LevelSelf})
	if err != nil {
		t.Fatal(err)
	}
	lv := plan.Levels[0]
	run := &results.Run{Scenario: results.ScenarioInfo{Name: "downstream", Preset: plan.Preset}}
	by := judgedBy(t, downstream.Scenario{}, run, driven(t, None, lv), driven(t, EmptyData, lv))
	if v := by["wrapped-"+string(None)]; len(v) != 1 || v[0].Verdict != "fastest" {
		t.Errorf("the unwrapped server: %+v, want fastest", v)
	}
	v := by["wrapped-"+string(EmptyData)]
	if len(v) != 1 || v[0].Verdict != scenario.Failing.Text || !strings.Contains(v[0].Why, "body") || !strings.Contains(v[0].Why, "not ranked") {
		t.Errorf("the empty-data server: %+v, want failing (errors) on its bodies, not ranked", v)
	}
}
