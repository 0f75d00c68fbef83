package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
)

// baselinesDir holds each stack's minimal example, one folder with a manifest each.
const baselinesDir = "baselines"

func newBenchFloorCmd() *cobra.Command {
	var (
		lf       labFlags
		path     string
		conns    int
		duration time.Duration
		warmup   time.Duration
		rounds   int
	)
	cmd := &cobra.Command{
		Use:   "floor <contender> <baseline>",
		Short: "Measure a contender beside its stack's minimal example (baselines/): the floor it must not fall below",
		Long: `Builds and starts the contender and one of baselines/ (its stack's minimal example, written
as the stack's own docs show it: nothing but the path), both pinned to --server-cpus with the
same heap and settings, warms each with wrk, then alternates wrk rounds (one thread on
--client-cpus, the same connections) between them. A contender below its stack's minimal
example carries a cost its users would not ship; one above it is at the floor or better.`,
		Example: "  arena bench floor go-nethttp go-nethttp-hello\n  arena bench floor vertx vertx-hello --path /instant --connections 64 --rounds 3",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if conns < 1 || conns > 10000 || rounds < 1 || rounds > 20 || duration < time.Second || warmup < 0 {
				return fmt.Errorf("--connections 1..10000, --rounds 1..20, --duration ≥ 1s and --warmup ≥ 0")
			}
			if err := checkPath(path); err != nil {
				return err
			}
			if _, err := bench.WrkPath(); err != nil {
				return err
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			l, ms, err := lf.openWith(stderr, args[:1])
			if err != nil {
				return err
			}
			base, err := loadBaseline(l.Root, args[1])
			if err != nil {
				return err
			}
			if err := findJDKFor(l, []*contender.Manifest{ms[0], base}); err != nil {
				return err
			}
			var servers []bench.Server
			for _, s := range []struct {
				m    *contender.Manifest
				wait string
			}{{ms[0], contender.ReadinessPath}, {base, path}} {
				srv, stop, err := startFloorServer(cmd, l, s.m, s.wait)
				if err != nil {
					return err
				}
				defer stop()
				servers = append(servers, srv)
			}
			if err := lab.PinSelf(l.ClientCPUs); err != nil {
				return err
			}
			fmt.Fprintf(stderr, "bench floor: %s and %s on CPU %s, wrk on CPU %s\n", ms[0].Name, base.Name, lab.FormatCPUs(l.ServerCPUs), lab.FormatCPUs(l.ClientCPUs))
			fl, err := bench.MeasureFloor(cmd.Context(), servers, path, conns, duration, warmup, rounds, lab.FormatCPUs(l.ClientCPUs))
			if err != nil {
				return err
			}
			printFloor(stdout, ms[0].Name, base.Name, fl)
			return nil
		},
	}
	lf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&path, "path", "/instant", "the request path, on both servers")
	f.IntVar(&conns, "connections", 64, "wrk's connections")
	f.DurationVar(&duration, "duration", 10*time.Second, "length of each round")
	f.IntVar(&rounds, "rounds", 2, "rounds per server, alternating")
	f.DurationVar(&warmup, "warmup", 30*time.Second, "wrk load on each server before the rounds, not counted")
	return cmd
}

// loadBaseline reads baselines/<name>: the same manifest as a contender's, so the lab builds
// and starts it the same way.
func loadBaseline(root, name string) (*contender.Manifest, error) {
	dir := filepath.Join(root, baselinesDir, name)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() || strings.ContainsAny(name, "/.") {
		entries, _ := os.ReadDir(filepath.Join(root, baselinesDir))
		var known []string
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				known = append(known, e.Name())
			}
		}
		return nil, fmt.Errorf("no baseline %q (known: %s)", name, strings.Join(known, ", "))
	}
	return contender.Load(dir)
}

// startFloorServer builds and starts m on the lab's server CPUs and waits until wait answers.
func startFloorServer(cmd *cobra.Command, l *lab.Lab, m *contender.Manifest, wait string) (bench.Server, func(), error) {
	if _, err := l.Builder().Build(cmd.Context(), m, false); err != nil {
		return bench.Server{}, nil, err
	}
	logDir := filepath.Join(l.Root, ".arena", "bench-logs")
	_ = os.MkdirAll(logDir, 0o755)
	in, err := contender.Start(m, contender.StartOptions{Settings: l.Settings, CPUs: lab.FormatCPUs(l.ServerCPUs),
		LogPath: filepath.Join(logDir, m.Name+".log")})
	if err != nil {
		return bench.Server{}, nil, err
	}
	if err := in.WaitAnswer(cmd.Context(), wait, 2*time.Minute); err != nil {
		in.Stop()
		return bench.Server{}, nil, errors.New(err.Error() + "\n" + strings.Join(in.Tail(), "\n"))
	}
	return bench.Server{Name: m.Name, Addr: in.Addr(), Pid: in.Pid()}, func() { in.Stop() }, nil
}

// printFloor prints the rounds as a Markdown table, then each server's mean and the ratio.
func printFloor(out io.Writer, name, base string, fl bench.Floor) {
	fmt.Fprintf(out, "\n### Floor: %s beside %s, %s, %d connections, %.0f s rounds (wrk -t1)\n\n", name, base, fl.Path, fl.Connections, fl.Seconds)
	fmt.Fprintln(out, "| round | server | requests/s | server CPU % | wrk p99 ms |")
	fmt.Fprintln(out, "| --- | --- | ---: | ---: | ---: |")
	for i, r := range fl.Rounds {
		fmt.Fprintf(out, "| %d | %s | %.0f | %.0f | %.2f |\n", i/2+1, r.Server, r.RPS, r.ServerCPU, r.P99ms)
	}
	c, _ := fl.Mean(name)
	b, _ := fl.Mean(base)
	// Within 5 % is the rounds' own spread on this machine (docs/performance.md), not a cost.
	verdict := "at or above its stack's floor"
	if c < 0.95*b {
		verdict = "below its stack's floor"
	}
	fmt.Fprintf(out, "\n%s %.0f req/s, %s %.0f req/s: %.2f× (%s)\n", name, c, base, b, c/b, verdict)
}
