package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
)

// labDownstream names the lab's own Go server as a bench target.
const labDownstream = "lab-downstream"

func newBenchCmd() *cobra.Command {
	var (
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
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the lab's client: throughput beside wrk, and a stall's corrected latency",
		Long: `Two measurements of arena's own instrument, against one server pinned to --server-cpus
while the client (arena, then wrk) is pinned to --client-cpus:

  throughput  closed loop, the same connections, alternating rounds of arena's engine
              and wrk (-t1), each client's own CPU measured beside its requests/s;
  stall       an open loop at --rate during which the server is frozen with SIGSTOP
              for --stall: the p99 from intended send times against the value the
              arithmetic predicts (stall − 1 % of the run), and the service-time p99
              a closed-loop tool would have reported.

--against is a contender, or lab-downstream (arena's own Go server) to find the
client's ceiling rather than the server's.`,
		Example: "  arena bench --against spring-webflux\n  arena bench --against lab-downstream --connections 64",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if conns < 1 || conns > 10000 || rounds < 1 || rounds > 20 || rate < 1 || duration < time.Second || warmup < 0 {
				return fmt.Errorf("--connections 1..10000, --rounds 1..20, --rate ≥ 1 and --duration ≥ 1s")
			}
			if _, err := bench.WrkPath(); err != nil {
				return err
			}
			var l *lab.Lab
			var ms []*contender.Manifest
			var err error
			if against == labDownstream { // no contender, so no build and no JDK
				l, err = lf.open()
			} else {
				l, ms, err = lf.openWith([]string{against})
			}
			if err != nil {
				return err
			}
			target, err := startTarget(cmd, l, ms, against)
			if err != nil {
				return err
			}
			defer target.stop()
			if err := lab.PinSelf(l.ClientCPUs); err != nil {
				return err
			}
			ctx := cmd.Context()
			if prof := os.Getenv("ARENA_CPUPROFILE"); prof != "" { // for work on the engine itself
				f, err := os.Create(prof)
				if err != nil {
					return err
				}
				defer f.Close()
				if err := pprof.StartCPUProfile(f); err != nil {
					return err
				}
				defer pprof.StopCPUProfile()
			}
			fmt.Fprintf(os.Stderr, "bench: %s on CPU %s, client on CPU %s\n", against, lab.FormatCPUs(l.ServerCPUs), lab.FormatCPUs(l.ClientCPUs))
			tp, err := bench.CompareWithWrk(ctx, target.addr, path, target.pid, conns, duration, warmup, rounds, lab.FormatCPUs(l.ClientCPUs))
			if err != nil {
				return err
			}
			fmt.Printf("\n### Throughput: %s %s, %d connections, %s rounds\n\n", against, path, conns, duration)
			fmt.Println("| round | client | requests/s | client CPU % | server CPU % | client p99 ms |")
			fmt.Println("| --- | --- | ---: | ---: | ---: | ---: |")
			for i, r := range tp.Rounds {
				fmt.Printf("| %d | %s | %.0f | %.0f | %.0f | %.2f |\n", i/2+1, r.Client, r.RPS, r.ClientCPU, r.ServerCPU, r.P99ms)
			}
			a, acpu := tp.Mean("arena")
			w, wcpu := tp.Mean("wrk")
			fmt.Printf("\narena %.0f req/s at %.0f%% CPU, wrk %.0f req/s at %.0f%% CPU: arena/wrk = %.2f×\n", a, acpu, w, wcpu, a/w)

			st, err := bench.StallCheck(ctx, target.addr, path, rate, stallCon, duration*2, stallFor,
				func() error { return syscall.Kill(-target.pid, syscall.SIGSTOP) },
				func() error { return syscall.Kill(-target.pid, syscall.SIGCONT) })
			if err != nil {
				return err
			}
			fmt.Printf("\n### Stall: %d req/s for %.0f s, %d connections, server frozen %.1f s at a third\n\n", st.Rate, st.Seconds, st.Connections, st.StallS)
			fmt.Println("| figure | p50 ms | p99 ms | p99.9 ms | max ms |")
			fmt.Println("| --- | ---: | ---: | ---: | ---: |")
			fmt.Printf("| response time (from intended send) | %.2f | %.1f | %.1f | %.1f |\n", st.Response.P50, st.Response.P99, st.Response.P999, st.Response.Max)
			fmt.Printf("| service time (what a closed-loop tool sees) | %.2f | %.1f | %.1f | %.1f |\n", st.Service.P50, st.Service.P99, st.Service.P999, st.Service.Max)
			fmt.Printf("\npredicted response p99 = stall − 1%% of the run + baseline p99 = %.0f − %.0f + %.1f = %.0f ms; measured %.0f ms (%.2f×)\n",
				st.StallS*1000, 0.01*st.Seconds*1000, st.BaselineMs, st.PredictedMs, st.Response.P99, st.Response.P99/st.PredictedMs)
			return nil
		},
	}
	lf.register(cmd)
	cmd.AddCommand(newBenchChatCmd(), newBenchStreamCmd())
	f := cmd.Flags()
	f.StringVar(&against, "against", "spring-webflux", "the server: a contender, or lab-downstream")
	f.StringVar(&path, "path", "/instant", "the request path (lab-downstream: /resources/data1.json)")
	f.IntVar(&conns, "connections", 64, "closed-loop connections, for both clients")
	f.DurationVar(&duration, "duration", 10*time.Second, "length of each throughput round (the stall run is twice this)")
	f.IntVar(&rounds, "rounds", 3, "throughput rounds per client, alternating")
	f.DurationVar(&warmup, "warmup", 40*time.Second, "load before the rounds, half by each client, not counted")
	f.IntVar(&rate, "rate", 1000, "stall check: requests per second")
	f.DurationVar(&stallFor, "stall", time.Second, "stall check: how long the server is frozen")
	f.IntVar(&stallCon, "stall-connections", 16, "stall check: connections (the backlog waits for them)")
	return cmd
}

// benchTarget is a started server.
type benchTarget struct {
	addr string
	pid  int
	stop func()
}

func startTarget(cmd *cobra.Command, l *lab.Lab, ms []*contender.Manifest, name string) (*benchTarget, error) {
	if name == labDownstream {
		logDir := filepath.Join(l.Root, ".arena", "bench-logs")
		_ = os.MkdirAll(logDir, 0o755)
		ds, err := lab.StartDownstream(l.ServerCPUs, 0, filepath.Join(logDir, labDownstream+".log"))
		if err != nil {
			return nil, err
		}
		return &benchTarget{addr: ds.Addr, pid: ds.Pid(), stop: ds.Stop}, nil
	}
	builder := &contender.Builder{CacheDir: filepath.Join(l.Root, ".arena", "builds"), Settings: l.Settings}
	if _, err := builder.Build(cmd.Context(), ms[0], false); err != nil {
		return nil, err
	}
	logDir := filepath.Join(l.Root, ".arena", "bench-logs")
	_ = os.MkdirAll(logDir, 0o755)
	in, err := contender.Start(ms[0], contender.StartOptions{Settings: l.Settings, CPUs: lab.FormatCPUs(l.ServerCPUs),
		LogPath: filepath.Join(logDir, name+".log")})
	if err != nil {
		return nil, err
	}
	if err := in.WaitReady(cmd.Context(), 2*time.Minute); err != nil {
		in.Stop()
		return nil, fmt.Errorf("%v\n%s", err, strings.Join(in.Tail(), "\n"))
	}
	return &benchTarget{addr: in.Addr(), pid: in.Pid(), stop: func() { in.Stop() }}, nil
}
