package cmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/downstream"
)

func newDownstreamCmd() *cobra.Command {
	var port int
	var delay time.Duration
	cmd := &cobra.Command{
		Use:   "downstream",
		Short: "Serve the lab's downstream JSON (study 002's data) until stopped",
		Long: `Serves /resources/data1.json and /resources/data2.json on 127.0.0.1, optionally after a
delay, for contenders' /data/{id} (DOWNSTREAM_URL). It also answers
/resources/data500.json with 500 and leaves /resources/data504.json unanswered for 10 s,
the failures arena verify checks.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return fmt.Errorf("--port %d: give 0 (any free port) to 65535", port)
			}
			if delay < 0 || delay > time.Minute {
				return fmt.Errorf("--delay %s: give 0 to 1m", delay)
			}
			s, err := downstream.Start(fmt.Sprintf("127.0.0.1:%d", port), delay)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), s.URL())
			<-cmd.Context().Done()
			return s.Close()
		},
	}
	cmd.Flags().IntVar(&port, "port", 0, "port on 127.0.0.1 (0: any free port, printed on start)")
	cmd.Flags().DurationVar(&delay, "delay", 0, "wait this long before each data answer (e.g. 50ms, study 001's second test)")
	return cmd
}
