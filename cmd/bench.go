package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
)

// labDownstream names the lab's own Go server as a bench target.
const labDownstream = "lab-downstream"

// benchOptions are arena bench's flags: the server, the throughput rounds and the stall check.
type benchOptions struct {
	lf       labFlags
	against  string
	path     string
	conns    int
	duration time.Duration
	warmup   time.Duration
	rounds   int
	rate     int
	stallFor time.Duration
	stallCon int
}

func newBenchCmd() *cobra.Command {
	o := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the lab's client: throughput beside wrk, and a stall's corrected latency",
		Long: `Two measurements of arena's own instrument, against one server pinned to --server-cpus
while the client (arena, then wrk) is pinned to --client-cpus:

  throughput  closed loop, the same connections, alternating rounds of arena's engine
              and wrk (-t1), each client's own CPU measured beside its requests/s, and
              the requests/s each drives per core of its own it spends;
  stall       an open loop at --rate during which the server is frozen with SIGSTOP
              for --stall: the p99 from intended send times against the value the
              arithmetic predicts (stall − 1 % of the run), and the service-time p99
              a closed-loop tool would have reported.

--against is a contender, or lab-downstream (arena's own Go server) to find the
client's ceiling rather than the server's.`,
		Example: "  arena bench --against spring-webflux\n  arena bench --against lab-downstream --connections 64",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd)
		},
	}
	cmd.AddCommand(newBenchChatCmd(), newBenchStreamCmd(), newBenchFloorCmd(), newBenchAgentsCmd(), newBenchOpenCmd(), newBenchScalingCmd())
	o.register(cmd)
	return cmd
}

// register adds the lab's flags and the bench's own to cmd.
func (o *benchOptions) register(cmd *cobra.Command) {
	o.lf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&o.against, "against", "spring-webflux", "the server: a contender, or lab-downstream")
	f.StringVar(&o.path, "path", "/instant", "the request path (lab-downstream: /resources/data1.json)")
	f.IntVar(&o.conns, "connections", 64, "closed-loop connections, for both clients")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "length of each throughput round (the stall run is twice this)")
	f.IntVar(&o.rounds, "rounds", 3, "throughput rounds per client, alternating")
	f.DurationVar(&o.warmup, "warmup", 40*time.Second, "load before the rounds, half by each client, not counted")
	f.IntVar(&o.rate, "rate", 1000, "stall check: requests per second")
	f.DurationVar(&o.stallFor, "stall", time.Second, "stall check: how long the server is frozen")
	f.IntVar(&o.stallCon, "stall-connections", 16, "stall check: connections (the backlog waits for them)")
}

// validate checks the flags' ranges and the path, and that wrk is there to compare with.
func (o *benchOptions) validate() error {
	if o.conns < 1 || o.conns > 10000 || o.rounds < 1 || o.rounds > 20 || o.rate < 1 || o.duration < time.Second || o.warmup < 0 {
		return fmt.Errorf("--connections 1..10000, --rounds 1..20, --rate ≥ 1 and --duration ≥ 1s")
	}
	if err := checkPath(o.path); err != nil {
		return err
	}
	_, err := bench.WrkPath()
	return err
}

// run starts the server pinned, measures the throughput beside wrk and then the stall, and
// prints each as it is measured.
func (o *benchOptions) run(cmd *cobra.Command) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	l, target, err := startPinned(cmd, &o.lf, o.against)
	if err != nil {
		return err
	}
	defer target.stop()
	ctx := cmd.Context()
	stopProfile, err := startCPUProfile(os.Getenv("ARENA_CPUPROFILE")) // for work on the engine itself
	if err != nil {
		return err
	}
	defer stopProfile()
	fmt.Fprintf(stderr, "bench: %s on CPU %s, client on CPU %s\n", o.against, lab.FormatCPUs(l.ServerCPUs), lab.FormatCPUs(l.ClientCPUs))
	tp, err := bench.CompareWithWrk(ctx, target.addr, o.path, target.pid, o.conns, o.duration, o.warmup, o.rounds, lab.FormatCPUs(l.ClientCPUs))
	if err != nil {
		return err
	}
	printThroughput(stdout, o.against, o.path, o.conns, o.duration, tp)

	st, err := bench.StallCheck(ctx, target.addr, o.path, o.rate, o.stallCon, o.duration*2, o.stallFor,
		func() error { return syscall.Kill(-target.pid, syscall.SIGSTOP) },
		func() error { return syscall.Kill(-target.pid, syscall.SIGCONT) })
	if err != nil {
		return err
	}
	printStall(stdout, st)
	return nil
}

// startCPUProfile profiles this process into the file prof until the returned stop is
// called; with prof "" it does nothing.
func startCPUProfile(prof string) (stop func(), err error) {
	if prof == "" {
		return func() {}, nil
	}
	f, err := os.Create(prof)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// checkPath keeps --path a path on the target, which the clients append to its address
// (http://127.0.0.1:port + path): it starts with /, and holds no @ (what came before it would
// be a user, what after it a host elsewhere), no whitespace and no control character (which
// would split the request line).
func checkPath(path string) error {
	bad := ""
	switch {
	case !strings.HasPrefix(path, "/"):
		bad = "it must start with /"
	case strings.Contains(path, "@"):
		bad = "it must hold no @"
	case strings.IndexFunc(path, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		bad = "it must hold no whitespace or control character"
	}
	if bad != "" {
		return fmt.Errorf("--path %q: %s (a path on the target, e.g. /instant)", path, bad)
	}
	return nil
}

// printThroughput prints the rounds of arena beside wrk as a Markdown table, then the
// clients' means and their ratio.
func printThroughput(out io.Writer, against, path string, conns int, duration time.Duration, tp bench.Throughput) {
	fmt.Fprintf(out, "\n### Throughput: %s %s, %d connections, %s rounds\n\n", against, path, conns, duration)
	fmt.Fprintln(out, "| round | client | requests/s | client CPU % | server CPU % | client p99 ms |")
	fmt.Fprintln(out, "| --- | --- | ---: | ---: | ---: | ---: |")
	for i, r := range tp.Rounds {
		fmt.Fprintf(out, "| %d | %s | %.0f | %.0f | %.0f | %.2f |\n", i/2+1, r.Client, r.RPS, r.ClientCPU, r.ServerCPU, r.P99ms)
	}
	a, acpu := tp.Mean("arena")
	w, wcpu := tp.Mean("wrk")
	fmt.Fprintf(out, "\narena %.0f req/s at %.0f%% CPU, wrk %.0f req/s at %.0f%% CPU: arena/wrk = %.2f×\n", a, acpu, w, wcpu, a/w)
	// Per client core: where the server is the limit both clients drive it alike, and what
	// tells them apart is what each spent of its core to do so.
	if acpu > 0 && wcpu > 0 {
		fmt.Fprintf(out, "per client core: arena %.0f req/s, wrk %.0f req/s: arena/wrk = %.2f×\n", a/(acpu/100), w/(wcpu/100), (a/acpu)/(w/wcpu))
	}
}

// printStall prints the stall check as a Markdown table, then the measured p99 beside the
// arithmetic's.
func printStall(out io.Writer, st bench.Stall) {
	fmt.Fprintf(out, "\n### Stall: %d req/s for %.0f s, %d connections, server frozen %.1f s at a third\n\n", st.Rate, st.Seconds, st.Connections, st.StallS)
	fmt.Fprintln(out, "| figure | p50 ms | p99 ms | p99.9 ms | max ms |")
	fmt.Fprintln(out, "| --- | ---: | ---: | ---: | ---: |")
	fmt.Fprintf(out, "| response time (from intended send) | %.2f | %.1f | %.1f | %.1f |\n", st.Response.P50, st.Response.P99, st.Response.P999, st.Response.Max)
	fmt.Fprintf(out, "| service time (what a closed-loop tool sees) | %.2f | %.1f | %.1f | %.1f |\n", st.Service.P50, st.Service.P99, st.Service.P999, st.Service.Max)
	fmt.Fprintf(out, "\npredicted response p99 = stall − 1%% of the run + baseline p99 = %.0f − %.0f + %.1f = %.0f ms; measured %.0f ms (%.2f×)\n",
		st.StallS*1000, 0.01*st.Seconds*1000, st.BaselineMs, st.PredictedMs, st.Response.P99, st.Response.P99/st.PredictedMs)
}

// reportMeasured ends a bench subcommand: what it measured (all of it, or the rounds that
// finished before Ctrl-C) as JSON or as tables, then the interruption if there was one.
func reportMeasured(ctx context.Context, name string, err error, stdout, stderr io.Writer, asJSON bool, res any, printTables func()) error {
	if err != nil && ctx.Err() == nil {
		return err
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "bench %s: interrupted: the rounds that finished follow\n", name)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			return err
		}
	} else {
		printTables()
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}

// startPinned opens the lab (with the contender's manifest unless against is the lab's
// downstream, which needs no build and no JDK), starts the target on the server's CPUs and
// pins this process, the client, to the client's.
func startPinned(cmd *cobra.Command, lf *labFlags, against string) (*lab.Lab, *benchTarget, error) {
	stderr := cmd.ErrOrStderr()
	var l *lab.Lab
	var ms []*contender.Manifest
	var err error
	if against == labDownstream {
		l, err = lf.open(stderr)
	} else {
		l, ms, err = lf.openWith(stderr, []string{against})
	}
	if err != nil {
		return nil, nil, err
	}
	target, err := startTarget(cmd, l, ms, against)
	if err != nil {
		return nil, nil, err
	}
	if err := lab.PinSelf(l.ClientCPUs); err != nil {
		target.stop()
		return nil, nil, err
	}
	return l, target, nil
}

// benchTarget is a started server.
type benchTarget struct {
	addr string
	pid  int
	stop func()
}

// startTarget starts the bench's server on the lab's server CPUs: the lab's downstream, or
// the contender name, built when its sources changed, once it is ready.
func startTarget(cmd *cobra.Command, l *lab.Lab, ms []*contender.Manifest, name string) (*benchTarget, error) {
	if name == labDownstream {
		ds, _, err := startLabDownstream(l.Root, l.ServerCPUs)
		if err != nil {
			return nil, err
		}
		return &benchTarget{addr: ds.Addr, pid: ds.Pid(), stop: ds.Stop}, nil
	}
	logDir, err := benchLogs(l.Root)
	if err != nil {
		return nil, err
	}
	in, err := l.StartReady(cmd.Context(), ms[0], contender.ReadinessPath, filepath.Join(logDir, name+".log"), nil)
	if err != nil {
		return nil, err
	}
	return &benchTarget{addr: in.Addr(), pid: in.Pid(), stop: func() { in.Stop() }}, nil
}

// benchLogs is the folder the bench family's servers write their output to, made if need be.
func benchLogs(root string) (string, error) {
	dir := filepath.Join(root, ".arena", "bench-logs")
	return dir, os.MkdirAll(dir, 0o755)
}

// startLabDownstream starts the lab's downstream pinned to cpus, its output in the bench's
// log folder, which it returns too.
func startLabDownstream(root string, cpus []int) (*lab.SelfProc, string, error) {
	logDir, err := benchLogs(root)
	if err != nil {
		return nil, "", err
	}
	ds, err := lab.StartDownstream(cpus, 0, filepath.Join(logDir, labDownstream+".log"))
	return ds, logDir, err
}
