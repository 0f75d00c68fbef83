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

// Only a stopped run of the same plan is carried on.
func TestResumable(t *testing.T) {
	run := stoppedRun()
	if err := resumable(run, "sleep", "seed", false, 2); err != nil {
		t.Fatalf("the same plan: %v", err)
	}
	for _, tt := range []struct {
		scenario, preset string
		quick            bool
		repeat           int
	}{
		{"downstream", "seed", false, 2}, {"sleep", "steady", false, 2}, {"sleep", "seed", true, 2}, {"sleep", "seed", false, 3},
	} {
		err := resumable(run, tt.scenario, tt.preset, tt.quick, tt.repeat)
		if err == nil || !strings.Contains(err.Error(), "cannot resume run 20261123-100000-sleep (sleep, preset seed, quick false, repeat 2)") {
			t.Errorf("resuming as %+v: %v", tt, err)
		}
	}
	run.Status = results.RunComplete
	if err := resumable(run, "sleep", "seed", false, 2); err == nil || !strings.Contains(err.Error(), "complete: nothing to resume") {
		t.Errorf("a complete run: %v", err)
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
	if n := resumeNote(stoppedRun(), 2); !strings.Contains(n, "2 finished cell(s) kept from the run begun 2026-11-23T10:00:00Z") {
		t.Errorf("resume note %q", n)
	}
}
