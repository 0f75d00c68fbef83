package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/compare"
	"github.com/arena-lab/arena/internal/findings"
	"github.com/arena-lab/arena/internal/gate"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/report"
)

// compareOptions are arena compare's flags.
type compareOptions struct {
	out        string
	alpha      float64
	regression bool    // --fail-on-regression
	threshold  string  // --threshold, as given
	allowed    float64 // --threshold, in per cent
	junit      string
}

func newCompareCmd() *cobra.Command {
	o := &compareOptions{}
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Tell two runs of one scenario apart: per contender and level, what changed and whether it is significant",
		Long: `A and B are runs (an id under runs/, a folder or a results.json) of one scenario, preset,
form and load: say before and after an upgrade, or without and with a setting (arena run
--env WORKER_THREADS=11). For every contender, level and tag both measured it prints
requests/s and the response time's p50, p99 and p99.9 of A and B (the median of the
repeats, ± half their range), the change in per cent, and a Mann-Whitney U test over the
repeats, as benchstat does: "~" where the change is not significant. It writes the same as
a page. Runs of different scenarios, presets, forms or loads are refused.

A and B may instead be two reproductions (arena reproduce's folders): each claim's verdict in
A and in B, both judged again with this arena's rules, alike or otherwise, with the reasons
where they differ; -o writes the table as Markdown. Two reproductions of unchanged code on one
machine should read alike: a claim that does not rests on noise, or on what changed.

For CI: --fail-on-regression exits 2 when some figure of B is worse than A's (fewer
requests/s, a higher percentile) significantly and by more than --threshold (10 % by
default: two runs of one setting can drift apart by 5 %), or when B fails more than 1 % of
a stream's requests and A does not; it names each. It needs repeats enough for the test to
reach --alpha (4 or more a side at 0.05): with fewer it is refused, since it could never
fail. --junit writes every compared figure as a test case. Of two reproductions,
--fail-on-regression exits 2 when some claim reads otherwise in B, and names each.

` + exitHelp,
		Example: `  arena run sleep --contenders spring-mvc --levels sleep-c200 --quick --repeat 5
  arena run sleep --contenders spring-mvc --levels sleep-c200 --quick --repeat 5 --env WORKER_THREADS=11
  arena compare 20261123-100000-sleep 20261123-101500-sleep
  arena compare 20261123-100000-sleep 20261123-101500-sleep --fail-on-regression --threshold 5% --junit compare.xml
  arena compare runs/reproduce-20261127-030000 runs/reproduce-20261128-030000 -o verdicts.md`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(cmd.Flags().Changed); err != nil {
				return err
			}
			ra, rb, err := reproductionsOf(args[0], args[1])
			switch {
			case err != nil:
				return err
			case ra != nil:
				return o.reproductions(cmd, ra, rb)
			}
			return o.run(cmd, args[0], args[1])
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "output", "o", "", "where to write the page (default: compare-<A>.html in B's folder)")
	f.Float64Var(&o.alpha, "alpha", compare.DefaultAlpha, "a change is significant when the U test's P is below this")
	f.BoolVar(&o.regression, "fail-on-regression", false, "exit 2 when a figure of B is significantly worse than A's by more than --threshold, and say which")
	f.StringVar(&o.threshold, "threshold", fmt.Sprintf("%g%%", gate.DefaultRegression), "with --fail-on-regression: how much worse B may be, in per cent of A's median")
	f.StringVar(&o.junit, "junit", "", "write every compared figure as a JUnit test case to this file, for CI's test viewers")
	return cmd
}

// validate checks the flags before any run is read.
func (o *compareOptions) validate(changed func(string) bool) error {
	if o.alpha <= 0 || o.alpha >= 1 {
		return fmt.Errorf("--alpha %g: give a P between 0 and 1, e.g. 0.05", o.alpha)
	}
	if changed("threshold") && !o.regression {
		return errors.New("--threshold goes with --fail-on-regression")
	}
	allowed, err := gate.ParsePercent(o.threshold)
	if err != nil {
		return err
	}
	o.allowed = allowed
	return checkJUnitPath(o.junit)
}

// run compares run b against run a, prints the table and writes the page, then judges the
// regressions when asked.
func (o *compareOptions) run(cmd *cobra.Command, a, b string) error {
	root, err := lab.FindRoot()
	if err != nil {
		return err
	}
	ra, err := findRun(root, a)
	if err != nil {
		return err
	}
	rb, err := findRun(root, b)
	if err != nil {
		return err
	}
	c, err := compare.Runs(ra.Run, rb.Run, o.alpha)
	if err != nil {
		return err
	}
	c.MaxFailedPct = scenario.MaxFailedPct // a side failing more is read as failing, not faster
	if o.regression && !gate.Testable(c) {
		return fmt.Errorf("--fail-on-regression cannot fail on these runs: %s", strings.TrimPrefix(c.TooFew(), "note: "))
	}
	out := o.out
	if out == "" { // A's id, read from its results.json, names the page in B's folder
		if err := results.CheckID(ra.ID); err != nil {
			return fmt.Errorf("run %s: %w", a, err)
		}
		if out, err = results.In(rb.dir, "compare-"+ra.ID+".html"); err != nil {
			return err
		}
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if err := compare.Write(stdout, c); err != nil {
		return err
	}
	if err := report.WriteCompare(c, report.ChartLibPath(root), out); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "\npage: %s\n", out)
	return o.judge(c, stdout, stderr)
}

// reproduction is a reproduction's record and its folder.
type reproduction struct {
	*results.Reproduction
	dir string
}

// reproductionsOf reads a and b as reproductions (a folder, its reproduction.json, or a name
// under runs/): both nil when neither is one, an error when one is and the other is not.
func reproductionsOf(a, b string) (*reproduction, *reproduction, error) {
	read := func(arg string) *reproduction {
		paths := []string{arg}
		if root, err := lab.FindRoot(); err == nil {
			paths = append(paths, filepath.Join(root, "runs", arg))
		}
		for _, path := range paths {
			if rep, err := results.LoadReproduction(path); err == nil {
				if filepath.Base(path) == results.ReproductionFile {
					path = filepath.Dir(path)
				}
				return &reproduction{rep, path}
			}
		}
		return nil
	}
	ra, rb := read(a), read(b)
	switch {
	case ra == nil && rb == nil:
		return nil, nil, nil
	case ra == nil || rb == nil:
		return nil, nil, fmt.Errorf("%s and %s: one is a reproduction and the other is not: compare two runs, or two reproductions", a, b)
	}
	return ra, rb, nil
}

// reproductions sets every claim's verdict in b beside a's, both judged again with this
// arena's rules, prints the table (and writes it to -o as Markdown), and with
// --fail-on-regression fails on each claim that reads otherwise in b.
func (o *compareOptions) reproductions(cmd *cobra.Command, a, b *reproduction) error {
	for _, name := range []string{"alpha", "threshold", "junit"} {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s goes with runs: two reproductions are compared by their claims' verdicts (compare two of their runs for the figures)", name)
		}
	}
	fa, err := buildFindings(a.Reproduction, a.dir)
	if err != nil {
		return err
	}
	fb, err := buildFindings(b.Reproduction, b.dir)
	if err != nil {
		return err
	}
	rows := findings.Agree(fa, fb)
	var table strings.Builder
	if err := findings.WriteAgreement(&table, fa, fb, rows); err != nil {
		return err
	}
	stdout := cmd.OutOrStdout()
	fmt.Fprint(stdout, table.String())
	if o.out != "" {
		if err := os.WriteFile(o.out, []byte(table.String()), 0o644); err != nil {
			return fmt.Errorf("-o: not written: %w", err)
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "\nverdicts: %s\n", o.out)
	}
	if !o.regression {
		return nil
	}
	var checks []gate.Check
	for _, g := range rows {
		c := gate.Check{Kind: "claim", Name: fmt.Sprintf("%s (%s)", g.Scenario, g.Claim), Verdict: g.B, Status: gate.Passed,
			Message: fmt.Sprintf("%s in %s, %s in %s", g.A, a.ID, g.B, b.ID)}
		switch {
		case !g.Compared():
			c.Status = gate.Skipped
		case !g.Alike():
			c.Status, c.FailedOn = gate.Failed, []string{"regression"}
		}
		checks = append(checks, c)
	}
	described := "--fail-on-regression: a claim reads otherwise in B"
	printGate(stdout, "Verdicts ("+described+")", false, []gate.Suite{{Name: a.ID + " → " + b.ID, Checks: checks}})
	return failedOf(checks, described)
}

// judge prints the regressions (--fail-on-regression), writes --junit, and returns a
// gateFailed when some figure regressed.
func (o *compareOptions) judge(c *compare.Comparison, stdout, stderr io.Writer) error {
	if !o.regression && o.junit == "" {
		return nil
	}
	checks := gate.Regressions(c, o.allowed, o.regression)
	described := fmt.Sprintf("--fail-on-regression: significant at p < %g and worse by more than %g %%", c.Alpha, o.allowed)
	suite := gate.Suite{Name: c.A.ID + " → " + c.B.ID, Package: "arena.compare." + c.A.Scenario.Name, Timestamp: c.B.Started,
		Hostname: c.B.Env.Host, Checks: checks, Properties: []gate.Property{{Name: "A", Value: c.A.ID}, {Name: "B", Value: c.B.ID},
			{Name: "alpha", Value: fmt.Sprint(c.Alpha)}, {Name: "threshold", Value: fmt.Sprintf("%g%%", o.allowed)}}}
	if o.regression {
		printGate(stdout, "Regressions ("+described+")", false, []gate.Suite{suite})
	}
	if o.junit != "" {
		if err := writeJUnit(o.junit, "arena compare "+c.A.ID+" "+c.B.ID, []gate.Suite{suite}); err != nil {
			return fmt.Errorf("junit: not written: %w", err)
		}
		fmt.Fprintf(stderr, "junit: %s\n", o.junit)
	}
	return failedOf(checks, described)
}
