package compare

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/golden"
	"github.com/arena-lab/arena/internal/results"
)

// runOf is a run of sleep-c200 with a repeat per value of rps, latencies following the rate
// (Little: 200 connections over the rate), spring-mvc started with env.
func runOf(id string, env map[string]string, rps ...float64) *results.Run {
	r := &results.Run{ID: id, Started: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC),
		Scenario:   results.ScenarioInfo{Name: "sleep", Preset: "seed", Quick: true, Repeat: len(rps), Levels: []results.Level{{Name: "sleep-c200", Load: "closed loop, 200 connections"}}},
		Env:        results.Environment{HeapMB: 512, ServerCPUs: "1", ClientCPUs: "0", Host: "lab"},
		Contenders: []results.Contender{{Name: "spring-mvc", BuildHash: "abc"}}}
	for i, v := range rps {
		ms := 200 / v * 1000
		r.Cells = append(r.Cells, results.Cell{Contender: "spring-mvc", Level: "sleep-c200", Repeat: i + 1, Env: env,
			Outcome: results.Outcome{Status: results.OutcomeOK},
			Tags: []results.Tag{{TagStats: results.TagStats{Tag: "sleep", Completed: 1000}, RPS: v,
				Response: results.Latency{P50: ms, P99: ms * 1.1, P999: ms * 1.2}}}})
	}
	r.Summary = []results.CellSummary{{Contender: "spring-mvc", Level: "sleep-c200"}}
	return r
}

func TestCompareWorkerThreads(t *testing.T) {
	a := runOf("20261123-100000-sleep", map[string]string{}, 1985, 1990, 1978, 1992, 1984)
	b := runOf("20261123-101000-sleep", map[string]string{"WORKER_THREADS": "11"}, 109, 110, 108, 111, 109.5)
	c, err := Runs(a, b, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Rows) != 4 {
		t.Fatalf("%d rows, want the four figures", len(c.Rows))
	}
	for _, r := range c.Rows {
		if !r.Significant(c.Alpha) || r.Test.P != 2.0/252 {
			t.Errorf("%s: p %.4f, want 2/252: five repeats apart", r.Figure, r.Test.P)
		}
		if r.Better() {
			t.Errorf("%s: 11 request threads made it better", r.Figure)
		}
	}
	if ch := c.Rows[0].Change(); ch > -0.94 || ch < -0.95 {
		t.Errorf("requests/s change %.3f, want about −94.5 %%", ch)
	}
	if strings.Join(c.Differs, "; ") != "spring-mvc: WORKER_THREADS unset → 11" {
		t.Errorf("differs %v", c.Differs)
	}
	var buf bytes.Buffer
	if err := Write(&buf, c); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "worker-threads.txt", buf.Bytes())
}

// A contender against itself: the repeats overlap, nothing is significant, "~".
func TestCompareItself(t *testing.T) {
	a := runOf("a", nil, 1985, 1990, 1978, 1992, 1984)
	b := runOf("b", nil, 1988, 1981, 1993, 1979, 1986)
	c, err := Runs(a, b, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Rows {
		if r.Significant(c.Alpha) || ChangeText(r, c.Alpha) != "~" {
			t.Errorf("%s: p %.3f, %s; want ~", r.Figure, r.Test.P, ChangeText(r, c.Alpha))
		}
	}
	if len(c.Differs) != 0 {
		t.Errorf("differs %v", c.Differs)
	}
}

// Three repeats each can never be significant at 0.05 (the least P is 0.1): it says so.
func TestCompareTooFewRepeats(t *testing.T) {
	c, err := Runs(runOf("a", nil, 1985, 1990, 1978), runOf("b", nil, 109, 110, 108), DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	if c.Rows[0].Significant(c.Alpha) || !strings.Contains(c.TooFew(), "with 3 and 3 repeats the least P a U test can give is 0.100") {
		t.Errorf("p %.3f, note %q", c.Rows[0].Test.P, c.TooFew())
	}
	if c, _ := Runs(runOf("a", nil, 1, 2, 3, 4), runOf("b", nil, 5, 6, 7, 8), DefaultAlpha); c.TooFew() != "" {
		t.Errorf("four repeats each can reach 0.029: %q", c.TooFew())
	}
	if LeastP(5, 5) != 2.0/252 || LeastP(1, 1) != 1 {
		t.Errorf("LeastP(5,5) %v, LeastP(1,1) %v", LeastP(5, 5), LeastP(1, 1))
	}
}

func TestCompareRefuses(t *testing.T) {
	base := func() *results.Run { return runOf("20261123-100000-sleep", nil, 1, 2, 3) }
	for _, tt := range []struct {
		name string
		edit func(*results.Run)
		want string
	}{
		{"another scenario", func(r *results.Run) { r.ID, r.Scenario.Name = "20261123-110000-isolation", "isolation" },
			"20261123-100000-sleep is a run of sleep and 20261123-110000-isolation of isolation: compare two runs of one scenario"},
		{"another preset", func(r *results.Run) { r.Scenario.Preset = "steady" }, "ran preset seed and b preset steady: compare two runs of one preset"},
		{"another form", func(r *results.Run) { r.Scenario.Quick = false }, "ran the quick form and b the full: compare two runs of one form"},
		{"another load", func(r *results.Run) { r.Scenario.Levels[0].Load = "closed loop, 200 connections for 30s" },
			"level sleep-c200 ran different loads: closed loop, 200 connections in 20261123-100000-sleep, closed loop, 200 connections for 30s in b"},
		{"no contender in common", func(r *results.Run) {
			for i := range r.Cells {
				r.Cells[i].Contender = "netty"
			}
		}, "share no contender at a level that ended ok in both"},
		{"nothing ok", func(r *results.Run) {
			for i := range r.Cells {
				r.Cells[i].Outcome.Status = results.OutcomeCrashed
			}
		}, "nothing to compare"},
	} {
		b := base()
		b.ID = "b"
		tt.edit(b)
		if _, err := Runs(base(), b, DefaultAlpha); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v; want %q", tt.name, err, tt.want)
		}
	}
}

// A repeat whose deliveries had integrity faults, or whose client may have set the pace, is
// not the server's figure: it is left out of the samples, and the comparison says so.
func TestFaultyAndClientBoundRepeatsAreLeftOut(t *testing.T) {
	a := runOf("20261123-100000-sleep", map[string]string{}, 1985, 1990, 1978, 1992, 1984)
	b := runOf("20261123-101000-sleep", map[string]string{}, 1980, 1991, 99999, 1990, 5)
	b.Cells[2].Faults = map[string]int64{results.FaultDuplicated: 3}
	b.Cells[4].ClientBound, b.Cells[4].ClientBoundWhy = true, "client CPU 97% of 1 core(s)"
	c, err := Runs(a, b, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Rows {
		if len(r.A) != 5 || len(r.B) != 3 {
			t.Fatalf("%s: %d and %d samples, want 5 and the 3 usable", r.Figure, len(r.A), len(r.B))
		}
		if r.Significant(c.Alpha) {
			t.Errorf("%s: the left-out repeats made a change significant", r.Figure)
		}
	}
	got := strings.Join(c.LeftOut, "\n")
	for _, want := range []string{"B: spring-mvc sleep-c200 repeat 3 left out (integrity faults: 3 duplicated)", "B: spring-mvc sleep-c200 repeat 5 left out (client-bound: client CPU 97% of 1 core(s))"} {
		if !strings.Contains(got, want) {
			t.Errorf("left out %q, want %q", got, want)
		}
	}
}

// A side that answered a tenth of its requests with a 503 is shown with its error rate, and
// its higher requests/s is not read as better: its change reads failing. Timeouts count in
// the error rate but are slow answers, not failures.
func TestCompareFailingSide(t *testing.T) {
	a := runOf("20261123-100000-sleep", map[string]string{}, 1985, 1990, 1978, 1992, 1984)
	b := runOf("20261123-101000-sleep", map[string]string{}, 2985, 2990, 2978, 2992, 2984)
	for i := range a.Cells {
		a.Cells[i].Tags[0].Sent, a.Cells[i].Tags[0].Errors = 1000, map[string]int64{results.ErrKindTimeout: 20}
		b.Cells[i].Tags[0].Sent, b.Cells[i].Tags[0].Errors = 1000, map[string]int64{"status": 100}
	}
	c, err := Runs(a, b, DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	c.MaxFailedPct = 1
	r := c.Rows[0]
	if r.Figure != "requests/s" || r.ErrA != 2 || r.ErrB != 10 || r.FailedA != 0 || r.FailedB != 10 {
		t.Fatalf("row %s: errors A %.1f %% (failed %.1f), B %.1f %% (failed %.1f); want 2 (0) and 10 (10)", r.Figure, r.ErrA, r.FailedA, r.ErrB, r.FailedB)
	}
	if !r.Better() || c.Failing(r) != "B" || c.ChangeOf(r) != "failing: B" {
		t.Errorf("B, 50 %% faster on 10 %% 503s: failing %q, change %q", c.Failing(r), c.ChangeOf(r))
	}
	var buf bytes.Buffer
	if err := Write(&buf, c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "A ERRORS") || !strings.Contains(buf.String(), "2.0 %") || !strings.Contains(buf.String(), "10.0 %") || strings.Contains(buf.String(), "+50") {
		t.Errorf("the table:\n%s", buf.String())
	}
	c.MaxFailedPct = 0
	if c.Failing(r) != "" || c.ChangeOf(r) == "failing: B" {
		t.Errorf("no threshold set, and still failing: %q", c.ChangeOf(r))
	}
}
