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
	"github.com/arena-lab/arena/internal/reproduce"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/report"
	"github.com/arena-lab/arena/scenarios"
)

// findingsFile is the findings page's name in a reproduction's folder.
const findingsFile = "findings.html"

func newReproduceCmd() *cobra.Command {
	var (
		lf         labFlags
		repeat     int
		matrixRep  int
		only       []string
		contenders []string
		quick      bool
		resume     string
		force      bool
		out        string
		dryRun     bool
		markdown   string
	)
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
writes them as Markdown too (docs/findings.md).`,
		Example: `  arena reproduce --dry-run
  arena reproduce
  arena reproduce --only studies --repeat 5
  arena reproduce --repeat 1 --quick
  arena reproduce --only isolation,downstream --contenders spring-mvc,spring-webflux,vertx
  arena reproduce --resume runs/reproduce-20261123-093000
  arena reproduce --resume runs/reproduce-20261123-093000 --markdown docs/findings.md`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			for _, r := range []struct {
				flag string
				n    int
			}{{"repeat", repeat}, {"matrix-repeat", matrixRep}} {
				if r.n < 1 || r.n > 100 {
					return fmt.Errorf("--%s %d: give 1 to 100", r.flag, r.n)
				}
			}
			if force && resume == "" {
				return errors.New("--force-resume goes with --resume")
			}
			if resume != "" {
				for _, f := range []string{"repeat", "matrix-repeat", "only", "contenders", "quick", "out"} {
					if cmd.Flags().Changed(f) {
						return fmt.Errorf("--resume carries on a reproduction with its own plan: drop --%s", f)
					}
				}
			}
			l, err := lf.open(stderr)
			if err != nil {
				return err
			}
			l.Hurry = hurryOf(cmd.Context())
			all, err := contender.Discover(filepath.Join(l.Root, "contenders"))
			if err != nil {
				return err
			}
			var rep *results.Reproduction
			var dir string
			if resume != "" {
				if rep, err = results.LoadReproduction(resume); err != nil {
					return fmt.Errorf("no reproduction %q: %w", resume, err)
				}
				if dir = resume; filepath.Base(resume) == results.ReproductionFile {
					dir = filepath.Dir(resume)
				}
			} else {
				ms, err := contender.Select(all, contenders)
				if err != nil {
					return err
				}
				rep, err = reproduce.New(scenarios.All(), ms, reproduce.Options{Repeat: repeat, MatrixRepeat: matrixRep, Only: only, Quick: quick}, os.Args, time.Now())
				if err != nil {
					return err
				}
				if out == "" {
					out = filepath.Join(l.Root, "runs")
				}
				dir = filepath.Join(out, rep.ID)
			}
			if dryRun {
				reproduce.WritePlan(stdout, rep, dir)
				return nil
			}
			reproduce.WritePlan(stderr, rep, dir)
			if err := findJDKFor(l, stepContenders(all, rep)); err != nil {
				return err
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			runner := reproduce.Runner{Lab: l, Find: scenarios.Find, Manifests: all, Out: stderr, ForceResume: force,
				After: func(run *results.Run, runDir string) {
					if err := report.WriteFile(run, report.ChartLibPath(l.Root), filepath.Join(runDir, "report.html")); err != nil {
						fmt.Fprintf(stderr, "report: not written: %v\n", err)
					}
					printSummary(stdout, run)
				}}
			runErr := runner.Run(cmd.Context(), rep, dir)
			page, findErr := writeFindings(l.Root, rep, dir, markdown)
			fmt.Fprintf(stderr, "\nreproduction: %s (%s)\n", dir, rep.Status)
			if page != "" {
				fmt.Fprintf(stderr, "findings:     %s\n", page)
			}
			switch {
			case runErr != nil:
				return runErr
			case rep.Status == results.RunInterrupted:
				fmt.Fprintf(stderr, "interrupted: carry on with  arena reproduce --resume %s\n", dir)
				return errors.Join(errInterrupted, findErr)
			}
			return findErr
		},
	}
	lf.register(cmd)
	f := cmd.Flags()
	f.IntVar(&repeat, "repeat", reproduce.DefaultStudyRepeat, "measure every cell of the studies' forms N times: the verdicts order figures by a U test over 3 or more; fewer, and the findings say their orders rest on so few")
	f.IntVar(&matrixRep, "matrix-repeat", reproduce.DefaultMatrixRepeat, "measure every cell of the matrix (the other contenders) N times")
	f.StringSliceVar(&only, "only", nil, "only these scenarios and/or parts (studies, matrix), comma-separated")
	f.StringSliceVar(&contenders, "contenders", nil, "only these contenders, comma-separated (default: all)")
	f.BoolVar(&quick, "quick", false, "every run in its scenario's quick form: a reproduction in miniature")
	f.StringVar(&resume, "resume", "", "carry on the reproduction in this folder (or render its findings again); a run begun with another heap, other CPUs, on another machine or arena is refused")
	f.BoolVar(&force, "force-resume", false, "with --resume: carry on even where the lab differs from the one the run began in (each difference is recorded in the run and the step)")
	f.StringVar(&out, "out", "", "folder for reproduce-<date>/ (default: <lab>/runs)")
	f.BoolVar(&dryRun, "dry-run", false, "print the plan and its ETA, and run nothing")
	f.StringVar(&markdown, "markdown", "", "also write the findings as Markdown to this file (e.g. docs/findings.md)")
	return cmd
}

// writeFindings renders the findings page into the reproduction's folder, and the Markdown
// to markdown when given; it returns the page's path ("" when not written).
func writeFindings(root string, rep *results.Reproduction, dir, markdown string) (string, error) {
	f, err := findings.Build(rep, dir)
	if err != nil {
		return "", fmt.Errorf("findings: %w", err)
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
