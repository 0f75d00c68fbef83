package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/spf13/cobra"

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
		Short: "Render every contender against every scenario, from each scenario's latest run",
		Long: `Each RUN is a run's id (a folder under runs/), its folder, or its results.json; of several
runs of one scenario the most recent counts. With no RUN, the latest run of every scenario
under runs/ (the greatest folder name per scenario whose results.json loads). The verdicts
are judged again with this arena's scenarios, as arena report does.`,
		Example: "  arena matrix\n  arena matrix 20261121-061500-isolation 20261121-080000-sleep -o /tmp/matrix.html",
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := lab.FindRoot()
			if err != nil {
				return err
			}
			var runs []*results.Run
			if len(args) == 0 {
				if runs, err = latestRunsIn(filepath.Join(root, "runs")); err != nil {
					return err
				}
			}
			for _, arg := range args {
				path := arg
				if _, err := os.Stat(path); err != nil {
					path = filepath.Join(root, "runs", arg)
				}
				run, err := results.Load(path)
				if err != nil {
					return fmt.Errorf("no run %q: %w", arg, err)
				}
				runs = append(runs, run)
			}
			for _, run := range runs {
				rejudgeRun(run)
			}
			if out == "" {
				out = filepath.Join(root, "runs", "matrix.html")
			}
			if err := report.WriteMatrix(runs, report.ChartLibPath(root), out); err != nil {
				return err
			}
			fmt.Println(out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "where to write the matrix (default: runs/matrix.html)")
	return cmd
}

// latestRunsIn loads, per scenario, the run with the greatest folder name under dir that
// loads; a folder whose results.json does not is passed over for the one before it.
func latestRunsIn(dir string) ([]*results.Run, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("no runs: %w", err)
	}
	byScenario := map[string][]string{}
	var order []string
	for _, e := range entries {
		m := runFolder.FindStringSubmatch(e.Name())
		if !e.IsDir() || m == nil {
			continue
		}
		if _, ok := byScenario[m[1]]; !ok {
			order = append(order, m[1])
		}
		byScenario[m[1]] = append(byScenario[m[1]], e.Name())
	}
	var runs []*results.Run
	for _, scenario := range order {
		names := byScenario[scenario]
		slices.Sort(names)
		for i := len(names) - 1; i >= 0; i-- {
			run, err := results.Load(filepath.Join(dir, names[i]))
			if err != nil {
				fmt.Fprintf(os.Stderr, "arena: skipping %s: %v\n", names[i], err)
				continue
			}
			runs = append(runs, run)
			break
		}
	}
	if len(runs) == 0 {
		return nil, errors.New("no run under " + dir + " has a results.json that loads")
	}
	return runs, nil
}

// rejudgeRun summarises the run's cells and judges them again with this arena's rules, as
// arena report does; a run it cannot summarise keeps the verdicts it was saved with.
func rejudgeRun(run *results.Run) {
	sc, err := scenarios.Find(run.Scenario.Name)
	if err != nil {
		return
	}
	summary, err := results.Summarise(run.Cells)
	if err != nil {
		fmt.Fprintf(os.Stderr, "arena: %s: keeping its saved verdicts: %v\n", run.ID, err)
		return
	}
	run.Summary = summary
	run.Verdicts, run.Claims = sc.Judge(run)
}
