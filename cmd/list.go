package cmd

import (
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/scenarios"
)

func newListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List contenders and scenarios",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := lab.FindRoot()
			if err != nil {
				return err
			}
			ms, discoverErr := contender.Discover(root + "/contenders")
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(w, "CONTENDER\tMODEL\tRUNTIME\tFEATURES\tKNOBS\tSTACK")
			for _, m := range ms {
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Model, m.Runtime, orDash(strings.Join(m.Features, ",")), orDash(strings.Join(m.Knobs, ",")), m.Stack)
			}
			fmt.Fprintln(w)
			fmt.Fprintln(w, "SCENARIO\tPRESETS\tSTUDY")
			for _, s := range scenarios.All() {
				fmt.Fprintf(w, "%s\t%s\t%s\n", s.Name(), strings.Join(s.Presets(), ","), s.Study())
			}
			if err := w.Flush(); err != nil {
				return errors.Join(err, discoverErr)
			}
			return discoverErr // a broken manifest is reported after what could be listed
		},
	}
}

// orDash is s, or "-" where it is empty, so that every row keeps its columns.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
