package lab

import (
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

func stoppedRun() *results.Run {
	cell := func(contender, level string, repeat int, status string) results.Cell {
		return results.Cell{Contender: contender, Level: level, Repeat: repeat, Outcome: results.Outcome{Status: status}}
	}
	return &results.Run{ID: "20261123-100000-sleep", Status: results.RunInterrupted, Started: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC),
		Scenario:   results.ScenarioInfo{Name: "sleep", Preset: "seed", Repeat: 2},
		Contenders: []results.Contender{{Name: "netty", BuildHash: "aaa"}, {Name: "spring-mvc", BuildHash: "bbb"}},
		Cells: []results.Cell{
			cell("netty", "sleep-c200", 1, results.OutcomeOK),
			cell("spring-mvc", "sleep-c200", 1, results.OutcomeCrashed),
			cell("netty", "sleep-c200", 2, results.OutcomeInterrupted),
		}}
}

// A resumed run keeps every finished cell, a crash included, and measures the interrupted one
// again.
func TestFinishedCells(t *testing.T) {
	kept := finishedCells(stoppedRun().Cells)
	if len(kept) != 2 || !hasCell(kept, "netty", "sleep-c200", 1) || !hasCell(kept, "spring-mvc", "sleep-c200", 1) {
		t.Fatalf("kept %+v; want the ok and the crashed cell", kept)
	}
	if hasCell(kept, "netty", "sleep-c200", 2) {
		t.Error("the interrupted cell was kept: it covers part of a load")
	}
	if hasCell(kept, "netty", "sleep-c400", 1) || hasCell(kept, "vertx", "sleep-c200", 1) {
		t.Error("hasCell found a cell that is not there")
	}
}

// Only a stopped run of the same plan is carried on; every difference is named.
func TestResumable(t *testing.T) {
	run := stoppedRun()
	same := results.RunSpec{Scenario: "sleep", Repeat: 2}
	if _, err := resumable(run, same, "seed", run.Env, false); err != nil {
		t.Fatalf("the same plan: %v", err)
	}
	for _, tt := range []struct {
		spec   results.RunSpec
		preset string
		want   string
	}{
		{results.RunSpec{Scenario: "downstream", Repeat: 2}, "seed", "scenario: sleep → downstream"},
		{same, "steady", "preset: seed → steady"},
		{results.RunSpec{Scenario: "sleep", Quick: true, Repeat: 2}, "seed", "quick: false → true"},
		{results.RunSpec{Scenario: "sleep", Repeat: 3}, "seed", "repeat: 2 → 3"},
	} {
		_, err := resumable(run, tt.spec, tt.preset, run.Env, false)
		if err == nil || !strings.Contains(err.Error(), "cannot resume run 20261123-100000-sleep") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("resuming as %+v: %v", tt.spec, err)
		}
	}
	run.Status = results.RunComplete
	if _, err := resumable(run, same, "seed", run.Env, false); err == nil || !strings.Contains(err.Error(), "complete: nothing to resume") {
		t.Errorf("a complete run: %v", err)
	}
}

// A resume with another heap (or other CPUs, or on another machine) is refused, naming each
// difference; --force-resume carries on, and the run's notes say what it carried on despite.
func TestResumeRefusesAnotherLab(t *testing.T) {
	run := stoppedRun()
	spec := results.RunSpec{Scenario: "sleep", Preset: "seed", Contenders: []string{"netty", "spring-mvc"}, Repeat: 2,
		ServerCPUs: "1", ClientCPUs: "0", HeapMB: 512}
	run.Spec = &spec
	run.Env = results.Environment{Cores: 8, CPUModel: "EPYC", HeapMB: 512, ServerCPUs: "1", ClientCPUs: "0", ArenaRev: "abc"}
	now := spec
	now.HeapMB = 1024
	env := run.Env
	env.HeapMB, env.CPUModel = 1024, "Xeon"
	_, err := resumable(run, now, "seed", env, false)
	if err == nil {
		t.Fatal("a resume with another heap was carried on")
	}
	for _, want := range []string{"heap_mb: 512 → 1024", "cpu_model: EPYC → Xeon", "--force-resume"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal %q does not say %q", err, want)
		}
	}
	if strings.Count(err.Error(), "heap_mb") != 1 {
		t.Errorf("the heap named twice: %q", err)
	}
	forced, err := resumable(run, now, "seed", env, true)
	if err != nil || len(forced) != 2 {
		t.Fatalf("--force-resume: %v, differences %v", err, forced)
	}
	if n := resumeNote(run, 2, forced); !strings.Contains(n, "--force-resume although heap_mb: 512 → 1024; cpu_model: EPYC → Xeon") {
		t.Errorf("the note %q does not record the forced resume", n)
	}
	port := spec
	port.Port, port.Rebuild, port.ID = 8080, true, "other"
	if _, err := resumable(run, port, "seed", run.Env, false); err != nil {
		t.Errorf("a port, a rebuild or an id changes nothing measured: %v", err)
	}
}

// A contender rebuilt since the run began is named: its earlier cells are of the old build.
func TestRebuiltNotes(t *testing.T) {
	was := stoppedRun().Contenders
	now := []results.Contender{{Name: "netty", BuildHash: "aaa"}, {Name: "spring-mvc", BuildHash: "ccc"}, {Name: "vertx", BuildHash: "ddd"}}
	notes := rebuiltNotes(was, now)
	if len(notes) != 1 || !strings.Contains(notes[0], "spring-mvc was rebuilt since the run began (build bbb, then ccc)") {
		t.Errorf("notes %v", notes)
	}
	if n := resumeNote(stoppedRun(), 2, nil); !strings.Contains(n, "2 finished cell(s) kept from the run begun 2026-11-23T10:00:00Z") {
		t.Errorf("resume note %q", n)
	}
}
