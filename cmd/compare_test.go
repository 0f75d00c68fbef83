package cmd

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// compareRun is a run of scenario whose one contender ran a repeat per value of rps.
func compareRun(id, scenario string, env map[string]string, rps ...float64) *results.Run {
	run := fixtureRun(id, scenario, time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), "spring-mvc")
	run.Cells = nil
	for i, v := range rps {
		run.Cells = append(run.Cells, results.Cell{Contender: "spring-mvc", Level: "study", Repeat: i + 1, Env: env,
			Outcome: results.Outcome{Status: results.OutcomeOK},
			Tags: []results.Tag{{TagStats: results.TagStats{Tag: "sleep", Completed: 100}, RPS: v,
				Response: results.Latency{P50: 200000 / v, P99: 220000 / v, P999: 240000 / v}}}})
	}
	return run
}

func compareLab(t *testing.T) string {
	t.Helper()
	runs := filepath.Join(fixtureLab(t), "runs")
	saveRun(t, runs, compareRun("20261123-100000-sleep", "sleep", nil, 1985, 1990, 1978, 1992, 1984))
	saveRun(t, runs, compareRun("20261123-101000-sleep", "sleep", map[string]string{"WORKER_THREADS": "11"}, 109, 110, 108, 111, 109.5))
	saveRun(t, runs, compareRun("20261123-102000-isolation", "isolation", nil, 10, 10, 10))
	return runs
}

func TestCompareRejectsBadInput(t *testing.T) {
	runs := compareLab(t)
	refused(t, []string{"compare", "20261123-100000-sleep"}, "accepts 2 arg(s), received 1")
	refused(t, []string{"compare", "20261123-100000-sleep", "nosuch"}, `no run "nosuch"`)
	refused(t, []string{"compare", "20261123-100000-sleep", "20261123-102000-isolation"},
		"20261123-100000-sleep is a run of sleep and 20261123-102000-isolation of isolation: compare two runs of one scenario")
	refused(t, []string{"compare", "20261123-100000-sleep", "20261123-101000-sleep", "--alpha", "1.5"}, "--alpha 1.5: give a P between 0 and 1")
	if _, err := os.Stat(filepath.Join(runs, "20261123-101000-sleep", "compare-20261123-100000-sleep.html")); err == nil {
		t.Error("a refused comparison wrote a page")
	}
}

// Two runs of one scenario: the table on stdout, significant where five repeats each lie
// apart, and the page in B's folder.
func TestCompareTwoRuns(t *testing.T) {
	runs := compareLab(t)
	o := execute(t, "compare", "20261123-100000-sleep", "20261123-101000-sleep")
	if o.err != nil {
		t.Fatal(o.err)
	}
	for _, want := range []string{
		"differs: spring-mvc: WORKER_THREADS unset → 11",
		"CONTENDER   LEVEL  TAG    FIGURE      A",
		"spring-mvc  study  sleep  requests/s  1985 ±0%",
		"-94.48%", "p=0.008 n=5+5",
	} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, o.stdout)
		}
	}
	page := filepath.Join(runs, "20261123-101000-sleep", "compare-20261123-100000-sleep.html")
	if o.stderr != "\npage: "+page+"\n" {
		t.Errorf("stderr %q", o.stderr)
	}
	raw, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"WORKER_THREADS unset → 11", `<span class="badge bad">-94.48%</span>`, "p=0.008 n=5+5"} {
		if !strings.Contains(html.UnescapeString(string(raw)), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// A run against itself: nothing is significant.
	same := execute(t, "compare", "20261123-100000-sleep", "20261123-100000-sleep", "-o", filepath.Join(t.TempDir(), "same.html"))
	if same.err != nil || strings.Count(same.stdout, " ~ ") != 4 {
		t.Errorf("a run against itself: %v\n%s", same.err, same.stdout)
	}
}
