package gate

import (
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/compare"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// sleepRun is a run of one contender at one level, a repeat per rate, its latency falling as
// its rate rises; failed of every 1000 requests got no answer.
func sleepRun(id string, failed int64, rps ...float64) *results.Run {
	run := &results.Run{ID: id, Status: results.RunComplete, Started: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC),
		Scenario: results.ScenarioInfo{Name: "sleep", Preset: "seed", Repeat: len(rps), Levels: []results.Level{{Name: "sleep-c200", Load: "closed loop"}}}}
	for i, v := range rps {
		run.Cells = append(run.Cells, results.Cell{Contender: "spring-mvc", Level: "sleep-c200", Repeat: i + 1, Outcome: results.Outcome{Status: results.OutcomeOK},
			Tags: []results.Tag{{TagStats: results.TagStats{Tag: "sleep", Sent: 1000, Completed: 1000 - failed, Errors: map[string]int64{"reset": failed}}, RPS: v,
				Response: results.Latency{P50: 200000 / v, P99: 220000 / v, P999: 240000 / v}}}})
	}
	return run
}

// comparison is B's rates against A's, as arena compare reads them.
func comparison(t *testing.T, a, b []float64) *compare.Comparison {
	t.Helper()
	return comparisonOf(t, sleepRun("A", 0, a...), sleepRun("B", 0, b...))
}

func comparisonOf(t *testing.T, a, b *results.Run) *compare.Comparison {
	t.Helper()
	c, err := compare.Runs(a, b, compare.DefaultAlpha)
	if err != nil {
		t.Fatal(err)
	}
	c.MaxFailedPct = scenario.MaxFailedPct
	return c
}

func statuses(checks []Check) string {
	var s []string
	for _, c := range checks {
		s = append(s, c.Status)
	}
	return strings.Join(s, " ")
}

func TestRegressions(t *testing.T) {
	base := []float64{2000, 1990, 2010, 1995, 2005}
	cases := []struct {
		name      string
		b         []float64
		threshold float64
		want      string
	}{
		// Fewer requests/s and every percentile higher, significantly and past 10 %.
		{"a quarter slower", []float64{1500, 1490, 1510, 1495, 1505}, DefaultRegression, "failed failed failed failed"},
		// 5 % slower, significantly: within 10 %, past 4 %.
		{"5 % slower", []float64{1900, 1890, 1910, 1895, 1905}, DefaultRegression, "passed passed passed passed"},
		{"5 % slower, 4 % allowed", []float64{1900, 1890, 1910, 1895, 1905}, 4, "failed failed failed failed"},
		// Faster is no regression, however far.
		{"a quarter faster", []float64{2500, 2490, 2510, 2495, 2505}, 0, "passed passed passed passed"},
		// Itself, or repeats that overlap: no significant change.
		{"the same", base, 0, "passed passed passed passed"},
		{"overlapping", []float64{1800, 2200, 1900, 2100, 2000}, 0, "passed passed passed passed"},
	}
	for _, c := range cases {
		cmp := comparison(t, base, c.b)
		checks := Regressions(cmp, c.threshold, true)
		if got := statuses(checks); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
			for _, ch := range checks {
				t.Log(ch.Message)
			}
		}
		if !Testable(cmp) {
			t.Errorf("%s: 5 + 5 repeats called untestable", c.name)
		}
	}
	checks := Regressions(comparison(t, base, []float64{1500, 1490, 1510, 1495, 1505}), DefaultRegression, true)
	rps := checks[0]
	if rps.Kind != KindChange || rps.Name != "spring-mvc/sleep-c200 sleep requests/s" || rps.FailedOn[0] != KindRegression ||
		rps.Message != "spring-mvc at sleep-c200: worse by 25.00 %, past 10 %: sleep 2000 ±0% → 1500 ±1% (requests/s), p=0.008 n=5+5; errors 0 % → 0 %" ||
		*rps.Value > -24 || *rps.Limit != 10 {
		t.Errorf("the requests/s row: %+v", rps)
	}
	// Not asked to fail: the regression is skipped, never passed.
	if got := statuses(Regressions(comparison(t, base, []float64{1500, 1490, 1510, 1495, 1505}), DefaultRegression, false)); got != "skipped skipped skipped skipped" {
		t.Errorf("not asked to fail: %s", got)
	}
}

// With too few repeats no change can be significant: every row is skipped, and the
// comparison cannot fail.
func TestRegressionsNeedRepeats(t *testing.T) {
	cmp := comparison(t, []float64{2000, 2010, 1990}, []float64{100, 101, 99})
	if Testable(cmp) {
		t.Error("3 + 3 repeats called testable at 0.05")
	}
	checks := Regressions(cmp, DefaultRegression, true)
	if got := statuses(checks); got != "skipped skipped skipped skipped" ||
		!strings.Contains(checks[0].Message, "with 3 and 3 repeats no change can be significant at p < 0.05") {
		t.Errorf("%s: %s", got, checks[0].Message)
	}
}

// B failing its requests where A does not is a regression whatever its speed; A failing is
// no change to read.
func TestRegressionsOfAFailingSide(t *testing.T) {
	rates := []float64{2000, 1990, 2010, 1995, 2005}
	checks := Regressions(comparisonOf(t, sleepRun("A", 0, rates...), sleepRun("B", 50, rates...)), DefaultRegression, true)
	if got := statuses(checks); got != "failed failed failed failed" || !strings.Contains(checks[0].Message, "B fails its requests (5.0 %), A does not") {
		t.Errorf("B failing: %s: %s", got, checks[0].Message)
	}
	checks = Regressions(comparisonOf(t, sleepRun("A", 50, rates...), sleepRun("B", 0, rates...)), DefaultRegression, true)
	if got := statuses(checks); got != "skipped skipped skipped skipped" || !strings.Contains(checks[0].Message, "A failing its requests") {
		t.Errorf("A failing: %s: %s", got, checks[0].Message)
	}
}
