package lab

import (
	"fmt"
	"slices"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// resumable checks that a run can be carried on by a plan: the same scenario, preset, form
// and repeats, or its cells would not be the plan's.
func resumable(run *results.Run, scenario, preset string, quick bool, repeat int) error {
	was := fmt.Sprintf("%s, preset %s, quick %v, repeat %d", run.Scenario.Name, run.Scenario.Preset, run.Scenario.Quick, run.Scenario.Repeat)
	now := fmt.Sprintf("%s, preset %s, quick %v, repeat %d", scenario, preset, quick, repeat)
	if was != now {
		return fmt.Errorf("cannot resume run %s (%s) as %s: a resumed run keeps its plan", run.ID, was, now)
	}
	if run.Status == results.RunComplete {
		return fmt.Errorf("run %s is complete: nothing to resume", run.ID)
	}
	return nil
}

// finishedCells are the cells of a stopped run that need no second measurement: every one
// but those the user interrupted, whose figures cover part of a load.
func finishedCells(cells []results.Cell) []results.Cell {
	var kept []results.Cell
	for _, c := range cells {
		if c.Outcome.Status != results.OutcomeInterrupted {
			kept = append(kept, c)
		}
	}
	return kept
}

// hasCell says whether cells hold the cell of contender at level, repeat.
func hasCell(cells []results.Cell, contender, level string, repeat int) bool {
	return slices.ContainsFunc(cells, func(c results.Cell) bool {
		return c.Contender == contender && c.Level == level && c.Repeat == repeat
	})
}

// resumeNote says when a run was resumed and what it kept, for the environment's notes.
func resumeNote(was *results.Run, kept int) string {
	return fmt.Sprintf("Resumed at %s: %d finished cell(s) kept from the run begun %s; the rest measured after.",
		time.Now().Format(time.RFC3339), kept, was.Started.Format(time.RFC3339))
}

// rebuiltNotes name the contenders whose build changed since the resumed run began: its
// cells before the resume are of the old build.
func rebuiltNotes(was, now []results.Contender) []string {
	var notes []string
	for _, n := range now {
		for _, w := range was {
			if w.Name == n.Name && w.BuildHash != "" && n.BuildHash != "" && w.BuildHash != n.BuildHash {
				notes = append(notes, fmt.Sprintf("%s was rebuilt since the run began (build %s, then %s): its cells from before the resume are of the old build.", n.Name, w.BuildHash, n.BuildHash))
			}
		}
	}
	return notes
}
