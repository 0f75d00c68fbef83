package cmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/lab"
)

// benchScalingOptions are arena bench scaling's flags.
type benchScalingOptions struct {
	loops      []int
	clientCPUs string
	serverCPUs string
	path       string
	conns      int
	duration   time.Duration
	warmup     time.Duration
	rounds     int
	withWrk    bool
	asJSON     bool
}

func newBenchScalingCmd() *cobra.Command {
	o := &benchScalingOptions{}
	cmd := &cobra.Command{
		Use:   "scaling",
		Short: "Measure how the engine's closed-loop throughput grows with its event loops (client cores)",
		Long: `The engine's closed-loop throughput as its client cores grow. For each count N of --loops,
this process is pinned to the first N CPUs of --client-cpus (all of them when there are
fewer) and the engine runs N event loops, loop i on the (i mod CPUs)-th of them, with
--connections in all dealt out among the loops, against lab-downstream (arena's own Go
server, pinned to --server-cpus). Per count:

  requests/s         the mean over --rounds, and each round's (completed / wall time);
  client CPU %       this process's CPU over the round, % of one core (above 100 with
                     several loops), and the server's;
  client µs/request  the client's CPU time divided by the requests it completed;
  ×                  requests/s as a multiple of the first count's (1 loop by default).

With --wrk, wrk -t N follows each count, pinned with taskset to the same CPUs with the same
connections (its µs/request from its mean CPU %), and each client is compared with its own
first count. Each count is warmed for --warmup before its first round; the counts then take
turns round by round. More loops than CPUs share cores (the figure is simulated), and a
client CPU that is also the server's splits that core: the output warns of both.`,
		Example: "  arena bench scaling\n  arena bench scaling --loops 1,2 --client-cpus 0,1 --server-cpus 1 --duration 5s --rounds 1 --wrk=false",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			client, server, err := o.resolve()
			if err != nil {
				return err
			}
			return o.run(cmd, client, server)
		},
	}
	o.register(cmd)
	return cmd
}

func (o *benchScalingOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntSliceVar(&o.loops, "loops", []int{1, 2, 3}, "event-loop counts to measure, in increasing order")
	f.StringVar(&o.clientCPUs, "client-cpus", "0,1", "CPUs the client may use: N loops run on the first N of them (taskset list)")
	f.StringVar(&o.serverCPUs, "server-cpus", "1", "CPUs the downstream is pinned to (taskset list)")
	f.StringVar(&o.path, "path", "/resources/data1.json", "the request path on the downstream")
	f.IntVar(&o.conns, "connections", 64, "closed-loop connections in all, dealt out among the loops")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "length of each round")
	f.DurationVar(&o.warmup, "warmup", 3*time.Second, "load before each client's first round at a count, not counted")
	f.IntVar(&o.rounds, "rounds", 3, "rounds per count, the counts taking turns")
	f.BoolVar(&o.withWrk, "wrk", true, "also run wrk -t N beside each count, on the same CPUs")
	f.BoolVar(&o.asJSON, "json", false, "print the measurement as JSON instead of tables")
}

// resolve checks the flags (and wrk, when it is to run) and returns the client's CPUs and
// the server's.
func (o *benchScalingOptions) resolve() (client, server []int, err error) {
	if err := bench.CheckLoopCounts(o.loops); err != nil {
		return nil, nil, err
	}
	most := o.loops[len(o.loops)-1]
	if o.conns < most || o.conns > 10000 || o.rounds < 1 || o.rounds > 20 || o.duration < time.Second || o.warmup < 0 {
		return nil, nil, fmt.Errorf("--connections %d..10000 (one at least per loop), --rounds 1..20, --duration ≥ 1s and --warmup ≥ 0", most)
	}
	if err := checkPath(o.path); err != nil {
		return nil, nil, err
	}
	if client, err = lab.ParseCPUs(o.clientCPUs); err != nil {
		return nil, nil, fmt.Errorf("--client-cpus: %w", err)
	}
	if server, err = lab.ParseCPUs(o.serverCPUs); err != nil {
		return nil, nil, fmt.Errorf("--server-cpus: %w", err)
	}
	if o.withWrk {
		if _, err := bench.WrkPath(); err != nil {
			return nil, nil, fmt.Errorf("%w, or leave it out with --wrk=false", err)
		}
	}
	return client, server, nil
}

// run starts the downstream on server, measures every loop count on client and reports
// what it measured.
func (o *benchScalingOptions) run(cmd *cobra.Command, client, server []int) error {
	root, err := lab.FindRoot()
	if err != nil {
		return err
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	ds, _, err := startLabDownstream(root, server)
	if err != nil {
		return err
	}
	defer ds.Stop()
	layout, warnings := bench.ScalingLayout(server, client, o.loops)
	fmt.Fprintf(stderr, "bench scaling: %s\n", layout)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "bench scaling: warning: %s\n", w)
	}
	ctx := cmd.Context()
	res, err := bench.MeasureScaling(ctx, bench.ScalingPlan{Target: ds.Addr, ServerPid: ds.Pid(), ServerCPUs: server, Path: o.path,
		Loops: o.loops, ClientCPUs: client, Connections: o.conns, Duration: o.duration, Warmup: o.warmup, Rounds: o.rounds,
		Wrk: o.withWrk, Progress: stderr})
	return reportMeasured(ctx, "scaling", err, stdout, stderr, o.asJSON, res, func() { printScaling(stdout, res) })
}

// printScaling prints the rounds and then each count's means as Markdown tables, under the
// layout and its warnings, so that a pasted table keeps where its figures came from.
func printScaling(out io.Writer, s bench.Scaling) {
	fmt.Fprintf(out, "\n### Scaling: lab-downstream %s, %d connections in all, %.0f s rounds\n\n", s.Path, s.Connections, s.Seconds)
	fmt.Fprintf(out, "Layout: %s.\n", s.Layout)
	for _, w := range s.Warnings {
		fmt.Fprintf(out, "Warning: %s.\n", w)
	}
	fmt.Fprintln(out, "\n| loops | client | CPUs | round | requests/s | client CPU % | server CPU % | client µs/request | p99 ms | errors |")
	fmt.Fprintln(out, "| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, lv := range s.Levels {
		for i, r := range lv.Rounds {
			fmt.Fprintf(out, "| %d | %s | %s | %d | %.0f | %.0f | %.0f | %.2f | %.2f | %d |\n",
				lv.Loops, lv.Client, lv.CPUs, i+1, r.RPS, r.ClientCPU, r.ServerCPU, r.CPUMicros, r.P99, r.Errors)
		}
	}
	first := 0
	for _, lv := range s.Levels {
		if len(lv.Rounds) > 0 {
			first = lv.Loops
			break
		}
	}
	if first == 0 {
		return
	}
	fmt.Fprintf(out, "\n| loops | client | requests/s (mean) | per round | client CPU %% | server CPU %% | client µs/request | × %d %s |\n",
		first, bench.Plural(first, "loop", "loops"))
	fmt.Fprintln(out, "| ---: | --- | ---: | --- | ---: | ---: | ---: | ---: |")
	for _, lv := range s.Levels {
		if len(lv.Rounds) == 0 {
			continue
		}
		rps, ccpu, scpu, us := lv.Mean()
		per := make([]string, len(lv.Rounds))
		for i, r := range lv.Rounds {
			per[i] = fmt.Sprintf("%.0f", r.RPS)
		}
		ratio := "–"
		if base := s.Of(first, lv.Client); base != nil && len(base.Rounds) > 0 {
			b, _, _, _ := base.Mean()
			ratio = fmt.Sprintf("%.2f×", rps/b)
		}
		fmt.Fprintf(out, "| %d | %s | %.0f | %s | %.0f | %.0f | %.2f | %s |\n", lv.Loops, lv.Client, rps, strings.Join(per, " / "), ccpu, scpu, us, ratio)
	}
	var pairs []string
	for _, lv := range s.Levels {
		if lv.Client != "arena" || len(lv.Rounds) == 0 {
			continue
		}
		if w := s.Of(lv.Loops, "wrk"); w != nil && len(w.Rounds) > 0 {
			a, _, _, _ := lv.Mean()
			b, _, _, _ := w.Mean()
			pairs = append(pairs, fmt.Sprintf("%d %s %.2f×", lv.Loops, bench.Plural(lv.Loops, "loop", "loops"), a/b))
		}
	}
	if len(pairs) > 0 {
		fmt.Fprintf(out, "\narena/wrk: %s\n", strings.Join(pairs, ", "))
	}
}
