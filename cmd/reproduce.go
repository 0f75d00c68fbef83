package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/findings"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/reproduce"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/report"
	"github.com/arena-lab/arena/scenarios"
)

// findingsFile is the findings page's name in a reproduction's folder.
const findingsFile = "findings.html"

// reproduceOptions are arena reproduce's flags.
type reproduceOptions struct {
	lf         labFlags
	repeat     int
	matrixRep  int
	only       []string
	contenders []string
	quick      bool
	resume     string
	force      bool
	add        []string
	out        string
	dryRun     bool
	markdown   string
	gf         gateFlags
	ef         exportFlags
}

func newReproduceCmd() *cobra.Command {
	o := &reproduceOptions{}
	cmd := &cobra.Command{
		Use:   "reproduce",
		Short: "Reproduce all five studies: each in its own form on its stacks, then every contender on every scenario, and the findings",
		Long: `Runs every scenario at the study's own preset on the contenders that stand for the stacks
the study compared (and, beside it, the steady state where a scenario has one), then every
other contender on every scenario in a shorter form, and writes one folder: every run with
its report, reproduction.json (the plan and where it got to), and findings.html, each
study's claims with its figures beside ours and the matrix of every contender.

The studies' forms measure every cell 3 times by default (--repeat), so that a verdict's
orders rest on a U test over the repeats rather than on one figure each; the matrix once
(--matrix-repeat). It states its ETA, with those repeats, before it starts.

A reproduction stopped (Ctrl-C) or crashed part-way carries on with --resume from its last
finished cell, with the repeats it began with: nothing is measured twice. A run begun with
another heap or other CPUs, on another machine or by another arena is not carried on
(--force-resume does, and records it); a run's results.json it cannot read stops it. --resume of a
finished reproduction renders its findings again with this arena's rules; --markdown
writes them as Markdown too (docs/findings.md). --add with --resume appends a scenario that
landed after the reproduction began, planned as its own plan would plan it (its parts, its
repeats), so that one findings page holds it beside the others.

` + gateHelp + ` Every run of the reproduction is judged, each
with its summary.json; --junit holds a test suite per run.

` + exitHelp,
		Example: `  arena reproduce --dry-run
  arena reproduce
  arena reproduce --only studies --repeat 5
  arena reproduce --repeat 1 --quick
  arena reproduce --only isolation,downstream --contenders spring-mvc,spring-webflux,vertx
  arena reproduce --resume runs/reproduce-20261123-093000
  arena reproduce --resume runs/reproduce-20261123-093000 --markdown docs/findings.md
  arena reproduce --resume runs/reproduce-20261123-093000 --add database --force-resume
  arena reproduce --only studies --quick --fail-on fails,crashed,unresponsive --junit junit.xml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(cmd.Flags().Changed); err != nil {
				return err
			}
			return o.run(cmd)
		},
	}
	o.register(cmd)
	return cmd
}

// register adds the lab's flags and the reproduction's own to cmd.
func (o *reproduceOptions) register(cmd *cobra.Command) {
	o.lf.register(cmd)
	f := cmd.Flags()
	f.IntVar(&o.repeat, "repeat", reproduce.DefaultStudyRepeat, "measure every cell of the studies' forms N times: the verdicts order figures by a U test over 3 or more; fewer, and the findings say their orders rest on so few")
	f.IntVar(&o.matrixRep, "matrix-repeat", reproduce.DefaultMatrixRepeat, "measure every cell of the matrix (the other contenders) N times")
	f.StringSliceVar(&o.only, "only", nil, "only these scenarios and/or parts (studies, matrix), comma-separated")
	f.StringSliceVar(&o.contenders, "contenders", nil, "only these contenders, comma-separated (default: all)")
	f.BoolVar(&o.quick, "quick", false, "every run in its scenario's quick form: a reproduction in miniature")
	f.StringVar(&o.resume, "resume", "", "carry on the reproduction in this folder (or render its findings again); a run begun with another heap, other CPUs, on another machine or arena is refused")
	f.BoolVar(&o.force, "force-resume", false, "with --resume: carry on even where the lab differs from the one the run began in (each difference is recorded in the run and the step)")
	f.StringSliceVar(&o.add, "add", nil, "with --resume: append these scenarios' steps, planned as the reproduction's own (its parts and repeats), comma-separated")
	f.StringVar(&o.out, "out", "", "folder for reproduce-<date>/ (default: <lab>/runs)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print the plan and its ETA, and run nothing")
	f.StringVar(&o.markdown, "markdown", "", "also write the findings as Markdown to this file (e.g. docs/findings.md)")
	o.gf.register(cmd)
	o.ef.register(cmd)
}

// validate checks the repeats, and that --resume comes with none of the flags that make a
// new plan (changed tells which flags were given).
func (o *reproduceOptions) validate(changed func(name string) bool) error {
	for _, r := range []struct {
		flag string
		n    int
	}{{"repeat", o.repeat}, {"matrix-repeat", o.matrixRep}} {
		if r.n < 1 || r.n > 100 {
			return fmt.Errorf("--%s %d: give 1 to 100", r.flag, r.n)
		}
	}
	if err := o.gf.parse(); err != nil {
		return err
	}
	if err := o.ef.parse(); err != nil {
		return err
	}
	if o.force && o.resume == "" {
		return errors.New("--force-resume goes with --resume")
	}
	if len(o.add) > 0 && o.resume == "" {
		return errors.New("--add goes with --resume: a new reproduction plans its scenarios with --only")
	}
	if o.resume != "" {
		for _, f := range []string{"repeat", "matrix-repeat", "only", "contenders", "quick", "out"} {
			if changed(f) {
				return fmt.Errorf("--resume carries on a reproduction with its own plan: drop --%s", f)
			}
		}
	}
	return nil
}

// run opens the lab, plans the reproduction (or loads the one resumed), and prints the plan
// (--dry-run) or carries it out.
func (o *reproduceOptions) run(cmd *cobra.Command) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	l, err := o.lf.open(stderr)
	if err != nil {
		return err
	}
	l.Hurry = hurryOf(cmd.Context())
	l.Exporters = o.ef.exporters
	all, err := contender.Discover(filepath.Join(l.Root, "contenders"))
	if err != nil {
		return err
	}
	rep, dir, err := o.plan(l.Root, all)
	if err != nil {
		return err
	}
	if err := o.gf.checkTags(stepSpecs(rep)...); err != nil {
		return err
	}
	if o.dryRun {
		reproduce.WritePlan(stdout, rep, dir)
		return nil
	}
	reproduce.WritePlan(stderr, rep, dir)
	if err := toolchainsFor(l, stepContenders(all, rep)); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return o.carryOut(cmd, l, all, rep, dir)
}

// plan is the reproduction resumed (--resume) or a new one of the contenders all, and the
// folder it is written to.
func (o *reproduceOptions) plan(root string, all []*contender.Manifest) (*results.Reproduction, string, error) {
	if o.resume != "" {
		rep, err := results.LoadReproduction(o.resume)
		if err != nil {
			return nil, "", fmt.Errorf("no reproduction %q: %w", o.resume, err)
		}
		dir := o.resume
		if filepath.Base(o.resume) == results.ReproductionFile {
			dir = filepath.Dir(o.resume)
		}
		if len(o.add) > 0 {
			if err := reproduce.Extend(rep, scenarios.All(), all, o.add, time.Now()); err != nil {
				return nil, "", err
			}
		}
		// A record read from a file is held to what `arena run` holds its flags to, before
		// anything is written or run.
		if err := reproduce.CheckSteps(rep, checkStepSpec); err != nil {
			return nil, "", fmt.Errorf("reproduction %s: %w", dir, err)
		}
		return rep, dir, nil
	}
	ms, err := contender.Select(all, o.contenders)
	if err != nil {
		return nil, "", err
	}
	rep, err := reproduce.New(scenarios.All(), ms, reproduce.Options{Repeat: o.repeat, MatrixRepeat: o.matrixRep, Only: o.only, Quick: o.quick}, os.Args, time.Now())
	if err != nil {
		return nil, "", err
	}
	out := o.out
	if out == "" {
		out = filepath.Join(root, "runs")
	}
	return rep, filepath.Join(out, rep.ID), nil
}

// checkStepSpec is `arena run`'s check of a spec (checkSpec), for a reproduction's steps.
func checkStepSpec(spec results.RunSpec) error {
	_, err := checkSpec(spec)
	return err
}

// carryOut runs the reproduction's cells into dir, each run's report and summary as it
// ends, then writes the findings and says where everything is.
func (o *reproduceOptions) carryOut(cmd *cobra.Command, l *lab.Lab, all []*contender.Manifest, rep *results.Reproduction, dir string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	runner := reproduce.Runner{Lab: l, Find: scenarios.Find, Manifests: all, Out: stderr, ForceResume: o.force, Check: checkStepSpec,
		After: func(run *results.Run, runDir string) {
			if err := report.WriteFile(run, report.ChartLibPath(l.Root), filepath.Join(runDir, "report.html")); err != nil {
				fmt.Fprintf(stderr, "report: not written: %v\n", err)
			}
			if err := printSummary(stdout, run); err != nil {
				fmt.Fprintf(stderr, "summary: not printed: %v\n", err)
			}
		}}
	runErr := runner.Run(cmd.Context(), rep, dir)
	page, findErr := writeFindings(l.Root, rep, dir, o.markdown)
	fmt.Fprintf(stderr, "\nreproduction: %s (%s)\n", dir, rep.Status)
	if page != "" {
		fmt.Fprintf(stderr, "findings:     %s\n", page)
	}
	failed, gateErr := o.gf.judgeReproduction(rep, dir, stdout, stderr)
	switch {
	case runErr != nil:
		return runErr
	case rep.Status == results.RunInterrupted:
		fmt.Fprintf(stderr, "interrupted: carry on with  arena reproduce --resume %s\n", dir)
		return errors.Join(errInterrupted, findErr, gateErr)
	case findErr != nil || gateErr != nil:
		return errors.Join(findErr, gateErr)
	}
	return failed
}

// writeFindings renders the findings page into the reproduction's folder, and the Markdown
// to markdown when given; it returns the page's path ("" when not written).
func writeFindings(root string, rep *results.Reproduction, dir, markdown string) (string, error) {
	f, err := buildFindings(rep, dir)
	if err != nil {
		return "", err
	}
	page := filepath.Join(dir, findingsFile)
	if err := report.WriteFindings(f, currentBuilds(root), scenarios.ClaimsOf, report.ChartLibPath(root), page); err != nil {
		return "", err
	}
	if markdown == "" {
		return page, nil
	}
	md, err := os.Create(markdown)
	if err != nil {
		return page, fmt.Errorf("findings: %w", err)
	}
	shot := filepath.Join(filepath.Dir(markdown), "findings.png")
	rel, _ := filepath.Rel(filepath.Dir(markdown), shot)
	if _, err := os.Stat(shot); err != nil {
		rel = "" // no screenshot beside it yet
	}
	err = findings.WriteMarkdown(md, f, page, rel)
	return page, errors.Join(err, md.Close())
}

// buildFindings reads the reproduction in dir, every run judged again with this arena's rules.
func buildFindings(rep *results.Reproduction, dir string) (*findings.Findings, error) {
	f, err := findings.Build(rep, dir, findings.Scenarios{All: scenarios.All(), Rejudge: scenarios.Rejudge, ClaimsOf: scenarios.ClaimsOf})
	if err != nil {
		return nil, fmt.Errorf("findings: %w", err)
	}
	root, _ := lab.FindRoot() // outside a lab, the binary's own stamp alone says which arena judges
	f.JudgedBy = findings.ThisArena(root)
	return f, nil
}

// stepContenders are the contenders a reproduction's steps run (those the lab still has).
func stepContenders(all []*contender.Manifest, rep *results.Reproduction) []*contender.Manifest {
	var out []*contender.Manifest
	for _, m := range all {
		for _, st := range rep.Steps {
			if slices.Contains(st.Contenders, m.Name) && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}
