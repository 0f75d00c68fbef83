package lab

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// resumable checks that a run can be carried on by spec in env: a run recorded with
// another plan, or on another machine, lab or arena, would mix cells that measure different
// things. Each difference is named; with force the resume goes on and they are returned, for
// the run's notes.
func resumable(run *results.Run, spec results.RunSpec, preset string, env results.Environment, force bool) ([]string, error) {
	if run.Status == results.RunComplete {
		return nil, fmt.Errorf("run %s is complete: nothing to resume", run.ID)
	}
	now := spec
	now.Preset = preset // the preset the plan resolved, as the run recorded it
	was := recordedSpec(run, now)
	diffs := was.Differences(now)
	for _, d := range run.Env.Differences(env) {
		if !slices.Contains(diffs, d) {
			diffs = append(diffs, d)
		}
	}
	if len(diffs) == 0 || force {
		return diffs, nil
	}
	return nil, fmt.Errorf("cannot resume run %s: it was measured otherwise than this resume would measure it:\n  %s\n"+
		"carry on in a lab like the run's, or pass --force-resume (recorded in the run's notes)", run.ID, strings.Join(diffs, "\n  "))
}

// recordedSpec is the spec run was recorded with; for a run recorded before specs, now with
// what its scenario says of it (the rest, not recorded, is not compared; its environment is).
func recordedSpec(run *results.Run, now results.RunSpec) results.RunSpec {
	if run.Spec != nil {
		s := *run.Spec
		s.Preset = run.Scenario.Preset
		return s
	}
	s := now
	s.Scenario, s.Preset, s.Quick = run.Scenario.Name, run.Scenario.Preset, run.Scenario.Quick
	s.Repeat, s.Profile = run.Scenario.Repeat, run.Scenario.Profiled
	return s
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
func resumeNote(was *results.Run, kept int, forced []string) string {
	note := fmt.Sprintf("Resumed at %s: %d finished cell(s) kept from the run begun %s; the rest measured after.",
		time.Now().Format(time.RFC3339), kept, was.Started.Format(time.RFC3339))
	if len(forced) > 0 {
		note += " Resumed with --force-resume although " + strings.Join(forced, "; ") + ": cells before and after the resume are not alike."
	}
	return note
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
