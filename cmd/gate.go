package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/gate"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/scenarios"
)

// exitHelp is what every command that can fail a CI job says of its exit status.
const exitHelp = `Exit status: 0 when it ended and nothing it was asked to fail on failed; 1 when the
command itself failed (bad input, nothing measured, results not written); 2 when a check
failed (a --fail-on word, a --threshold, a regression): the failed checks are listed on
stdout and in --junit; 130 when interrupted (Ctrl-C), with what finished kept.`

// gateHelp is how arena run and arena reproduce are judged for CI.
const gateHelp = `For CI: --fail-on names what fails the command (exit 2): claims that fail, hold partly or
are untested (fails, partly, untested; untested here counts as untested), and cells that
crashed (or ran out of memory, or never became ready), went unresponsive, had delivery
faults, failed over 1 % of a stream's requests (errors) or are inconclusive (client-bound,
shared CPU); fails also names a cell whose verdict reads bad (isolation's starved).
--threshold bounds a stream's figure at every contender and level, judged on the repeats'
merged histograms: [stream:]figure<value with figure p50, p90, p99, p99.9, mean, max (a
unit: 50ms, 1.5s), rps (requests/s) or errors (a per cent; without a stream, over every
stream). A stream that failed requests never passes a latency or rps bound unless a
threshold bounds its errors. summary.json beside results.json lists every check; --junit
writes them for CI's test viewers.`

// gateFlags judge a run (arena run) or a reproduction's runs (arena reproduce) for CI.
type gateFlags struct {
	failOn     []string
	thresholds []string
	junit      string
	g          gate.Gate
}

func (f *gateFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringSliceVar(&f.failOn, "fail-on", nil, "exit 2 when any of these is found, comma-separated: "+strings.Join(gate.Words, ", ")+" (see above)")
	fl.StringArrayVar(&f.thresholds, "threshold", nil, "exit 2 when a figure breaks this bound at some contender and level, e.g. instant:p99<50ms, data:rps>5000, errors<0.1% (repeat the flag for more)")
	fl.StringVar(&f.junit, "junit", "", "write every check (cell, claim, threshold) as JUnit XML to this file, for CI's test viewers")
}

// parse reads --fail-on and --threshold once, and checks that --junit can be written where
// it names.
func (f *gateFlags) parse() error {
	g, err := gate.Parse(f.failOn, f.thresholds)
	if err != nil {
		return err
	}
	f.g = g
	return checkJUnitPath(f.junit)
}

// given says whether the run is to be judged for CI at all.
func (f *gateFlags) given() bool { return f.g.Active() || f.junit != "" }

// checkJUnitPath refuses a --junit file whose folder does not exist, before anything runs.
func checkJUnitPath(path string) error {
	if path == "" {
		return nil
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return fmt.Errorf("--junit %s: no folder %s to write it in", path, filepath.Dir(path))
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return fmt.Errorf("--junit %s: a folder; name a file", path)
	}
	return nil
}

// checkTags refuses a threshold on a stream that none of the specs' plans measures.
func (f *gateFlags) checkTags(specs ...results.RunSpec) error {
	if !slices.ContainsFunc(f.g.Thresholds, func(th gate.Threshold) bool { return th.Tag != "" }) {
		return nil
	}
	var tags []string
	for _, spec := range specs {
		ts, err := specTags(spec)
		if err != nil {
			return err
		}
		for _, t := range ts {
			if !slices.Contains(tags, t) {
				tags = append(tags, t)
			}
		}
	}
	return f.g.CheckTags(tags)
}

// specTags are the streams spec's plan measures, in its order.
func specTags(spec results.RunSpec) ([]string, error) {
	sc, err := scenarios.Find(spec.Scenario)
	if err != nil {
		return nil, err
	}
	plan, err := sc.Plan(lab.Options(spec))
	if err != nil {
		return nil, err
	}
	if plan, err = plan.Filter(spec.Levels); err != nil {
		return nil, err
	}
	var tags []string
	for _, l := range plan.Levels {
		for _, s := range scenario.Describe(l).Streams {
			if !slices.Contains(tags, s.Tag) {
				tags = append(tags, s.Tag)
			}
		}
	}
	return tags, nil
}

// judge judges a run saved in dir and writes dir/summary.json; it returns the run's suite.
func (f *gateFlags) judge(run *results.Run, dir string) (gate.Suite, error) {
	checks := f.g.Judge(run)
	if err := gate.WriteSummary(dir, gate.NewSummary(run, f.g, checks)); err != nil {
		return gate.Suite{}, fmt.Errorf("%s: %w", gate.SummaryFile, err)
	}
	return gate.RunSuite(run, f.g, checks), nil
}

// afterRun judges a run that ended with runErr (nil, interrupted, or a failure after it
// measured) in dir, and is the command's error: runErr first (interrupted: 130; else 1),
// then a file not written (1), then a failed check (2).
func (f *gateFlags) afterRun(run *results.Run, dir string, runErr error, stdout, stderr io.Writer) error {
	if run == nil || dir == "" {
		return runErr
	}
	suite, err := f.judge(run, dir)
	if err != nil {
		fmt.Fprintf(stderr, "%v\n", err)
		return errors.Join(runErr, err)
	}
	failed, err := f.finish("arena run "+run.Scenario.Name, []gate.Suite{suite}, stdout, stderr)
	if runErr != nil || err != nil {
		return errors.Join(runErr, err)
	}
	return failed
}

// finish writes --junit, prints the gate's checks that failed, and returns a gateFailed
// when some did (and the error of a JUnit file not written).
func (f *gateFlags) finish(name string, suites []gate.Suite, stdout, stderr io.Writer) (error, error) {
	var checks []gate.Check
	for _, s := range suites {
		checks = append(checks, s.Checks...)
	}
	if f.g.Active() {
		printGate(stdout, "Checks ("+f.g.Describe()+")", len(suites) > 1, suites)
	}
	var writeErr error
	if f.junit != "" {
		if writeErr = writeJUnit(f.junit, name, suites); writeErr != nil {
			fmt.Fprintf(stderr, "junit: not written: %v\n", writeErr)
		} else {
			fmt.Fprintf(stderr, "junit:   %s\n", f.junit)
		}
	}
	return failedOf(checks, f.g.Describe()), writeErr
}

// writeJUnit writes suites as JUnit XML to path.
func writeJUnit(path, name string, suites []gate.Suite) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	err = gate.WriteJUnit(out, name, suites)
	return errors.Join(err, out.Close())
}

// printGate prints the suites' checks that failed under title, each run's id before its
// own when there are several, and how many passed, failed and were skipped.
func printGate(w io.Writer, title string, byRun bool, suites []gate.Suite) {
	var all []gate.Check
	for _, s := range suites {
		all = append(all, s.Checks...)
	}
	passed, failed, skipped := gate.Count(all)
	fmt.Fprintf(w, "\n%s: %d passed, %d failed, %d skipped\n", title, passed, failed, skipped)
	for _, s := range suites {
		for _, c := range gate.FailedChecks(s.Checks) {
			where := ""
			if byRun {
				where = s.Name + ": "
			}
			fmt.Fprintf(w, "  FAILED %s%s %s (%s)\n      %s\n", where, c.Kind, c.Name, strings.Join(c.FailedOn, ", "), c.Message)
		}
	}
}

// failedOf is the gateFailed error of the checks that failed under the gate described,
// naming the first few; nil when none did.
func failedOf(checks []gate.Check, described string) error {
	failed := gate.FailedChecks(checks)
	if len(failed) == 0 {
		return nil
	}
	var names []string
	for i, c := range failed {
		if i == 3 {
			names = append(names, fmt.Sprintf("and %d more", len(failed)-3))
			break
		}
		names = append(names, c.Kind+" "+c.Name)
	}
	return &gateFailed{fmt.Sprintf("%d of %d checks failed (%s): %s", len(failed), len(checks), described, strings.Join(names, "; "))}
}

// stepSpecs are the run specs of a reproduction's steps.
func stepSpecs(rep *results.Reproduction) []results.RunSpec {
	var out []results.RunSpec
	for _, st := range rep.Steps {
		out = append(out, st.RunSpec)
	}
	return out
}

// judgeReproduction judges every run of rep that began, in its folder under dir: each its
// summary.json, and --junit a suite per run. It returns the gateFailed of the checks that
// failed, and the error of a file not written.
func (f *gateFlags) judgeReproduction(rep *results.Reproduction, dir string, stdout, stderr io.Writer) (error, error) {
	var suites []gate.Suite
	var errs []error
	for _, st := range rep.Steps {
		if st.Run == "" {
			continue
		}
		runDir, err := results.RunDir(dir, st.Run)
		if err != nil { // a crafted step: its summary.json is written nowhere
			errs = append(errs, fmt.Errorf("step %s: %w", st.Scenario, err))
			continue
		}
		run, err := results.Load(runDir)
		if err != nil {
			continue // a step begun and stopped before its first save: the reproduction says so
		}
		suite, err := f.judge(run, runDir)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", st.Run, err)
			errs = append(errs, err)
			continue
		}
		suites = append(suites, suite)
	}
	failed, err := f.finish("arena reproduce "+rep.ID, suites, stdout, stderr)
	return failed, errors.Join(append(errs, err)...)
}
