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
			fmt.Fprintln(w, "CONTENDER\tMODEL\tRUNTIME\tVERSION\tFEATURES\tKNOBS\tSTACK")
			versions := map[string]string{}
			for _, m := range ms {
				v, ok := versions[m.Runtime]
				if !ok {
					v = runtimeVersion(root, m.Runtime)
					versions[m.Runtime] = v
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Name, m.Model, m.Runtime, v, orDash(strings.Join(m.Features, ",")), orDash(strings.Join(m.Knobs, ",")), m.Stack)
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

// runtimeVersion is the version the lab runs runtime at, read from its binary (the lab's
// Node's, the JDK arena finds, the machine's Go, Python and Rust), "-" when it is not there;
// the lab's Node before its first install shows the version arena will install.
func runtimeVersion(root, runtime string) string {
	if v := contender.RuntimeVersion(root, runtime); v != "" {
		return strings.ReplaceAll(v, " ", "_")
	}
	if runtime == "node" {
		return "v" + contender.NodeVersion + "(not-yet-installed)"
	}
	return "-"
}

// orDash is s, or "-" where it is empty, so that every row keeps its columns.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
