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

// maxOpenRate bounds arena bench open's --rate: far beyond what one host serves itself.
const maxOpenRate = 2_000_000

func newBenchOpenCmd() *cobra.Command {
	var (
		lf       labFlags
		against  string
		path     string
		rate     int
		duration time.Duration
		warmup   time.Duration
		rounds   int
		conns    int
		asJSON   bool
	)
	cmd := &cobra.Command{
		Use:   "open",
		Short: "Measure the engine's open loop at a constant rate, beside a closed loop at the same throughput",
		Long: `An open loop at a constant --rate from the client's core(s) (--client-cpus, one event loop
each) against one server pinned to --server-cpus: lab-downstream (arena's own Go server, on
/resources/data1.json) or --against a contender (on /instant), over --connections
connections as wrk2's -c: a hit that finds them all busy waits for the next free one in
schedule order, its wait counted in its response time (0: a connection for every hit in
flight, dialled when none is idle); then, beside it, a closed loop at the same throughput:

  open    after --warmup at the rate (not counted), --rounds rounds of --duration:
          requests/s achieved (completed / duration), sends against the schedule, the
          share of sends more than 1 ms past their intended time (late %), the share the
          engine itself took up that late (engine late %: the rest waited for a free
          connection, the server's backlog), the latest send, response time (from intended send times) and service time (from actual
          sends), errors, and the client's and the server's CPU (% of one core);
  closed  its connections chosen by probes of 2 s (or --duration when shorter) of 1, 2,
          4 … 64 connections: the fewest whose throughput reaches the open loop's mean
          achieved rate (within 2 %), or else the one that came nearest (the output says
          which); then the same rounds, with the same columns. A closed loop has no
          schedule: its latency is service time only, and no send is late;
  hiccups a thread on the client's core doing nothing but read the clock for --duration,
          while wrk pinned to the server's CPUs drives the server (idle without wrk):
          its gaps over 100 µs, 1 ms and 5 ms are what the machine itself takes from the
          core, a floor under any client's lateness there.

Whether the engine keeps an open loop's schedule at that rate from its cores, and what a
closed-loop tool would have reported at the same throughput.`,
		Example: "  arena bench open\n  arena bench open --rate 50000 --duration 5s --rounds 1\n  arena bench open --against go-nethttp --rate 30000",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if rate < 1 || rate > maxOpenRate || rounds < 1 || rounds > 20 || duration < time.Second || warmup < 0 || conns < 0 || conns > 10000 {
				return fmt.Errorf("--rate 1..%d, --rounds 1..20, --duration ≥ 1s, --warmup ≥ 0 and --connections 0..10000", maxOpenRate)
			}
			if path == "" {
				path = "/instant"
				if against == labDownstream {
					path = "/resources/data1.json"
				}
			}
			if err := checkPath(path); err != nil {
				return err
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			l, target, err := startPinned(cmd, &lf, against)
			if err != nil {
				return err
			}
			defer target.stop()
			layout := fmt.Sprintf("%s on CPU %s, client on CPU %s", against, lab.FormatCPUs(l.ServerCPUs), lab.FormatCPUs(l.ClientCPUs))
			fmt.Fprintf(stderr, "bench open: %s\n", layout)
			ctx := cmd.Context()
			res, err := bench.MeasureOpen(ctx, bench.OpenPlan{Target: target.addr, ServerPid: target.pid, Path: path, Rate: rate,
				Connections: conns, Duration: duration, Warmup: warmup, Rounds: rounds, Progress: stderr, HiccupCPUs: lab.FormatCPUs(l.ServerCPUs)})
			return reportMeasured(ctx, "open", err, stdout, stderr, asJSON, res, func() { printOpen(stdout, against, layout, res) })
		},
	}
	lf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&against, "against", labDownstream, "the server: lab-downstream, or a contender")
	f.StringVar(&path, "path", "", "the request path (default /resources/data1.json on lab-downstream, /instant on a contender)")
	f.IntVar(&rate, "rate", 100000, "the open loop's requests per second")
	f.DurationVar(&duration, "duration", 10*time.Second, "length of each round, open and closed")
	f.DurationVar(&warmup, "warmup", 5*time.Second, "open loop at --rate before its rounds, not counted")
	f.IntVar(&rounds, "rounds", 3, "rounds of each loop")
	f.IntVar(&conns, "connections", 64, "the open loop's connections (0: one for every hit in flight)")
	f.BoolVar(&asJSON, "json", false, "print the measurement as JSON instead of tables")
	return cmd
}

// loadHeader is the columns both loops' tables share.
const loadHeader = "| round | requests/s | sent / scheduled | late % | engine late % | max late ms | response p50 ms | p99 ms | p99.9 ms | max ms | service p50 ms | p99 ms | errors | client CPU % | server CPU % |\n" +
	"| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n"

// printLoadRounds prints rounds under loadHeader; a closed loop's have no schedule, hence
// no scheduled count and no lateness.
func printLoadRounds(out io.Writer, rounds []bench.LoadRound, open bool) {
	fmt.Fprint(out, loadHeader)
	for i, r := range rounds {
		scheduled, late, own, maxLate := "–", "–", "–", "–"
		if open {
			scheduled = fmt.Sprint(r.Scheduled)
			late, maxLate = fmt.Sprintf("%.2f", r.LatePct()), fmt.Sprintf("%.2f", r.MaxLateMs)
			own = fmt.Sprintf("%.3f", r.ClientLatePct())
		}
		fmt.Fprintf(out, "| %d | %.0f | %d / %s | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %d | %.0f | %.0f |\n",
			i+1, r.RPS, r.Sent, scheduled, late, own, maxLate, r.Response.P50, r.Response.P99, r.Response.P999, r.Response.Max,
			r.Service.P50, r.Service.P99, r.Errors, r.ClientCPU, r.ServerCPU)
	}
}

// printOpen prints the open loop's rounds, the closed loop's probes and rounds as Markdown
// tables, then the line that sums them up.
func printOpen(out io.Writer, against, layout string, o bench.OpenClosed) {
	fmt.Fprintf(out, "\n### Open loop: %s %s, %d req/s, %.0f s rounds\n\n", against, o.Path, o.Rate, o.Seconds)
	conns := "connections as the schedule needs"
	if o.OpenConnections > 0 {
		conns = fmt.Sprintf("%d connections (a hit waits for a free one, its wait counted)", o.OpenConnections)
	}
	fmt.Fprintf(out, "Layout: %s (%d event %s); %s; late: sent more than %g ms past the intended time.\n\n",
		layout, o.ClientLoops, bench.Plural(o.ClientLoops, "loop", "loops"), conns, o.LateAfterMs)
	printLoadRounds(out, o.Open, true)
	if len(o.Probes) > 0 {
		fmt.Fprintf(out, "\n### Closed loop's connections: probes of %g s, against the open loop's %.0f req/s\n\n", o.ProbeSeconds, o.Matched)
		fmt.Fprintln(out, "| connections | requests/s | × open loop |")
		fmt.Fprintln(out, "| ---: | ---: | ---: |")
		for _, p := range o.Probes {
			fmt.Fprintf(out, "| %d | %.0f | %.2f× |\n", p.Connections, p.RPS, p.RPS/o.Matched)
		}
		fmt.Fprintf(out, "\n%s\n", chosenWhy(o))
	}
	if len(o.Closed) > 0 {
		fmt.Fprintf(out, "\n### Closed loop: %s %s, %d connections, %.0f s rounds (latency is service time only)\n\n", against, o.Path, o.Connections, o.Seconds)
		printLoadRounds(out, o.Closed, false)
	}
	if h := o.Hiccups; h != nil {
		how := "while wrk, pinned to the server's CPUs, drove the server"
		if !h.Loaded {
			how = "with the machine otherwise idle (no wrk to drive the server)"
		}
		fmt.Fprintf(out, "\n### The client core by itself\n\nA thread doing nothing but read the clock on CPU %d for %.0f s, %s: %d gaps over 100 µs, %d over 1 ms, %d over 5 ms, the worst %.2f ms, %.1f ms lost in gaps over 1 ms. Whatever runs on that core is late that often.\n",
			h.CPU, h.Seconds, how, h.Over100, h.Over1ms, h.Over5ms, h.MaxMs, h.LostMs)
	}
	if len(o.Open) > 0 {
		pct, own, maxMs := o.LateShare()
		line := fmt.Sprintf("open loop at %d req/s: %.2f %% of sends late (> %g ms), %.3f %% taken up late by the engine itself; max lateness %.2f ms",
			o.Rate, pct, o.LateAfterMs, own, maxMs)
		if len(o.Closed) > 0 {
			line += fmt.Sprintf("; closed loop at %d connections: %.0f req/s", o.Connections, bench.MeanRPS(o.Closed))
		}
		fmt.Fprintf(out, "\n%s\n", line)
	}
}

// chosenWhy says which connection count the closed loop runs at, and why.
func chosenWhy(o bench.OpenClosed) string {
	counts := make([]string, len(o.Probes))
	var chosen float64
	for i, p := range o.Probes {
		counts[i] = fmt.Sprint(p.Connections)
		if p.Connections == o.Connections {
			chosen = p.RPS
		}
	}
	if o.Reached {
		return fmt.Sprintf("Closed loop at %d connections: the fewest whose probe reached the open loop's %.0f req/s (within %.0f %%): %.0f req/s.",
			o.Connections, o.Matched, 100*bench.MatchWithin, chosen)
	}
	return fmt.Sprintf("Closed loop at %d connections: none of %s connections reached the open loop's %.0f req/s; %d came nearest, at %.0f req/s.",
		o.Connections, strings.Join(counts, ", "), o.Matched, o.Connections, chosen)
}
