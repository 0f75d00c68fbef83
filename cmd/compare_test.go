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

// isolationReproduction saves, under dir, a finished reproduction of one isolation run at
// the seed preset where spring-webflux answers its fast endpoints in 5 ms and spring-mvc in
// syncTakes; it returns the reproduction's folder.
func isolationReproduction(t *testing.T, dir, id string, syncTakes time.Duration) string {
	t.Helper()
	tag := func(name string, took time.Duration) results.Tag {
		h := results.NewHistogram()
		if err := h.RecordValues(int64(took), 100); err != nil {
			t.Fatal(err)
		}
		enc, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return results.Tag{TagStats: results.TagStats{Tag: name, Sent: 100, Completed: 100, Status: map[string]int64{"2xx": 100}},
			RPS: 10, Response: results.LatencyOf(h), Service: results.LatencyOf(h), ResponseHist: enc, ServiceHist: enc}
	}
	started := time.Date(2026, 11, 23, 9, 31, 0, 0, time.UTC)
	run := fixtureRun(id+"-isolation", "isolation", started, "spring-mvc", "spring-webflux")
	run.Scenario.Preset = "seed"
	for i, took := range []time.Duration{syncTakes, 5 * time.Millisecond} {
		for _, name := range []string{"instant", "liveness", "readiness"} {
			run.Cells[i].Tags = append(run.Cells[i].Tags, tag(name, took))
		}
	}
	folder := filepath.Join(dir, "reproduce-"+id)
	saveRun(t, folder, run)
	rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-" + id, Command: []string{"arena", "reproduce"},
		Started: started, Status: results.RunComplete, Repeat: 1,
		Steps: []results.Step{{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "isolation", Preset: "seed", Contenders: []string{"spring-mvc", "spring-webflux"}},
			Run: run.ID, Status: results.RunComplete}}}
	if err := results.SaveReproduction(rep, folder); err != nil {
		t.Fatal(err)
	}
	return folder
}

// Two reproductions are compared by their claims' verdicts: one against itself reads alike
// throughout, and passes --fail-on-regression; against one where the sync servlet kept its
// fast endpoints fast, isolation's claim (a) reads otherwise, named, and the gate fails.
func TestCompareTwoReproductions(t *testing.T) {
	runs := filepath.Join(fixtureLab(t), "runs")
	a := isolationReproduction(t, runs, "20261123-093000", 20*time.Second)
	b := isolationReproduction(t, runs, "20261124-093000", 5*time.Millisecond)
	md := filepath.Join(t.TempDir(), "verdicts.md")
	same := execute(t, "compare", a, a, "--fail-on-regression", "-o", md)
	if same.err != nil || !strings.Contains(same.stdout, "| isolation | (a) The synchronous servlet") || !strings.Contains(same.stdout, "| holds | holds | alike |") ||
		strings.Contains(same.stdout, "**otherwise**") {
		t.Fatalf("a reproduction against itself: %v\n%s", same.err, same.stdout)
	}
	if raw, err := os.ReadFile(md); err != nil || !strings.Contains(string(raw), "6 of the 6 claims both reproductions ran read alike in both") {
		t.Errorf("-o: %v\n%s", err, raw)
	}
	other := execute(t, "compare", "reproduce-20261123-093000", "reproduce-20261124-093000", "--fail-on-regression")
	if other.err == nil || !strings.Contains(other.stdout, "| holds | fails | **otherwise** |") || !strings.Contains(other.stdout, "FAILED claim isolation (a)") {
		t.Errorf("against another: %v\n%s", other.err, other.stdout)
	}
	refused(t, []string{"compare", a, "20261123-100000-sleep"}, "one is a reproduction and the other is not")
	refused(t, []string{"compare", a, b, "--alpha", "0.1"}, "--alpha goes with runs")
}
