package cmd

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/report"
	"github.com/arena-lab/arena/scenarios"
)

func newReportCmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "report RUN",
		Short: "Re-render a run's report.html from its results.json",
		Long: `RUN is a run's id (a folder under runs/), its folder, or its results.json. The verdicts
are judged again with this arena's scenario, so a re-rendered report reflects the
current rules; the measurements are never changed.`,
		Example: "  arena report 20261121-061500-isolation",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := lab.FindRoot()
			if err != nil {
				return err
			}
			run, err := findRun(root, args[0])
			if err != nil {
				return err
			}
			if err := scenarios.Rejudge(run.Run); err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join(run.dir, "report.html")
			}
			if err := report.WriteFile(run.Run, report.ChartLibPath(root), out); err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "where to write the report (default: report.html beside results.json)")
	return cmd
}
