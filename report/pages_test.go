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

func TestChromiumDrawsCompare(t *testing.T) {
	t.Parallel()
	c := fixtureComparison(t)
	browserCheck(t, "compare", func(lib, out string) error { return WriteCompare(c, lib, out) })
}

// fixtureFindings is a reproduction of the downstream study alone, its claim (a) with one of
// the study's figures beside ours.
func fixtureFindings() *findings.Findings {
	run := fixtureDownstream()
	rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-20251120-140000", Command: []string{"arena", "reproduce"},
		Started: run.Started, Status: results.RunComplete, Repeat: 2}
	claim := findings.Claim{ID: "a", Text: "Vert.x serves about 2.5× the throughput of Spring WebFlux.", Verdict: results.ClaimHolds,
		Why: "vertx 9180, spring-webflux 3876 requests/s: 2.37×", RestsOn: "the study's form (preset seed) on the study's stacks: run " + run.ID,
		Every: &results.Claim{ID: "a", Verdict: results.ClaimPartly, Why: "over every contender"},
		Figures: []findings.Figure{{
			Published: scenario.Published{Claim: "a", What: "Vert.x, requests/s", Theirs: "6,654.65 requests/s", Source: "seeds/002 line 228"},
			Ours:      findings.Value{Spread: results.Spread{Median: 9180, Min: 9000, Max: 9360}, Measured: true, Unit: "requests/s"},
		}}}
	return &findings.Findings{Reproduction: rep, Env: run.Env, Runs: []findings.Run{{Run: run, Step: results.Step{Part: results.PartStudies}}},
		Studies: []findings.Study{{Scenario: "downstream", Title: run.Scenario.Title, Study: run.Scenario.Study,
			Setup: scenario.Setup{Machine: "a GCE instance, 4 vCPUs"}, Ours: scenario.Setup{Machine: "one core"},
			Notes: []string{"the study ran on four cores"}, Runs: []findings.Run{{Run: run}}, Claims: []findings.Claim{claim}}}}
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
		"6,654.65 requests/s", "9,180 requests/s (9,000–9,360)", "seeds/002 line 228", "Over every contender:", ">partly<",
		`href="` + f.Runs[0].ID + `/report.html"`} {
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
}

func TestChromiumDrawsFindings(t *testing.T) {
	t.Parallel()
	browserCheck(t, "findings", func(lib, out string) error { return WriteFindings(fixtureFindings(), nil, nil, lib, out) })
}

func ptrTime(t time.Time) *time.Time { return &t }
