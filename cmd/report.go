package cmd

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
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
			path := args[0]
			if _, err := os.Stat(path); err != nil {
				path = filepath.Join(root, "runs", args[0])
			}
			run, err := results.Load(path)
			if err != nil {
				return fmt.Errorf("no run %q: %w", args[0], err)
			}
			if sc, err := scenarios.Find(run.Scenario.Name); err == nil {
				if run.Summary, err = results.Summarise(run.Cells); err != nil {
					return err
				}
				run.Verdicts, run.Claims = sc.Judge(run)
			}
			if out == "" {
				dir := path
				if st, err := os.Stat(path); err == nil && !st.IsDir() {
					dir = filepath.Dir(path)
				}
				out = filepath.Join(dir, "report.html")
			}
			if err := report.WriteFile(run, report.ChartLibPath(root), out); err != nil {
				return err
			}
			fmt.Println(out)
			return nil
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "where to write the report (default: report.html beside results.json)")
	return cmd
}
