package cmd

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/compare"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/report"
)

func newCompareCmd() *cobra.Command {
	var (
		out   string
		alpha float64
	)
	cmd := &cobra.Command{
		Use:   "compare A B",
		Short: "Tell two runs of one scenario apart: per contender and level, what changed and whether it is significant",
		Long: `A and B are runs (an id under runs/, a folder or a results.json) of one scenario, preset,
form and load: say before and after an upgrade, or without and with a setting (arena run
--env WORKER_THREADS=11). For every contender, level and tag both measured it prints
requests/s and the response time's p50, p99 and p99.9 of A and B (the median of the
repeats, ± half their range), the change in per cent, and a Mann-Whitney U test over the
repeats, as benchstat does: "~" where the change is not significant. It writes the same as
a page. Runs of different scenarios, presets, forms or loads are refused.`,
		Example: `  arena run sleep --contenders spring-mvc --levels sleep-c200 --quick --repeat 5
  arena run sleep --contenders spring-mvc --levels sleep-c200 --quick --repeat 5 --env WORKER_THREADS=11
  arena compare 20261123-100000-sleep 20261123-101500-sleep`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if alpha <= 0 || alpha >= 1 {
				return fmt.Errorf("--alpha %g: give a P between 0 and 1, e.g. 0.05", alpha)
			}
			root, err := lab.FindRoot()
			if err != nil {
				return err
			}
			a, err := findRun(root, args[0])
			if err != nil {
				return err
			}
			b, err := findRun(root, args[1])
			if err != nil {
				return err
			}
			c, err := compare.Runs(a.Run, b.Run, alpha)
			if err != nil {
				return err
			}
			c.MaxFailedPct = scenario.MaxFailedPct // a side failing more is read as failing, not faster
			if out == "" {
				out = filepath.Join(b.dir, "compare-"+a.ID+".html")
			}
			if err := compare.Write(cmd.OutOrStdout(), c); err != nil {
				return err
			}
			if err := report.WriteCompare(c, report.ChartLibPath(root), out); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "\npage: %s\n", out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "where to write the page (default: compare-<A>.html in B's folder)")
	cmd.Flags().Float64Var(&alpha, "alpha", compare.DefaultAlpha, "a change is significant when the U test's P is below this")
	return cmd
}
