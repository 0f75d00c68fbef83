package report

import (
	"html"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/compare"
	"github.com/arena-lab/arena/internal/findings"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// fixtureComparison is the downstream fixture against itself with vertx three times faster.
func fixtureComparison(t *testing.T) *compare.Comparison {
	t.Helper()
	a, b := fixtureDownstream(), fixtureDownstream()
	b.ID = "20251122-090000-downstream"
	for i := range b.Cells {
		if b.Cells[i].Contender == "vertx" {
			for j := range b.Cells[i].Tags {
				b.Cells[i].Tags[j].RPS *= 3
			}
		}
	}
	c, err := compare.Runs(a, b, 0.5) // two repeats each: the least P is 1/3
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRenderCompare(t *testing.T) {
	var buf strings.Builder
	if err := RenderCompare(fixtureComparison(t), []byte("/* lib */"), &buf); err != nil {
		t.Fatal(err)
	}
	page := html.UnescapeString(buf.String())
	rows := sectionByID(t, buf.String(), "changes")
	if !strings.Contains(rows, `<span class="badge good">+200.00%</span>`) {
		t.Errorf("vertx's tripled throughput is not a good change:\n%s", rows)
	}
	if !strings.Contains(rows, `<span class="badge neutral">~</span>`) {
		t.Error("unchanged figures are not ~")
	}
	if !strings.Contains(page, "Nothing: the same contract variables, builds and settings.") {
		t.Error("the page does not say nothing else differs")
	}
	data := chartDataOf(t, buf.String())
	if len(data.Bars) != 1 || len(data.Bars[0].Series) != 2 || len(data.Bars[0].Categories) == 0 {
		t.Errorf("the throughput chart: %+v", data.Bars)
	}
}

// A side that failed more of its requests than a judged cell may is never a good change:
// its row says failing, in red, with each side's error rate beside its figure.
func TestRenderCompareFailingSide(t *testing.T) {
	c := fixtureComparison(t)
	for i := range c.Rows {
		if c.Rows[i].Contender == "vertx" {
			c.Rows[i].ErrB, c.Rows[i].FailedB = 10, 10
		}
	}
	c.MaxFailedPct = scenario.MaxFailedPct
	var buf strings.Builder
	if err := RenderCompare(c, []byte("/* lib */"), &buf); err != nil {
		t.Fatal(err)
	}
	rows := sectionByID(t, buf.String(), "changes")
	if strings.Contains(rows, "+200.00%") || !strings.Contains(rows, `<span class="badge bad">failing: B</span>`) || !strings.Contains(rows, "10.0 %") || !strings.Contains(rows, "<th>A errors</th>") {
		t.Errorf("vertx's tripled throughput on 10 %% failed requests:\n%s", rows)
	}
}

func TestChromiumDrawsCompare(t *testing.T) {
	t.Parallel()
	c := fixtureComparison(t)
	browserCheck(t, "compare", func(lib, out string) error { return WriteCompare(c, lib, out) })
}

// fixtureFindings is a reproduction of the downstream study alone, its claim (a) with one of
// the study's figures beside ours.
func fixtureFindings() *findings.Findings {
	run := fixtureDownstream()
	run.Env.ArenaRev = "4f3e949"
	rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-20251120-140000", Command: []string{"arena", "reproduce"},
		Started: run.Started, Status: results.RunComplete, Repeat: 2}
	claim := findings.Claim{ID: "a", Text: "Vert.x serves about 2.5× the throughput of Spring WebFlux.", Verdict: results.ClaimHolds,
		Why: "vertx 9180, spring-webflux 3876 requests/s: 2.37×", RestsOn: "the study's form (preset seed) on the study's stacks: run " + run.ID,
		Every: &results.Claim{ID: "a", Verdict: results.ClaimPartly, Why: "over every contender"},
		Figures: []findings.Figure{{
			Published: scenario.Published{Claim: "a", What: "Vert.x, requests/s", Theirs: "6,654.65 requests/s", Source: "seeds/002 line 228"},
			Ours:      findings.Value{Spread: results.Spread{Median: 9180, Min: 9000, Max: 9360}, Measured: true, Unit: "requests/s", Rated: true, ErrorPct: 0.05},
		}, {
			Published: scenario.Published{Claim: "a", What: "WebFlux, requests/s", Theirs: "2,624.96 requests/s", Source: "seeds/002 line 102"},
			Ours:      findings.Value{Spread: results.Spread{Median: 900, Min: 900, Max: 900}, Measured: true, Unit: "requests/s", Rated: true},
			Differs:   findings.NoReason,
		}},
		Conditions: []results.Condition{{Name: "server cores", Needs: 1, Source: "arena's choice", Given: 1, Met: true}},
		ByCores:    []findings.AtCores{{Cores: 1, Verdict: results.ClaimHolds, Why: "2.37×", Run: run.ID}, {Cores: 4, Verdict: results.ClaimFails, Why: "1.1×", Run: "20251120-150000-downstream"}}}
	untested := findings.Claim{ID: "c", Text: "A cluster spreads over cores.", Verdict: results.ClaimUntestedHere, Why: "needs ≥ 4 server cores (seeds/000 line 12), this run gave 1",
		RestsOn:    "nothing: the runs did not give the conditions the claim depends on",
		Conditions: []results.Condition{{Name: "server cores", Needs: 4, Source: "seeds/000 line 12", Given: 1}}}
	return &findings.Findings{Reproduction: rep, Env: run.Env, JudgedBy: "8dde661", Runs: []findings.Run{{Run: run, Step: results.Step{Part: results.PartStudies}}},
		Studies: []findings.Study{{Scenario: "downstream", Title: run.Scenario.Title, Study: run.Scenario.Study,
			Setup: scenario.Setup{Machine: "a GCE instance, 4 vCPUs"}, Ours: scenario.Setup{Machine: "one core"},
			Notes: []string{"the study ran on four cores"}, Runs: []findings.Run{{Run: run}}, Claims: []findings.Claim{claim, untested}, Repeat: 1}}}
}

func TestRenderFindings(t *testing.T) {
	var buf strings.Builder
	f := fixtureFindings()
	f.Reproduction.Finished = ptrTime(f.Reproduction.Started.Add(80 * time.Minute))
	if err := RenderFindings(f, nil, nil, []byte("/* lib */"), &buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	study := html.UnescapeString(sectionByID(t, page, "study-downstream"))
	for _, want := range []string{"a GCE instance, 4 vCPUs", "one core", "Not as the study ran it: the study ran on four cores",
		"6,654.65 requests/s", "9,180 requests/s (9,000–9,360), 0.05 % errors", "seeds/002 line 228", "Over every contender:", ">partly<",
		`href="` + f.Runs[0].ID + `/report.html"`,
		"Why ours differs: " + findings.NoReason, "server cores: needs ≥ 4 (seeds/000 line 12); the run gave 1: not met",
		`<span class="badge neutral">untested here</span>`, "By core count: changes from holds at 1 server core to fails at 4 server cores.",
		"The orders here rest on 1 repeat(s) a cell"} {
		if !strings.Contains(study, want) {
			t.Errorf("the study's section lacks %q", want)
		}
	}
	if claims := sectionByID(t, page, "claims"); !strings.Contains(claims, `href="#claim-downstream-a"`) || !strings.Contains(claims, ">holds<") {
		t.Errorf("the claims table: %s", claims)
	}
	if !strings.Contains(sectionByID(t, page, "matrix"), "vertx") || !strings.Contains(page, "1h20m0s in all") {
		t.Error("the page lacks the matrix or the reproduction's length")
	}
	if want := "Measured by arena 4f3e949; judged again and rendered by arena 8dde661."; !strings.Contains(page, want) {
		t.Errorf("the page does not say which arena measured and which judged: %q", want)
	}
}

// The findings page rendered again from the same findings with the same arena is the same
// bytes: no clock, and no map's order, reaches it.
func TestRenderFindingsAgainGivesTheSameBytes(t *testing.T) {
	render := func() string {
		var buf strings.Builder
		if err := RenderFindings(fixtureFindings(), map[string]string{"vertx": "a1", "go-nethttp": "b2", "spring-webflux": "c3"}, nil, []byte("/* lib */"), &buf); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	first := render()
	for i := range 5 {
		if again := render(); again != first {
			t.Fatalf("rendering %d differs from the first", i+2)
		}
	}
}

func TestChromiumDrawsFindings(t *testing.T) {
	t.Parallel()
	browserCheck(t, "findings", func(lib, out string) error { return WriteFindings(fixtureFindings(), nil, nil, lib, out) })
}

func ptrTime(t time.Time) *time.Time { return &t }
