package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

func TestMatrixRejectsBadInput(t *testing.T) {
	root := fixtureLab(t)
	refused(t, []string{"matrix"}, "no run under "+filepath.Join(root, "runs")+" has a results.json that loads")
	refused(t, []string{"matrix", "nosuch-run"}, `no run "nosuch-run"`)
	if err := os.Remove(filepath.Join(root, "runs")); err != nil {
		t.Fatal(err)
	}
	refused(t, []string{"matrix"}, "no runs:")
}

// matrixLab is a lab whose runs/ holds, of the isolation scenario, an older run, a newer one
// and a newest that does not load; of the sleep scenario one run whose cells cannot be
// summarised again; and a folder that is no run. It returns runs/.
func matrixLab(t *testing.T) string {
	t.Helper()
	runs := filepath.Join(fixtureLab(t), "runs")
	day := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	saveRun(t, runs, fixtureRun("20261121-060000-isolation", "isolation", day.Add(6*time.Hour), "older-contender"))
	saveRun(t, runs, fixtureRun("20261121-070000-isolation", "isolation", day.Add(7*time.Hour), "newer-contender"))
	broken := filepath.Join(runs, "20261121-080000-isolation")
	if err := os.MkdirAll(broken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "results.json"), []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	saveRun(t, filepath.Join(runs, "reproduce-20261121-100000"), fixtureRun("20261121-100000-downstream", "downstream", day.Add(10*time.Hour), "reproduced-contender"))
	sleep := fixtureRun("20261121-090000-sleep", "sleep", day.Add(9*time.Hour), "sleepy-contender")
	sleep.Cells[0].Tags = []results.Tag{{TagStats: results.TagStats{Tag: "sleep"}, ResponseHist: "not a histogram"}}
	saveRun(t, runs, sleep)
	if err := os.MkdirAll(filepath.Join(runs, "notes"), 0o755); err != nil {
		t.Fatal(err)
	}
	return runs
}

// With no RUN, arena matrix takes every run that loads, each contender's cell from the latest
// run that measured it (so the older run's contender is still there), says which run it
// skipped and which it could not judge again on stderr, and prints the page's path.
func TestMatrixOfTheLatestRuns(t *testing.T) {
	runs := matrixLab(t)
	o := execute(t, "matrix")
	if o.err != nil {
		t.Fatalf("arena matrix: %v", o.err)
	}
	out := filepath.Join(runs, "matrix.html")
	if o.stdout != out+"\n" {
		t.Errorf("arena matrix printed %q, want %q", o.stdout, out)
	}
	warnings := strings.Split(strings.TrimSuffix(o.stderr, "\n"), "\n")
	if len(warnings) != 2 ||
		!strings.HasPrefix(warnings[0], "arena: skipping 20261121-080000-isolation: ") ||
		!strings.HasPrefix(warnings[1], "arena: 20261121-090000-sleep: keeping its saved verdicts: ") {
		t.Errorf("stderr:\n%s\nwant the broken run skipped and the sleep run's verdicts kept", o.stderr)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"newer-contender", "sleepy-contender", "older-contender", "reproduced-contender", "2026-11-21"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the matrix lacks %s", want)
		}
	}
}

// Given runs, arena matrix renders those to -o, linking each run's report relative to the page.
func TestMatrixOfGivenRuns(t *testing.T) {
	runs := matrixLab(t)
	newer := filepath.Join(runs, "20261121-070000-isolation")
	if err := os.WriteFile(filepath.Join(newer, "report.html"), []byte("report"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(runs, "m.html")
	o := execute(t, "matrix", "20261121-070000-isolation", filepath.Join(runs, "20261121-060000-isolation"), "-o", out)
	if o.err != nil {
		t.Fatalf("arena matrix: %v", o.err)
	}
	if o.stdout != out+"\n" || o.stderr != "" {
		t.Errorf("arena matrix printed %q and %q on stderr, want only %q", o.stdout, o.stderr, out)
	}
	page, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "newer-contender") || !strings.Contains(string(page), "older-contender") ||
		strings.Contains(string(page), "sleepy-contender") || strings.Contains(string(page), "reproduced-contender") {
		t.Error("the matrix is not of the two runs given")
	}
	if !strings.Contains(string(page), `href="20261121-070000-isolation/report.html"`) {
		t.Error("the matrix does not link the run's report")
	}
	if _, err := os.Stat(filepath.Join(runs, "matrix.html")); err == nil {
		t.Error("arena matrix -o wrote runs/matrix.html too")
	}
}
