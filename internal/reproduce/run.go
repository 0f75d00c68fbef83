package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// Runner carries out a reproduction's steps, each a run of the lab in the reproduction's
// folder.
type Runner struct {
	Lab *lab.Lab
	// Find returns a scenario by name; Manifests are every contender of the lab.
	Find      func(name string) (scenario.Scenario, error)
	Manifests []*contender.Manifest
	Out       io.Writer // a line per step (stderr)
	// After is told of each run as it ends: its report and summary are the caller's.
	After func(run *results.Run, dir string)
	// ForceResume carries a step on although its run was measured otherwise (another heap,
	// other CPUs, another machine or arena): the run's notes and the step record it.
	ForceResume bool
	// Check is `arena run`'s check of a spec from its flags: every step's spec, read from
	// reproduction.json, passes it before anything runs (CheckSteps). Required.
	Check func(results.RunSpec) error
}

// CheckSteps refuses a reproduction that is not arena's to carry on, before anything is
// written or run: an id that is no id (a step's run names its folder), a step with a target
// (a reproduction plans the lab's own contenders, never a server elsewhere), or a step left
// to run whose spec, as it would run, check refuses (`arena run`'s check: its scenario,
// ranges, variables, port and id).
func CheckSteps(rep *results.Reproduction, check func(results.RunSpec) error) error {
	if err := rep.CheckIDs(); err != nil {
		return err
	}
	for i, st := range rep.Steps {
		switch {
		case st.Target != nil:
			return fmt.Errorf("step %d: a target (%s): a reproduction runs the lab's own contenders, never a server it did not start", i+1, st.Target.URL)
		case st.Status == results.RunComplete:
			continue // nothing of it runs again
		case check == nil:
			return errors.New("no check for the steps' specs: nothing is run unchecked")
		}
		if err := check(stepSpec(rep, st)); err != nil {
			return fmt.Errorf("step %d (%s): %w", i+1, st.Scenario, err)
		}
	}
	return nil
}

// stepSpec is the spec step st runs with: its own, with its repeats and its run's id.
func stepSpec(rep *results.Reproduction, st results.Step) results.RunSpec {
	spec := st.RunSpec
	spec.Repeat, spec.ID = RepeatOf(rep, st), st.Run
	return spec
}

// Run carries out every step of rep that is not complete, in dir, saving rep as it goes:
// a step whose run was begun carries on from that run's last finished cell, so nothing is
// measured twice. When ctx ends rep is left interrupted; a step whose contenders all failed
// build or verify is left failed and the next one begins.
func (r *Runner) Run(ctx context.Context, rep *results.Reproduction, dir string) error {
	if err := CheckSteps(rep, r.Check); err != nil {
		return err // nothing written: the reproduction stays as it was
	}
	if finished(rep) {
		return nil // nothing to carry on: its findings are only rendered again, by any arena
	}
	forced, err := r.sameLab(rep, dir)
	if errors.Is(err, errAnotherLab) {
		return err // nothing carried on: the reproduction stays as it was
	} else if err != nil {
		return errors.Join(err, r.end(rep, dir, results.RunFailed))
	}
	rep.Status, rep.Finished = results.RunRunning, nil
	if err := results.SaveReproduction(rep, dir); err != nil {
		return err
	}
	for i := range rep.Steps {
		if st := &rep.Steps[i]; st.Status != results.RunComplete && len(forced) > 0 {
			st.Forced, forced = append(st.Forced, forced...), nil // said once, by the step that carries on
		}
		st := &rep.Steps[i]
		if err := r.step(ctx, rep, i, dir); err != nil {
			return errors.Join(err, r.end(rep, dir, results.RunFailed))
		}
		if st.Status == results.RunInterrupted || ctx.Err() != nil {
			return r.end(rep, dir, results.RunInterrupted)
		}
	}
	return r.end(rep, dir, results.RunComplete)
}

// finished says whether the reproduction ended complete, every step with it.
func finished(rep *results.Reproduction) bool {
	return rep.Status == results.RunComplete && !slices.ContainsFunc(rep.Steps, func(st results.Step) bool {
		return st.Status != results.RunComplete
	})
}

// step carries out step i, unless it is complete.
func (r *Runner) step(ctx context.Context, rep *results.Reproduction, i int, dir string) error {
	st := &rep.Steps[i]
	head := fmt.Sprintf("\n[step %d/%d] %s", i+1, len(rep.Steps), Describe(*st))
	if st.Status == results.RunComplete {
		fmt.Fprintf(r.Out, "%s: complete, run %s\n", head, st.Run)
		return nil
	}
	sc, err := r.Find(st.Scenario)
	if err != nil {
		return err
	}
	ms, err := contender.Select(r.Manifests, st.Contenders)
	if err != nil {
		return fmt.Errorf("step %d: %w", i+1, err)
	}
	var resume *results.Run
	if st.Run == "" {
		if st.Run, err = newRunID(dir, st.Scenario, time.Now()); err != nil {
			return fmt.Errorf("step %d: %w", i+1, err)
		}
	} else if resume, err = begun(dir, i, st.Run); err != nil {
		return err
	} else if resume != nil && resume.Status == results.RunComplete {
		st.Status = resume.Status
		fmt.Fprintf(r.Out, "%s: complete, run %s\n", head, st.Run)
		return results.SaveReproduction(rep, dir)
	}
	st.Status = results.RunRunning
	if err := results.SaveReproduction(rep, dir); err != nil {
		return err
	}
	how := "about " + round(seconds(st.EstimateS))
	if resume != nil {
		how = "carrying on run " + st.Run
	}
	fmt.Fprintf(r.Out, "%s (%s; reproduction ETA %s)\n", head, how, round(Left(rep.Steps[i:])))
	spec := stepSpec(rep, *st)
	run, runDir, err := r.Lab.Run(ctx, lab.RunOptions{Spec: spec, Scenario: sc, Contenders: ms,
		RunsDir: dir, Resume: resume, ForceResume: r.ForceResume, Command: rep.Command})
	if run != nil {
		st.Status, st.Forced = run.Status, append(st.Forced, run.ForcedResume...)
		if r.After != nil {
			r.After(run, runDir)
		}
	}
	if err != nil && !errors.Is(err, lab.ErrNothingToMeasure) {
		return fmt.Errorf("step %d (%s): %w", i+1, st.Scenario, err)
	}
	return results.SaveReproduction(rep, dir)
}

// errAnotherLab: the reproduction was begun in a lab that measured otherwise.
var errAnotherLab = errors.New("the reproduction's steps so far were measured in another lab")

// sameLab compares the lab with the one the reproduction's latest begun step was measured
// in: another machine, heap, CPUs or arena would set its later steps beside earlier ones in
// the findings as if measured alike, even where no step is begun again. A difference stops
// the resume, naming each, unless ForceResume; then the differences are returned for the
// step that carries on to record.
func (r *Runner) sameLab(rep *results.Reproduction, dir string) ([]string, error) {
	for i := len(rep.Steps) - 1; i >= 0; i-- {
		if rep.Steps[i].Run == "" {
			continue
		}
		prev, err := begun(dir, i, rep.Steps[i].Run)
		if err != nil || prev == nil {
			if err != nil {
				return nil, err
			}
			continue
		}
		now := lab.Environment(r.Lab.Root, r.Lab.Settings, r.Lab.ServerCPUs, r.Lab.ClientCPUs)
		diffs := prev.Env.Differences(now)
		if len(diffs) == 0 || r.ForceResume {
			return diffs, nil
		}
		return nil, fmt.Errorf("%w (run %s): %s; resume where they were measured, or give --force-resume to carry on anyway (recorded)",
			errAnotherLab, prev.ID, strings.Join(diffs, "; "))
	}
	return nil, nil
}

// begun is step i's run as it was saved in dir, or nil when it never saved a results.json
// (it begins again under its id). A results.json that cannot be read (cut, or of a newer
// schema) stops the reproduction: beginning again would overwrite what it holds.
// Its id must be the step's: a resumed run is carried on in the folder its id names.
func begun(dir string, i int, id string) (*results.Run, error) {
	runDir, err := results.RunDir(dir, id)
	if err != nil {
		return nil, fmt.Errorf("step %d: %w", i+1, err)
	}
	path := filepath.Join(runDir, results.JSONFile)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	prev, err := results.Load(path)
	if err != nil {
		return nil, fmt.Errorf("step %d: cannot read its run's results (%w): the resume stops rather than measure the step again over them; move %s aside to measure it again", i+1, err, path)
	}
	if prev.ID != id {
		return nil, fmt.Errorf("step %d: %s holds run %s, not the step's %s: the resume stops rather than carry another run on", i+1, path, prev.ID, id)
	}
	return prev, nil
}

func (r *Runner) end(rep *results.Reproduction, dir, status string) error {
	now := time.Now()
	rep.Status, rep.Finished = status, &now
	return results.SaveReproduction(rep, dir)
}

// newRunID names a run of scenario begun at t, as `arena run` does, one second on if that
// folder is taken; a scenario's name that would not make an id is refused.
func newRunID(dir, scenario string, t time.Time) (string, error) {
	for {
		id := t.Format("20060102-150405") + "-" + scenario
		runDir, err := results.RunDir(dir, id)
		if err != nil {
			return "", err
		}
		if _, err := os.Stat(runDir); errors.Is(err, os.ErrNotExist) {
			return id, nil
		}
		t = t.Add(time.Second)
	}
}

// Left is the planned time of the steps that are not complete.
func Left(steps []results.Step) time.Duration {
	var d time.Duration
	for _, s := range steps {
		if s.Status != results.RunComplete {
			d += seconds(s.EstimateS)
		}
	}
	return d
}

// Describe says what a step runs, in a line.
func Describe(s results.Step) string {
	form := s.Preset
	if s.Quick {
		form += ", quick"
	}
	if len(s.Levels) > 0 {
		form += ", levels " + strings.Join(s.Levels, ",")
	}
	if s.DurationS > 0 {
		form += ", " + seconds(s.DurationS).String()
	}
	if s.Repeat > 0 {
		form += fmt.Sprintf(", ×%d", s.Repeat)
	}
	return fmt.Sprintf("%s · %s (%s) · %s", s.Part, s.Scenario, form, strings.Join(s.Contenders, ", "))
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// round writes a duration to the minute, or the second under one.
func round(d time.Duration) string {
	if d < time.Minute {
		return d.Round(time.Second).String()
	}
	return strings.TrimSuffix(d.Round(time.Minute).String(), "0s")
}

// repeatsText says how many repeats a cell the steps get, by part: "3 repeats a cell of
// the studies' forms, 1 of the matrix"; one count where every step has the same.
func repeatsText(rep *results.Reproduction) string {
	byPart := map[string]int{}
	var counts []int
	for _, s := range rep.Steps {
		n := RepeatOf(rep, s)
		byPart[s.Part] = max(byPart[s.Part], n)
		if !slices.Contains(counts, n) {
			counts = append(counts, n)
		}
	}
	if len(counts) == 1 {
		return fmt.Sprintf("%d repeat(s) a cell", counts[0])
	}
	return fmt.Sprintf("%d repeat(s) a cell of the studies' forms, %d of the matrix", byPart[results.PartStudies], byPart[results.PartMatrix])
}

// WritePlan writes a reproduction's plan to w: a line per step with its estimate and state,
// the ETA of each part and in all, and what of the studies cannot run here as they did.
func WritePlan(w io.Writer, rep *results.Reproduction, dir string) {
	fmt.Fprintf(w, "arena reproduce: %d runs, %s, in %s\n", len(rep.Steps), repeatsText(rep), dir)
	parts := map[string]time.Duration{}
	var contenders []string
	for _, s := range rep.Steps {
		state := "about " + round(seconds(s.EstimateS))
		if s.Status != "" {
			state = s.Status + ", run " + s.Run
		}
		fmt.Fprintf(w, "  %s  (%s)\n", Describe(s), state)
		if s.Status != results.RunComplete {
			parts[s.Part] += seconds(s.EstimateS)
		}
		for _, c := range s.Contenders {
			if !slices.Contains(contenders, c) {
				contenders = append(contenders, c)
			}
		}
	}
	fmt.Fprintf(w, "ETA %s (%s): the studies' own stacks %s, the rest of the matrix %s; and before a contender's first cell its build and verify, unless this build passed before (at most %s for all %d).\n",
		round(Left(rep.Steps)), repeatsText(rep), round(parts[results.PartStudies]), round(parts[results.PartMatrix]), round(PrepareAtMost(len(contenders))), len(contenders))
	if len(rep.Notes) > 0 {
		fmt.Fprintln(w, "Not as the studies ran them:")
		for _, n := range rep.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
}
