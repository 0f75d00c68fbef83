package cmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/stream"
)

func newStreamServerCmd() *cobra.Command {
	var (
		port         int
		backpressure string
		blast        bool
	)
	cmd := &cobra.Command{
		Use:   "stream-server",
		Short: "Serve the lab's reference /stream (the contract's push, in Go) until stopped",
		Long: `A small, correct implementation of the /stream contract: a generator and a sender
goroutine per client, a drop-oldest queue with back-pressure on. With --blast, rate-0
clients get messages formatted as they are written, paced by TCP alone: the fast producer
arena bench stream measures the client against.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if port < 0 || port > 65535 {
				return fmt.Errorf("--port %d: give 0 (any free port) to 65535", port)
			}
			if backpressure != "on" && backpressure != "off" {
				return fmt.Errorf("--backpressure %q: on or off", backpressure)
			}
			s, err := stream.StartServer(fmt.Sprintf("127.0.0.1:%d", port), stream.ServerOptions{Backpressure: backpressure == "on", Blast: blast})
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "ws://"+s.Addr()+"/stream")
			<-cmd.Context().Done()
			return s.Close()
		},
	}
	f := cmd.Flags()
	f.IntVar(&port, "port", 0, "port on 127.0.0.1 (0: any free port, printed on start)")
	f.StringVar(&backpressure, "backpressure", "on", "on or off, as the contract's BACKPRESSURE")
	f.BoolVar(&blast, "blast", false, "rate-0 clients: format while writing, no generator or queue")
	return cmd
}
