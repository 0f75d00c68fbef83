package cmd

import (
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/lab"
)

func newBenchStreamCmd() *cobra.Command {
	var (
		lf       labFlags
		clients  []int
		size     int
		duration time.Duration
	)
	cmd := &cobra.Command{
		Use:   "stream",
		Short: "Measure the stream client: messages per second it consumes on one core",
		Long: `Against the lab's reference producer in its fast form (arena stream-server --blast,
pinned to --server-cpus: messages formatted as they are written, paced by TCP alone), the
stream scenario's own readers (pinned to --client-cpus) read, frame, parse, check seq and
record the latency of every message for --duration; the client's CPU time divides the
messages. One row per --clients count. The study's server pushed 1.35 M msg/s on 4 cores; the
goal for the client is 1.5 M msg/s of 250-byte messages on one.`,
		Example: "  arena bench stream\n  arena bench stream --clients 1,10,100 --size 250 --duration 10s",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if size < 16 || size > 65536 || duration < time.Second || duration > 10*time.Minute {
				return fmt.Errorf("--size 16..65536 and --duration 1s..10m")
			}
			for _, c := range clients {
				if c < 1 || c > 10000 {
					return fmt.Errorf("--clients %d: 1..10000", c)
				}
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			l, err := lf.open(stderr)
			if err != nil {
				return err
			}
			logDir, err := benchLogs(l.Root)
			if err != nil {
				return err
			}
			srv, err := lab.StartSelf(l.ServerCPUs, filepath.Join(logDir, "stream-server.log"), "stream-server", "--blast")
			if err != nil {
				return err
			}
			defer srv.Stop()
			if err := lab.PinSelf(l.ClientCPUs); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "bench stream: reference producer (--blast) on CPU %s, client on CPU %s\n", lab.FormatCPUs(l.ServerCPUs), lab.FormatCPUs(l.ClientCPUs))
			printStreamHead(stdout, size, duration)
			for _, n := range clients {
				c, err := bench.StreamCostRun(cmd.Context(), srv.Addr, n, size, duration)
				if err != nil {
					return err
				}
				printStreamRow(stdout, c)
			}
			return nil
		},
	}
	lf.register(cmd)
	f := cmd.Flags()
	f.IntSliceVar(&clients, "clients", []int{1, 10, 100}, "connections, one row each")
	f.IntVar(&size, "size", 250, "message size in bytes")
	f.DurationVar(&duration, "duration", 10*time.Second, "reading time per row")
	return cmd
}

// printStreamHead begins the Markdown table of the stream client's cost; printStreamRow adds
// one row a --clients count as it is measured.
func printStreamHead(out io.Writer, size int, duration time.Duration) {
	fmt.Fprintf(out, "\n### Stream client: %d-byte messages for %s\n\n", size, duration)
	fmt.Fprintln(out, "| clients | messages | msg/s | client cores | msg per client CPU-s | ns per message | latency p50 ms | p99 ms | malformed | gaps |")
	fmt.Fprintln(out, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
}

func printStreamRow(out io.Writer, c bench.StreamCost) {
	fmt.Fprintf(out, "| %d | %d | %.0f | %.2f | %.0f | %.0f | %.2f | %.2f | %d | %d |\n", c.Clients, c.Delivered, c.PerSecond,
		c.ClientCores, c.PerCoreSecond, c.NanosPerMessage, c.Latency.P50, c.Latency.P99, c.Malformed, c.Gaps)
}
