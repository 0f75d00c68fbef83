package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/postgres"
)

func newDBCmd() *cobra.Command {
	var o postgres.Options
	var cpus string
	cmd := &cobra.Command{
		Use:   "db",
		Short: "Run the lab's PostgreSQL (the database study's data set) until stopped",
		Long: `Makes a throwaway PostgreSQL cluster of Debian's postgresql package in a temporary
folder, on a port of its own on 127.0.0.1 behind a password made for it, loads the data set
(table data: study 002's record, rows 1 and 2 the study's own documents) and prints its URL,
the DB_URL a contender's db feature reads. Ctrl-C stops it and removes the folder. Durability
is off (fsync, synchronous_commit, full_page_writes): the data is made anew at every start
and only read.`,
		Example: `  arena db                      # prints postgres://arena:…@127.0.0.1:<port>/arena
  arena db --port 5544 --cpus 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.Port < 0 || o.Port > 65535 {
				return fmt.Errorf("--port %d: give 0 (any free port) to 65535", o.Port)
			}
			if cpus != "" {
				set, err := lab.ParseCPUs(cpus)
				if err != nil {
					return fmt.Errorf("--cpus: %w", err)
				}
				o.CPUs = lab.FormatCPUs(set)
			}
			s, err := postgres.Start(cmd.Context(), o)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, s.URL())
			fmt.Fprintf(out, "%s; %d rows in table %s; Ctrl-C stops it and removes its folder\n", s.Describe(), s.Rows, postgres.Table)
			<-cmd.Context().Done()
			return s.Stop()
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.Port, "port", 0, "port on 127.0.0.1 (0: any free port, printed in the URL)")
	f.IntVar(&o.Rows, "rows", postgres.Rows, "rows of the data set")
	f.IntVar(&o.MaxConnections, "max-connections", 200, "PostgreSQL's max_connections")
	f.StringVar(&cpus, "cpus", "", "pin it to these CPUs, e.g. 0 (default: unpinned)")
	return cmd
}
