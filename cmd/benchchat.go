package cmd

import (
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/lab"
)

func newBenchChatCmd() *cobra.Command {
	var (
		lf       labFlags
		users    int
		roomSize int
		rooms    int
		perRoom  int
		messages int
		period   time.Duration
	)
	cmd := &cobra.Command{
		Use:   "chat",
		Short: "Measure the chat client: users held in memory, and its cost per delivered message",
		Long: `Against the lab's reference chat server (arena chat-server, pinned to --server-cpus), with
the client pinned to --client-cpus:

  hold  connect and join --users idle chat users (rooms of --room-size), each with its
        reader waiting, and measure the client's resident memory: users per GiB;
  cost  run a chat load (--rooms × --per-room users, --messages each every --period) and
        divide the client's CPU time by the deliveries it parsed, checked and recorded.`,
		Example: "  arena bench chat --users 10000",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if users < 1 || users > 18000 || roomSize < 1 || rooms < 1 || perRoom < 1 || messages < 1 || period <= 0 {
				return fmt.Errorf("--users 1..18000 (the process may hold 20,000 descriptors), and positive --room-size, --rooms, --per-room, --messages, --period")
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
			srv, err := lab.StartSelf(l.ServerCPUs, filepath.Join(logDir, "chat-server.log"), "chat-server")
			if err != nil {
				return err
			}
			defer srv.Stop()
			if err := lab.PinSelf(l.ClientCPUs); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "bench chat: reference server on CPU %s, client on CPU %s\n", lab.FormatCPUs(l.ServerCPUs), lab.FormatCPUs(l.ClientCPUs))
			hold, err := bench.HoldChatUsers(cmd.Context(), srv.Addr, users, roomSize)
			if err != nil {
				return err
			}
			printHold(stdout, users, roomSize, hold)

			cost, err := bench.ChatCostRun(cmd.Context(), srv.Addr, rooms, perRoom, messages, period)
			if err != nil {
				return err
			}
			printChatCost(stdout, rooms, perRoom, messages, period, cost)
			return nil
		},
	}
	lf.register(cmd)
	f := cmd.Flags()
	f.IntVar(&users, "users", 10000, "idle users to hold")
	f.IntVar(&roomSize, "room-size", 10, "users per room while holding")
	f.IntVar(&rooms, "rooms", 20, "cost run: rooms")
	f.IntVar(&perRoom, "per-room", 20, "cost run: users per room")
	f.IntVar(&messages, "messages", 200, "cost run: messages per user")
	f.DurationVar(&period, "period", 10*time.Millisecond, "cost run: time between one user's messages")
	return cmd
}

// printHold prints what holding idle users cost as a Markdown table.
func printHold(out io.Writer, users, roomSize int, hold bench.ChatHold) {
	fmt.Fprintf(out, "\n### Hold: %d idle chat users (rooms of %d)\n\n", users, roomSize)
	fmt.Fprintln(out, "| users connected | joined in s | client RSS before MB | client RSS with users MB | per user KB | users per GiB | goroutines |")
	fmt.Fprintln(out, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	fmt.Fprintf(out, "| %d | %.1f | %.0f | %.0f | %.1f | %.0f | %d |\n", hold.Connected, hold.JoinSeconds, hold.BaseRSSMB, hold.RSSMB, hold.PerUserKB, hold.UsersPerGiB, hold.Goroutines)
}

// printChatCost prints the client's cost per delivery as a Markdown table, its faults
// counted by kind (or none).
func printChatCost(out io.Writer, rooms, perRoom, messages int, period time.Duration, cost bench.ChatCost) {
	var faults []string
	for k, v := range cost.Faults {
		faults = append(faults, fmt.Sprintf("%d %s", v, k))
	}
	sort.Strings(faults)
	if len(faults) == 0 {
		faults = []string{"none"}
	}
	fmt.Fprintf(out, "\n### Cost: %d rooms × %d users, %d messages each every %s\n\n", rooms, perRoom, messages, period)
	fmt.Fprintln(out, "| deliveries | seconds | deliveries/s | client CPU s | µs per delivery | delivery p50 ms | p99 ms | faults |")
	fmt.Fprintln(out, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	fmt.Fprintf(out, "| %d | %.1f | %.0f | %.2f | %.2f | %.2f | %.1f | %s |\n", cost.Deliveries, cost.Seconds, cost.DeliveriesPerSecond,
		cost.ClientCPUSeconds, cost.MicrosPerDelivery, cost.Latency.P50, cost.Latency.P99, strings.Join(faults, ", "))
}
