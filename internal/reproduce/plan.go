// Package reproduce is `arena reproduce`: every study's scenario at the study's own form on
// the contenders that stand for the stacks it compared, then every other contender on every
// scenario, as one reproduction whose folder holds every run. A reproduction stopped or
// crashed part-way carries on from its last finished cell.
package reproduce

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// The repeats a cell gets by default: the studies' forms enough for scenario.Compare's U
// test (its verdicts order figures beyond the noise), the matrix one, which only places
// every other contender beside them.
const (
	DefaultStudyRepeat  = scenario.MinRepeats
	DefaultMatrixRepeat = 1
)

// Options shape a reproduction.
type Options struct {
	// Repeat is the repeats a cell of the studies' forms gets, MatrixRepeat those of the
	// matrix: DefaultStudyRepeat and DefaultMatrixRepeat when 0.
	Repeat, MatrixRepeat int
	// Only keeps the steps of these scenarios and parts ("studies", "matrix"); all when empty.
	// A scenario and a part together keep that part of that scenario.
	Only []string
	// Quick runs every step in its scenario's quick form: a reproduction in miniature.
	Quick bool
}

// Plan lists the steps of a reproduction over contenders: for each scenario the study's forms
// on its stacks, then for each scenario the matrix form on every other contender. Its notes
// say, per scenario, what of the study cannot run here.
func Plan(scenarios []scenario.Scenario, contenders []*contender.Manifest, o Options) ([]results.Step, []string, error) {
	chosen := make([]string, len(contenders))
	for i, m := range contenders {
		chosen[i] = m.Name
	}
	keep, err := onlyFilter(scenarios, o.Only)
	if err != nil {
		return nil, nil, err
	}
	var studies, matrix []results.Step
	var notes []string
	for _, sc := range scenarios {
		rp, ok := sc.(scenario.Reproducible)
		if !ok {
			return nil, nil, fmt.Errorf("scenario %s does not say how to reproduce it", sc.Name())
		}
		r := rp.Reproduction()
		own := intersect(r.StudyContenders(), chosen)
		for _, f := range r.Study {
			studies = append(studies, stepOf(results.PartStudies, sc.Name(), quickForm(sc, f, o.Quick), own, o.Quick, o.studyRepeat()))
		}
		matrix = append(matrix, stepOf(results.PartMatrix, sc.Name(), quickForm(sc, r.Matrix, o.Quick), without(chosen, r.StudyContenders()), o.Quick, o.matrixRepeat()))
		for _, n := range r.Notes {
			notes = append(notes, sc.Name()+": "+n)
		}
	}
	var steps []results.Step
	for _, s := range append(studies, matrix...) {
		if len(s.Contenders) > 0 && keep(s) {
			steps = append(steps, s)
		}
	}
	if len(steps) == 0 {
		return nil, nil, errors.New("nothing to reproduce: no step has a contender (see --only and --contenders)")
	}
	return steps, notes, nil
}

func (o Options) studyRepeat() int  { return cmp.Or(o.Repeat, DefaultStudyRepeat) }
func (o Options) matrixRepeat() int { return cmp.Or(o.MatrixRepeat, DefaultMatrixRepeat) }

// quickForm is f as a quick reproduction runs it: only those of its levels that the quick
// plan has (a study's top levels may not be there: chat's r1-u20), or every quick level
// when none of them is.
func quickForm(sc scenario.Scenario, f scenario.Form, quick bool) scenario.Form {
	if !quick || len(f.Levels) == 0 {
		return f
	}
	plan, err := sc.Plan(scenario.Options{Preset: f.Preset, Quick: true})
	if err != nil {
		return f // the step's own run says what is wrong with its preset
	}
	var kept []string
	for _, name := range f.Levels {
		if slices.ContainsFunc(plan.Levels, func(l scenario.Level) bool { return l.Name == name }) {
			kept = append(kept, name)
		}
	}
	f.Levels = kept
	return f
}

func stepOf(part, name string, f scenario.Form, contenders []string, quick bool, repeat int) results.Step {
	return results.Step{Part: part, Why: f.Why, RunSpec: results.RunSpec{Scenario: name, Preset: f.Preset, Quick: f.Quick || quick,
		Levels: f.Levels, DurationS: f.Duration.Seconds(), Repeat: repeat, Contenders: contenders}}
}

// RepeatOf is how many times step's cells are measured: its own count, or in a reproduction
// recorded before steps kept one, the reproduction's (so a resumed one keeps what it began
// with).
func RepeatOf(rep *results.Reproduction, step results.Step) int {
	return max(cmp.Or(step.Repeat, rep.Repeat), 1)
}

// onlyFilter turns --only into a test of a step; an unknown word is an error that lists the
// scenarios and parts.
func onlyFilter(scenarios []scenario.Scenario, only []string) (func(results.Step) bool, error) {
	var scs, parts []string
	known := []string{results.PartStudies, results.PartMatrix}
	for _, sc := range scenarios {
		known = append(known, sc.Name())
	}
	for _, w := range only {
		switch {
		case w == results.PartStudies || w == results.PartMatrix:
			parts = append(parts, w)
		case slices.Contains(known, w):
			scs = append(scs, w)
		default:
			return nil, fmt.Errorf("--only %q: give scenarios or parts (%s)", w, strings.Join(known, ", "))
		}
	}
	return func(s results.Step) bool {
		return (len(scs) == 0 || slices.Contains(scs, s.Scenario)) && (len(parts) == 0 || slices.Contains(parts, s.Part))
	}, nil
}

// intersect keeps the names of want that are in have, in want's order.
func intersect(want, have []string) []string {
	var out []string
	for _, n := range want {
		if slices.Contains(have, n) {
			out = append(out, n)
		}
	}
	return out
}

// without keeps the names of all that are not in drop.
func without(all, drop []string) []string {
	var out []string
	for _, n := range all {
		if !slices.Contains(drop, n) {
			out = append(out, n)
		}
	}
	return out
}

// New plans a reproduction begun at now over contenders, each step with its estimate.
func New(scenarios []scenario.Scenario, contenders []*contender.Manifest, o Options, command []string, now time.Time) (*results.Reproduction, error) {
	steps, notes, err := Plan(scenarios, contenders, o)
	if err != nil {
		return nil, err
	}
	runtimes := map[string]string{}
	for _, m := range contenders {
		runtimes[m.Name] = m.Runtime
	}
	byName := map[string]scenario.Scenario{}
	for _, sc := range scenarios {
		byName[sc.Name()] = sc
	}
	for i := range steps {
		d, err := Estimate(steps[i], byName[steps[i].Scenario], runtimes, steps[i].Repeat)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", steps[i].Scenario, err)
		}
		steps[i].EstimateS = d.Round(time.Second).Seconds()
	}
	return &results.Reproduction{
		Schema: results.ReproductionSchema, ID: "reproduce-" + now.Format("20060102-150405"), Command: command,
		Started: now, Status: results.RunRunning, Repeat: o.studyRepeat(), Only: o.Only, Quick: o.Quick,
		Steps: steps, Notes: notes,
	}, nil
}

// Extend appends to rep the steps of the scenarios add, planned as rep's own plan would plan
// them (its parts of --only, its repeats, quick or not) over contenders: for a scenario that
// landed after rep began, so that one findings page holds it beside the others. A scenario
// rep already has a step of is refused: its steps are carried on, never planned twice. Each
// step added says when (Step.Added), and the findings say it beside its runs.
func Extend(rep *results.Reproduction, scenarios []scenario.Scenario, contenders []*contender.Manifest, add []string, now time.Time) error {
	var only []string
	for _, w := range rep.Only {
		if w == results.PartStudies || w == results.PartMatrix {
			only = append(only, w)
		}
	}
	for _, name := range add {
		for _, st := range rep.Steps {
			if st.Scenario == name {
				return fmt.Errorf("--add %s: the reproduction has its steps already (resume carries them on)", name)
			}
		}
	}
	o := Options{Repeat: rep.Repeat, MatrixRepeat: matrixRepeatOf(rep), Only: append(only, add...), Quick: rep.Quick}
	more, err := New(scenarios, contenders, o, rep.Command, now)
	if err != nil {
		return fmt.Errorf("--add %s: %w", strings.Join(add, ","), err)
	}
	for i := range more.Steps {
		more.Steps[i].Added = &now
	}
	rep.Steps = append(rep.Steps, more.Steps...)
	for _, n := range more.Notes {
		if slices.ContainsFunc(add, func(name string) bool { return strings.HasPrefix(n, name+": ") }) && !slices.Contains(rep.Notes, n) {
			rep.Notes = append(rep.Notes, n)
		}
	}
	if len(rep.Only) > 0 {
		rep.Only = append(rep.Only, add...)
	}
	return nil
}

// matrixRepeatOf is the repeats rep gave its matrix steps (the default when it has none).
func matrixRepeatOf(rep *results.Reproduction) int {
	for _, st := range rep.Steps {
		if st.Part == results.PartMatrix && st.Repeat > 0 {
			return st.Repeat
		}
	}
	return DefaultMatrixRepeat
}
