package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/lab"
)

// defaultAgentCPUs lays out three agents on a 2-core machine whose CPU 1 is the server's:
// two share CPU 0, the third sits beside the server (the output warns of both).
var defaultAgentCPUs = []int{0, 0, 1}

// benchAgentsOptions are arena bench agents' flags.
type benchAgentsOptions struct {
	counts     []int
	agentCPUs  []int
	serverCPUs string
	path       string
	conns      int
	duration   time.Duration
	warmup     time.Duration
	rounds     int
	inProcess  bool
	asJSON     bool
}

func newBenchAgentsCmd() *cobra.Command {
	o := &benchAgentsOptions{}
	cmd := &cobra.Command{
		Use:   "agents",
		Short: "Measure the load agents: requests/s that 1, 2, 3 agents drive, and what merging their shares costs",
		Long: `Starts the lab's downstream (arena downstream, pinned to --server-cpus) and as many load
agents as the largest of --agents (arena agent, this binary, each pinned with taskset to its
entry of --agent-cpus), then for each count N of --agents deals one closed loop of
--connections (in all) out among the first N agents from one agreed start, as arena run
--agent-addrs does, and measures:

  requests/s  the merged count over the longest share's time, each agent's own CPU and
              the server's, the merged p50/p99 and the errors;
  merge       agent.Merge's wall time on the shares, and the shares' JSON size.

One agent inside this process (no HTTP, no JSON) runs beside the 1-agent figure, so that
the protocol's own cost shows (--in-process=false leaves it out). The coordinator, and with
it the in-process agent, is pinned to the first agent's CPUs. Each count is warmed for
--warmup before its first round; the counts then take turns round by round. Agents sharing
a core with each other or with the server are reported: their figures then split a core.`,
		Example: "  arena bench agents\n  arena bench agents --agents 1,2 --agent-cpus 0,0 --server-cpus 1 --duration 5s --rounds 1",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sets, server, err := o.resolve(cmd.Flags().Changed("agent-cpus"))
			if err != nil {
				return err
			}
			return o.run(cmd, sets, server)
		},
	}
	o.register(cmd)
	return cmd
}

func (o *benchAgentsOptions) register(cmd *cobra.Command) {
	f := cmd.Flags()
	f.IntSliceVar(&o.counts, "agents", []int{1, 2, 3}, "agent counts to measure, in increasing order")
	f.IntSliceVar(&o.agentCPUs, "agent-cpus", defaultAgentCPUs, "agent i's CPU, one entry per agent up to the largest count")
	f.StringVar(&o.serverCPUs, "server-cpus", "1", "CPUs the downstream is pinned to (taskset list)")
	f.StringVar(&o.path, "path", "/resources/data1.json", "the request path on the downstream")
	f.IntVar(&o.conns, "connections", 64, "closed-loop connections in all, dealt out among the agents")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "length of each round")
	f.DurationVar(&o.warmup, "warmup", 3*time.Second, "load before each count's first round, not counted")
	f.IntVar(&o.rounds, "rounds", 3, "rounds per count, the counts taking turns")
	f.BoolVar(&o.inProcess, "in-process", true, "also measure one agent inside this process (no HTTP), beside the 1-agent figure")
	f.BoolVar(&o.asJSON, "json", false, "print the measurement as JSON instead of tables")
}

// resolve checks the flags and returns each agent's CPUs (defaultAgentCPUs unless
// --agent-cpus was given) and the server's.
func (o *benchAgentsOptions) resolve(cpusGiven bool) (sets [][]int, server []int, err error) {
	if err := bench.CheckAgentCounts(o.counts); err != nil {
		return nil, nil, err
	}
	most := o.counts[len(o.counts)-1]
	if o.conns < most || o.conns > 10000 || o.rounds < 1 || o.rounds > 20 || o.duration < time.Second || o.warmup < 0 {
		return nil, nil, fmt.Errorf("--connections %d..10000 (one at least per agent), --rounds 1..20, --duration ≥ 1s and --warmup ≥ 0", most)
	}
	if err := checkPath(o.path); err != nil {
		return nil, nil, err
	}
	cpus := o.agentCPUs
	if !cpusGiven {
		if most > len(defaultAgentCPUs) {
			return nil, nil, fmt.Errorf("--agents up to %d: give --agent-cpus, one CPU per agent", most)
		}
		cpus = defaultAgentCPUs[:most]
	}
	if sets, err = bench.AgentCPUSets(cpus, most); err != nil {
		return nil, nil, err
	}
	if server, err = lab.ParseCPUs(o.serverCPUs); err != nil {
		return nil, nil, fmt.Errorf("--server-cpus: %w", err)
	}
	return sets, server, nil
}

// run starts the downstream on server and the agents on sets, measures every count and
// reports what it measured.
func (o *benchAgentsOptions) run(cmd *cobra.Command, sets [][]int, server []int) error {
	root, err := lab.FindRoot()
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	ds, logDir, err := startLabDownstream(root, server)
	if err != nil {
		return err
	}
	defer ds.Stop()
	if err := lab.PinSelf(sets[0]); err != nil {
		return err
	}
	layout, warnings := bench.AgentLayout(server, sets)
	fmt.Fprintf(stderr, "bench agents: %s\n", layout)
	for _, w := range warnings {
		fmt.Fprintf(stderr, "bench agents: warning: %s\n", w)
	}
	ctx := cmd.Context()
	res, err := bench.MeasureAgents(ctx, bench.AgentsPlan{Exe: exe, Counts: o.counts, AgentCPUs: sets, InProcess: o.inProcess,
		Target: ds.Addr, ServerPid: ds.Pid(), ServerCPUs: server, Path: o.path, Connections: o.conns,
		Duration: o.duration, Warmup: o.warmup, Rounds: o.rounds, LogDir: logDir, Progress: stderr})
	return reportMeasured(ctx, "agents", err, stdout, stderr, o.asJSON, res, func() { printAgents(stdout, res, layout, warnings) })
}

// printAgents prints the rounds and then each count's means as Markdown tables, under the
// layout and its warnings, so that a pasted table keeps where its figures came from.
func printAgents(out io.Writer, a bench.Agents, layout string, warnings []string) {
	fmt.Fprintf(out, "\n### Agents: lab-downstream %s, %d connections in all, %.0f s rounds\n\n", a.Path, a.Connections, a.Seconds)
	fmt.Fprintf(out, "Layout: %s.\n", layout)
	for _, w := range warnings {
		fmt.Fprintf(out, "Warning: %s.\n", w)
	}
	fmt.Fprintln(out, "\n| agents | via | round | requests/s | agent CPU % | server CPU % | p50 ms | p99 ms | errors | merge ms | shares KB |")
	fmt.Fprintln(out, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, lv := range a.Levels {
		for i, r := range lv.Rounds {
			cpus := make([]string, len(r.AgentCPU))
			for j, c := range r.AgentCPU {
				cpus[j] = fmt.Sprintf("%.0f", c)
			}
			fmt.Fprintf(out, "| %d | %s | %d | %.0f | %s | %.0f | %.2f | %.2f | %d | %.3f | %.1f |\n", lv.Agents, lv.Via, i+1, r.RPS,
				strings.Join(cpus, " / "), r.ServerCPU, r.P50, r.P99, r.Errors, r.MergeMs, float64(r.ShareBytes)/1024)
		}
	}
	one := a.Of(1, "http")
	var base float64
	if one != nil {
		base, _, _ = one.Mean()
	}
	fmt.Fprintln(out, "\n| agents | via | requests/s (mean) | × 1 agent over HTTP | merge ms (mean) | shares KB (mean) |")
	fmt.Fprintln(out, "| ---: | --- | ---: | ---: | ---: | ---: |")
	for _, lv := range a.Levels {
		if len(lv.Rounds) == 0 {
			continue
		}
		rps, merge, bytes := lv.Mean()
		ratio := "–"
		if base > 0 {
			ratio = fmt.Sprintf("%.2f×", rps/base)
		}
		fmt.Fprintf(out, "| %d | %s | %.0f | %s | %.3f | %.1f |\n", lv.Agents, lv.Via, rps, ratio, merge, bytes/1024)
	}
}
