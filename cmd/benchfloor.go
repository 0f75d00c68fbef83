package cmd

import (
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
	"github.com/arena-lab/arena/internal/profile"
	"github.com/arena-lab/arena/internal/results"
)

// baselinesDir holds each stack's minimal example, one folder with a manifest each.
const baselinesDir = "baselines"

// benchFloorOptions are arena bench floor's flags.
type benchFloorOptions struct {
	lf       labFlags
	path     string
	conns    int
	duration time.Duration
	warmup   time.Duration
	rounds   int
	profiled bool
}

func newBenchFloorCmd() *cobra.Command {
	o := &benchFloorOptions{}
	cmd := &cobra.Command{
		Use:   "floor <contender> <baseline>",
		Short: "Measure a contender beside its stack's minimal example (baselines/): the floor it must not fall below",
		Long: `Builds and starts the contender and one of baselines/ (its stack's minimal example, written
as the stack's own docs show it: nothing but the path and what it needs), both pinned to --server-cpus with the
same heap and settings, warms each with wrk, then alternates wrk rounds (one thread on
--client-cpus, the same connections) between them. A contender below its stack's minimal
example carries a cost its users would not ship; one above it is at the floor or better.

With --profile, each server is profiled over the counted rounds with its stack's own
profiler (as arena run --profile does), and the frames the contender spends more of its
time in than the example does are listed: what it carries beyond the floor.`,
		Example: "  arena bench floor go-nethttp go-nethttp-hello\n  arena bench floor vertx vertx-hello --path /instant --connections 64 --rounds 3",
		Args:    cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.validate(); err != nil {
				return err
			}
			return o.run(cmd, args[0], args[1])
		},
	}
	o.register(cmd)
	return cmd
}

// register adds the lab's flags and the floor's own to cmd.
func (o *benchFloorOptions) register(cmd *cobra.Command) {
	o.lf.register(cmd)
	f := cmd.Flags()
	f.StringVar(&o.path, "path", "/instant", "the request path, on both servers")
	f.IntVar(&o.conns, "connections", 64, "wrk's connections")
	f.DurationVar(&o.duration, "duration", 10*time.Second, "length of each round")
	f.IntVar(&o.rounds, "rounds", 2, "rounds per server, alternating")
	f.DurationVar(&o.warmup, "warmup", 30*time.Second, "wrk load on each server before the rounds, not counted")
	f.BoolVar(&o.profiled, "profile", false, "profile both servers over the counted rounds (under .arena/bench-profiles/) and list what the contender carries beyond the example")
}

// validate checks the flags' ranges and the path, and that wrk is there to drive the servers.
func (o *benchFloorOptions) validate() error {
	if o.conns < 1 || o.conns > 10000 || o.rounds < 1 || o.rounds > 20 || o.duration < time.Second || o.warmup < 0 {
		return fmt.Errorf("--connections 1..10000, --rounds 1..20, --duration ≥ 1s and --warmup ≥ 0")
	}
	if err := checkPath(o.path); err != nil {
		return err
	}
	_, err := bench.WrkPath()
	return err
}

// run starts the contender name and the baseline baseName pinned (profiled with --profile),
// measures them in turns, and prints the rounds and what the contender carries.
func (o *benchFloorOptions) run(cmd *cobra.Command, name, baseName string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	l, ms, err := o.lf.openWith(stderr, []string{name})
	if err != nil {
		return err
	}
	base, err := loadBaseline(l.Root, baseName)
	if err != nil {
		return err
	}
	if err := toolchainsFor(l, []*contender.Manifest{ms[0], base}); err != nil {
		return err
	}
	var profDir string
	if o.profiled {
		profDir = filepath.Join(l.Root, ".arena", "bench-profiles", time.Now().Format("20060102-150405")+"-"+ms[0].Name+"-"+base.Name)
	}
	var servers []bench.Server
	var profs []*floorProfile
	for _, s := range []struct {
		m    *contender.Manifest
		wait string
	}{{ms[0], contender.ReadinessPath}, {base, o.path}} {
		fp := newFloorProfile(profDir, s.m, l.Settings.JDK)
		srv, stop, err := startFloorServer(cmd, l, s.m, s.wait, fp.sess())
		if err != nil {
			return err
		}
		defer stop()
		servers = append(servers, srv)
		if fp != nil {
			fp.stop = stop
			profs = append(profs, fp)
		}
	}
	if err := lab.PinSelf(l.ClientCPUs); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bench floor: %s and %s on CPU %s, wrk on CPU %s\n", ms[0].Name, base.Name, lab.FormatCPUs(l.ServerCPUs), lab.FormatCPUs(l.ClientCPUs))
	plan := bench.FloorPlan{Path: o.path, Connections: o.conns, Round: o.duration, Warmup: o.warmup, Rounds: o.rounds,
		ClientCPUs: lab.FormatCPUs(l.ClientCPUs)}
	if o.profiled {
		plan.Measured = func(begin bool) {
			for _, fp := range profs {
				fp.mark(begin)
			}
		}
	}
	fl, err := bench.MeasureFloor(cmd.Context(), servers, plan)
	if err != nil {
		return err
	}
	printFloor(stdout, ms[0].Name, base.Name, fl)
	if o.profiled {
		printCarried(stdout, profDir, profs)
	}
	return nil
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

// startFloorServer builds and starts m on the lab's server CPUs (with prof's profiler when
// there is one) and waits until wait answers.
func startFloorServer(cmd *cobra.Command, l *lab.Lab, m *contender.Manifest, wait string, prof *profile.Session) (bench.Server, func(), error) {
	logDir, err := benchLogs(l.Root)
	if err != nil {
		return bench.Server{}, nil, err
	}
	in, err := l.StartReady(cmd.Context(), m, wait, filepath.Join(logDir, m.Name+".log"), prof)
	if err != nil {
		return bench.Server{}, nil, err
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

// floorProfile is one server's profile over a floor's counted rounds, or why it has none.
type floorProfile struct {
	name    string
	session *profile.Session
	none    *results.Profile // why there is no session
	stop    func()           // the server's stop: a JVM and Node write their recording on exit
}

// newFloorProfile is nil when dir is "" (no --profile).
func newFloorProfile(dir string, m *contender.Manifest, jdk contender.JDK) *floorProfile {
	if dir == "" {
		return nil
	}
	fp := &floorProfile{name: m.Name}
	fp.session, fp.none = profile.Open(m, dir, m.Name, jdk)
	return fp
}

func (fp *floorProfile) sess() *profile.Session {
	if fp == nil {
		return nil
	}
	return fp.session
}

func (fp *floorProfile) mark(begin bool) {
	switch {
	case fp.session == nil:
	case begin:
		fp.session.Begin()
	default:
		fp.session.End()
	}
}

// fold stops the server and reads its profile.
func (fp *floorProfile) fold() (results.Stacks, *results.Profile) {
	if fp.session == nil {
		return nil, fp.none
	}
	fp.session.Wait()
	fp.stop()
	p := fp.session.Fold()
	return fp.session.Stacks(), p
}

// carriedRows is how many frames the comparison of two profiles lists.
const carriedRows = 20

// printCarried stops both servers, folds their profiles and lists the frames the contender
// (the first) spends a larger share of its samples in than the example (the second).
func printCarried(out io.Writer, dir string, profs []*floorProfile) {
	stacks := make([]results.Stacks, len(profs))
	fmt.Fprintf(out, "\n### Profiles over the counted rounds (%s)\n\n", dir)
	for i, fp := range profs {
		var p *results.Profile
		stacks[i], p = fp.fold()
		if len(stacks[i]) == 0 {
			fmt.Fprintf(out, "- %s: no profile (%s)\n", fp.name, p.Error)
			continue
		}
		fmt.Fprintf(out, "- %s: %s, %d samples, %s\n", fp.name, p.Tool, stacks[i].Samples(), filepath.Join(dir, p.Folded))
	}
	if len(profs) == 2 && len(stacks[0]) > 0 && len(stacks[1]) > 0 {
		printCarriedTable(out, profs[0].name, profs[1].name, stacks[0], stacks[1])
	}
}

// printCarriedTable lists the frames a spends a larger share of its samples in than b does.
func printCarriedTable(out io.Writer, a, b string, sa, sb results.Stacks) {
	fmt.Fprintf(out, "\nWhat %s carries beyond %s: the frames with the largest excess share of its samples, in them or below\n", a, b)
	fmt.Fprintln(out, "them (total); self is the share in the frame alone, small for a wrapper whose callees are the cost.")
	fmt.Fprintf(out, "\n| frame | %s total %% | %s total %% | %s self %% | %s self %% |\n| --- | ---: | ---: | ---: | ---: |\n", a, b, a, b)
	for _, s := range profile.Carried(sa, sb, carriedRows) {
		fmt.Fprintf(out, "| %s | %.1f | %.1f | %.1f | %.1f |\n", s.Name, 100*s.A, 100*s.B, 100*s.SelfA, 100*s.SelfB)
	}
}
