package report

import (
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// targetRun is the fixture run as a run against a target: its first contender stands for a
// server arena did not start, given without its pid.
func targetRun() *results.Run {
	run := fixtureRun()
	name := run.Contenders[0].Name
	run.Spec = &results.RunSpec{Scenario: "isolation", Target: &results.Target{Name: name, URL: "http://127.0.0.1:8080", Addr: "127.0.0.1:8080"}}
	run.Contenders[0].Target = "http://127.0.0.1:8080"
	for i := range run.Summary {
		if run.Summary[i].Contender == name {
			run.Summary[i].ServerUnprobed = results.NoServerProcess
			run.Summary[i].CPUPct, run.Summary[i].RSSMB, run.Summary[i].Threads = results.Spread{}, results.Spread{}, results.Spread{}
		}
	}
	return run
}

// The report names the target, says the lab did not start it, and shows "no server
// resources" where a contender's CPU, RSS and threads would be, never zeros.
func TestRenderTarget(t *testing.T) {
	page := render(t, targetRun(), []byte("/* chart library */"))
	for _, want := range []string{"a server arena did not start", "<code>http://127.0.0.1:8080</code>", "No server resources", "no server resources", "not started by arena"} {
		if !strings.Contains(page, want) {
			t.Errorf("the report does not say %q", want)
		}
	}
	if plain := render(t, fixtureRun(), []byte("/* chart library */")); strings.Contains(plain, "no server resources") || strings.Contains(plain, "did not start") {
		t.Error("a run of the lab's own contenders speaks of a target")
	}
}

// A run against a target stays out of the matrix: the matrix is of the lab's own contenders.
func TestMatrixLeavesTargetsOut(t *testing.T) {
	tr := targetRun()
	tr.ID, tr.Started = "20261120-140307-isolation", tr.Started.AddDate(1, 0, 0) // the newest run
	tr.Verdicts = []results.Verdict{{Contender: tr.Contenders[0].Name, Verdict: "FROM A TARGET"}}
	page := renderMatrix(t, append(fixtureMatrixRuns(), tr), []byte("/* chart library */"))
	if strings.Contains(page, "FROM A TARGET") {
		t.Error("the matrix shows a target's run")
	}
}
