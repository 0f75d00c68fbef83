package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/report"
	"github.com/arena-lab/arena/scenarios"
)

// runFolder is a run's folder name: its start, then its scenario.
var runFolder = regexp.MustCompile(`^\d{8}-\d{6}-(.+)$`)

func newMatrixCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "matrix [RUN…]",
		Short: "Render every contender against every scenario, each cell from the latest run that measured it",
		Long: `Each RUN is a run's id (a folder under runs/), its folder, or its results.json. With no RUN,
every run under runs/ whose results.json loads, those of reproductions (runs/reproduce-*/)
included. One column per scenario and preset; a
contender's cell comes from the latest run of that column that measured it, with that
run's date and a link to its report, marked stale when the contender's build has changed
since. The verdicts are judged again with this arena's scenarios, as arena report does.`,
		Example: "  arena matrix\n  arena matrix 20261121-061500-isolation 20261121-080000-sleep -o /tmp/matrix.html",
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := lab.FindRoot()
			if err != nil {
				return err
			}
			stderr := cmd.ErrOrStderr()
			var runs []loadedRun
			if len(args) == 0 {
				if runs, err = runsIn(filepath.Join(root, "runs"), stderr); err != nil {
					return err
				}
			}
			for _, arg := range args {
				r, err := findRun(root, arg)
				if err != nil {
					return err
				}
				runs = append(runs, r)
			}
			if out == "" {
				out = filepath.Join(root, "runs", "matrix.html")
			}
			return writeMatrix(cmd, root, runs, out)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "where to write the matrix (default: runs/matrix.html)")
	return cmd
}

// loadedRun is a run and its folder.
type loadedRun struct {
	*results.Run
	dir string
}

// findRun loads a run given as an id (a folder under runs/), a folder or a results.json.
func findRun(root, arg string) (loadedRun, error) {
	path := arg
	if _, err := os.Stat(path); err != nil {
		path = filepath.Join(root, "runs", arg)
	}
	run, err := results.Load(path)
	if err != nil {
		return loadedRun{}, fmt.Errorf("no run %q: %w", arg, err)
	}
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		path = filepath.Dir(path)
	}
	return loadedRun{run, path}, nil
}

// runsIn loads every run folder under dir, and under its reproductions' folders, whose
// results.json loads; one that does not is passed over with a word to warn.
func runsIn(dir string, warn io.Writer) ([]loadedRun, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("no runs: %w", err)
	}
	var runs []loadedRun
	for _, e := range entries {
		switch {
		case !e.IsDir():
		case runFolder.MatchString(e.Name()):
			run, err := results.Load(filepath.Join(dir, e.Name()))
			if err != nil {
				fmt.Fprintf(warn, "arena: skipping %s: %v\n", e.Name(), err)
				continue
			}
			runs = append(runs, loadedRun{run, filepath.Join(dir, e.Name())})
		case strings.HasPrefix(e.Name(), "reproduce-"):
			inner, _ := runsIn(filepath.Join(dir, e.Name()), warn) // a reproduction with no run yet adds none
			runs = append(runs, inner...)
		}
	}
	if len(runs) == 0 {
		return nil, errors.New("no run under " + dir + " has a results.json that loads")
	}
	return runs, nil
}

// writeMatrix judges the runs again and renders their matrix to out, linking each run's
// report and marking cells of older builds than the contenders' current ones.
func writeMatrix(cmd *cobra.Command, root string, runs []loadedRun, out string) error {
	var all []*results.Run
	reports := map[string]string{}
	for _, r := range runs {
		rejudgeRun(r.Run, cmd.ErrOrStderr())
		all = append(all, r.Run)
		if _, err := os.Stat(filepath.Join(r.dir, "report.html")); err == nil {
			if rel, err := filepath.Rel(filepath.Dir(out), filepath.Join(r.dir, "report.html")); err == nil {
				reports[r.ID] = filepath.ToSlash(rel)
			}
		}
	}
	o := report.MatrixOptions{Reports: reports, Builds: currentBuilds(root), Claims: scenarios.ClaimsOf}
	if err := report.WriteMatrix(all, o, report.ChartLibPath(root), out); err != nil {
		return err
	}
	fmt.Fprintln(cmd.OutOrStdout(), out)
	return nil
}

// currentBuilds are the build hashes of the lab's contenders as their sources are now; a
// contender whose sources cannot be read is left out (its cells are not marked).
func currentBuilds(root string) map[string]string {
	ms, err := contender.Discover(filepath.Join(root, "contenders"))
	if err != nil {
		return nil
	}
	builds := map[string]string{}
	for _, m := range ms {
		if h, err := contender.SourceHash(m); err == nil {
			builds[m.Name] = h
		}
	}
	return builds
}

// rejudgeRun judges a run again with this arena's rules (scenarios.Rejudge); a run it
// cannot summarise keeps the verdicts it was saved with, and says so to warn.
func rejudgeRun(run *results.Run, warn io.Writer) {
	if err := scenarios.Rejudge(run); err != nil {
		fmt.Fprintf(warn, "arena: %s: keeping its saved verdicts: %v\n", run.ID, err)
	}
}
