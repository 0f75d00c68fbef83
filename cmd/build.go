package cmd

import (
	"fmt"

	"github.com/spf13/cobra"
)

func newBuildCmd() *cobra.Command {
	var force bool
	var lf labFlags
	cmd := &cobra.Command{
		Use:   "build [contender...]",
		Short: "Build contenders whose sources changed (default: all)",
		RunE: func(cmd *cobra.Command, args []string) error {
			l, ms, err := lf.openWith(cmd.ErrOrStderr(), args)
			if err != nil {
				return err
			}
			builder := l.Builder()
			for _, m := range ms {
				l.Progress.Step("build " + m.Name)
				b, err := builder.Build(cmd.Context(), m, force)
				if err != nil {
					l.Progress.Fail(err)
					return fmt.Errorf("building %s failed", m.Name)
				}
				if b.Built {
					l.Progress.Done(fmt.Sprintf("built in %s (%s)", b.Duration.Round(1e9), b.Hash))
				} else {
					l.Progress.Done("up to date (" + b.Hash + ")")
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "rebuild even when the sources did not change")
	lf.register(cmd)
	return cmd
}
