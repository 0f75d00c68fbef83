package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/place"
	"github.com/arena-lab/arena/internal/profile"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/report"
	"github.com/arena-lab/arena/scenarios"
)

func newRunCmd() *cobra.Command {
	var rf runFlags
	cmd := &cobra.Command{
		Use:   "run [scenario]",
		Short: "Build, verify and measure contenders on a scenario (default: a first look at study 004)",
		Long: `Builds what is needed, verifies every contender against the contract (refusing any that
fails), then measures each one on the scenario, one fresh server per cell, and writes
runs/<id>/ with results.json, results.csv, .hlog interval logs, logs and report.html.
Ctrl-C stops cleanly: the server is stopped and every finished cell is kept.
summary.json beside them holds every verdict on a page: a check per cell, claim and threshold.

With no scenario it is a first look: the isolation study (seed 004) in its quick form on
four models, ` + strings.Join(firstLook, ", ") + `: does a slow endpoint starve the fast
ones? Any flag given overrides its choice. Name a scenario to run it on every contender;
arena reproduce runs all five studies.

` + gateHelp + `

` + exitHelp,
		Example: `  arena run
  arena run isolation --contenders spring-mvc,spring-webflux --quick
  arena run isolation --quick --contenders spring-mvc --fail-on fails,crashed --junit junit.xml
  arena run sleep --quick --levels sleep-c200 --threshold 'sleep:p99<150ms' --threshold 'errors<0.1%' 
  arena run isolation --preset default --repeat 3 --duration 30s
  arena run sleep --contenders spring-mvc --levels sleep-c200 --quick --repeat 5 --env WORKER_THREADS=11
  arena run downstream --quick --profile --contenders spring-webflux,vertx
  arena run sleep --quick --levels sleep-c200 --agents 3
  arena run isolation --quick --target http://127.0.0.1:8080 --target-pid 4242 --target-env WORKER_THREADS=11
  arena run sleep --quick --target http://127.0.0.1:8080 --target-cgroup /sys/fs/cgroup/system.slice/docker-ID.scope
  arena run sleep --quick --agent-addrs 10.0.0.2:7600,10.0.0.3:7600 --server-address 10.0.0.1`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			spec := rf.specOf(firstLookDefaults(cmd, args, &rf.spec.Contenders, &rf.spec.Quick))
			if err := rf.withTarget(cmd, &spec); err != nil {
				return err
			}
			if _, err := checkSpec(spec); err != nil {
				return err
			}
			if err := rf.gf.parse(); err != nil {
				return err
			}
			if err := rf.gf.checkTags(spec); err != nil {
				return err
			}
			if err := rf.ef.parse(); err != nil {
				return err
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			pl, err := rf.af.placement(stderr)
			if err != nil {
				return err
			}
			if pl.Remote() {
				if rf.gf.given() {
					return errors.New("--fail-on, --threshold and --junit judge a run carried out by this process: not yet a server host's (--hosts with a server, --kubernetes)")
				}
				if len(rf.ef.exporters) > 0 {
					return errors.New("--export sends the cells of a run carried out by this process: not yet a server host's (--hosts with a server, --kubernetes)")
				}
				return runRemote(cmd.Context(), pl, spec, rf.runsDir, stdout, stderr)
			}
			lead := ""
			if len(args) == 0 {
				lead = "arena run: a first look at study 004 (isolation): does a slow endpoint starve the fast ones? `arena run --help` says how to shape it, `arena reproduce` runs all five studies.\n"
			}
			run, dir, err := measure(cmd.Context(), spec, pl, rf.runsDir, os.Args, lead, rf.liveChoice(), rf.ef.exporters, stdout, stderr)
			return rf.gf.afterRun(run, dir, err, stdout, stderr)
		},
	}
	rf.register(cmd)
	return cmd
}

// runFlags are arena run's flags: the run spec they build, and the coordinator's own
// choices, where the load comes from and where the results go, which are not the run's.
type runFlags struct {
	lf                labFlags
	af                agentFlags
	gf                gateFlags
	ef                exportFlags
	tf                targetFlags
	spec              results.RunSpec
	duration, timeout time.Duration
	runsDir           string
	live, noLive      bool // --live, --no-live: the live view (default: on a terminal outside CI)
}

// liveChoice is what --live and --no-live (never both) say of the live view.
func (rf *runFlags) liveChoice() lab.LiveChoice {
	switch {
	case rf.noLive:
		return lab.LiveOff
	case rf.live:
		return lab.LiveOn
	}
	return lab.LiveAuto
}

func (rf *runFlags) register(cmd *cobra.Command) {
	rf.lf.register(cmd)
	rf.af.register(cmd)
	rf.gf.register(cmd)
	rf.ef.register(cmd)
	rf.tf.register(cmd)
	f, s := cmd.Flags(), &rf.spec
	f.StringSliceVar(&s.Contenders, "contenders", nil, "contenders to run, comma-separated (default: all; see arena list)")
	f.StringVar(&s.Preset, "preset", "", "the scenario's preset (see arena list; default: the study's own)")
	f.StringSliceVar(&s.Levels, "levels", nil, "only these load levels of the preset, comma-separated (default: all)")
	f.BoolVar(&s.Quick, "quick", false, "a shorter form of the scenario, for a first look")
	f.IntVar(&s.Repeat, "repeat", 1, "measure every cell N times; the report gives medians and their spread")
	f.DurationVar(&rf.duration, "duration", 0, "length of the measured load (default: the preset's)")
	f.DurationVar(&rf.timeout, "timeout", 0, "per-request timeout (default: the preset's)")
	f.BoolVar(&s.Rebuild, "rebuild", false, "rebuild contenders even when their sources did not change")
	f.BoolVar(&s.Reverify, "reverify", false, "verify contenders even when this build already passed")
	f.IntVar(&s.Port, "port", 0, "start contenders on this port (default: a free port per start)")
	f.StringVar(&rf.runsDir, "out", "", "folder for runs/<id>/ (default: <lab>/runs)")
	f.BoolVar(&s.Profile, "profile", false, "record each contender's CPU profile over every load (JFR, V8, pprof) and draw flame graphs in the report; profilers cost some throughput")
	f.StringVar(&s.ID, "id", "", "name the run's folder, which must not hold a run yet (default: its start and the scenario, e.g. 20261125-101500-sleep)")
	f.StringToStringVar(&s.Env, "env", nil, "set a contract variable for every level, e.g. WORKER_THREADS=11 (a contender gets only those it honours)")
	f.BoolVar(&rf.live, "live", false, "show each running cell live on a terminal, redrawn every second: per stream the last window's requests/s, p50, p99 and errors, and the server's CPU, RSS and threads (default: on a terminal when $CI is not set; off a terminal never)")
	f.BoolVar(&rf.noLive, "no-live", false, "no live view: a line per event, as in CI or through a pipe")
	cmd.MarkFlagsMutuallyExclusive("live", "no-live")
}

// specOf is the run spec the flags give for the scenario name.
func (rf *runFlags) specOf(name string) results.RunSpec {
	s := rf.spec
	s.Scenario = name
	s.DurationS, s.TimeoutS = rf.duration.Seconds(), rf.timeout.Seconds()
	s.ServerCPUs, s.ClientCPUs, s.HeapMB = rf.lf.serverCPUs, rf.lf.clientCPUs, rf.lf.heapMB
	return s
}

// checkSpec refuses a spec that cannot run, before any build: its scenario found, its
// settings in range, its preset and levels the scenario's.
func checkSpec(spec results.RunSpec) (scenario.Scenario, error) {
	sc, err := scenarios.Find(spec.Scenario)
	if err != nil {
		return nil, err
	}
	if err := checkEnv(spec.Env); err != nil {
		return nil, err
	}
	switch id := spec.ID; {
	case spec.Repeat < 1 || spec.Repeat > 100:
		return nil, fmt.Errorf("--repeat %d: give 1 to 100", spec.Repeat)
	case spec.DurationS < 0 || spec.TimeoutS < 0:
		return nil, errors.New("--duration and --timeout must be positive")
	case spec.Port != 0 && (spec.Port < 1024 || spec.Port > 65535):
		return nil, fmt.Errorf("--port %d: give 1024 to 65535, or 0 for a free port per start", spec.Port)
	case id != "" && results.CheckID(id) != nil:
		return nil, fmt.Errorf("--id %q: a folder's name of letters, digits, '.', '_' and '-', a letter or digit first, at most 100", id)
	}
	plan, err := sc.Plan(lab.Options(spec)) // a bad preset or level fails before any build
	if err != nil {
		return nil, err
	}
	if plan, err = plan.Filter(spec.Levels); err != nil {
		return nil, err
	}
	if spec.Target != nil {
		if err := checkTargetSpec(spec, plan); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

// runSpec carries out spec here, the lab's load from the agents pl places, into runsDir (default:
// <lab>/runs), recording command; it prints the run's summary to stdout and its progress to
// stderr (after lead, once the run can begin), and returns the run's status ("" when none
// began). `arena run` and a server agent both run a spec through it.
func runSpec(ctx context.Context, spec results.RunSpec, pl place.Placement, runsDir string, command []string, lead string, stdout, stderr io.Writer) (string, error) {
	run, dir, err := measure(ctx, spec, pl, runsDir, command, lead, lab.LiveOff, nil, stdout, stderr) // a server agent streams its progress: no terminal
	if run == nil || dir == "" {
		return "", err
	}
	return run.Status, err
}

// measure is runSpec's work: it returns the run and its folder (nil and "" when nothing
// was measured, or there was nowhere to write) and the run's error.
func measure(ctx context.Context, spec results.RunSpec, pl place.Placement, runsDir string, command []string, lead string, live lab.LiveChoice, exporters []lab.Exporter, stdout, stderr io.Writer) (*results.Run, string, error) {
	sc, err := checkSpec(spec)
	if err != nil {
		return nil, "", err
	}
	if spec.Port != 0 {
		if err := contender.PortFree(spec.Port); err != nil {
			return nil, "", err
		}
	}
	lf := labFlags{serverCPUs: spec.ServerCPUs, clientCPUs: spec.ClientCPUs, heapMB: spec.HeapMB}
	l, ms, err := openFor(lf, stderr, spec)
	if err != nil {
		return nil, "", err
	}
	l.Hurry = hurryOf(ctx)
	l.Exporters = exporters
	l.Progress.UseLive(live, os.Getenv("CI"))
	placed, err := pl.Open(ctx, l)
	if err != nil {
		return nil, "", err
	}
	defer placed.Stop()
	l.Agents = placed.Agents
	if runsDir == "" {
		runsDir = filepath.Join(l.Root, "runs")
	}
	if spec.ID != "" {
		if _, err := os.Stat(filepath.Join(runsDir, spec.ID, results.JSONFile)); err == nil {
			return nil, "", fmt.Errorf("--id %s: %s already holds a run; choose another name (arena reproduce --resume carries a stopped reproduction on)", spec.ID, filepath.Join(runsDir, spec.ID))
		}
	}
	fmt.Fprint(stderr, lead)
	what := fmt.Sprintf("%d contender(s), contenders on CPU %s, client on CPU %s, heap %d MiB",
		len(ms), lab.FormatCPUs(l.ServerCPUs), lab.FormatCPUs(l.ClientCPUs), l.Settings.HeapMB)
	if spec.Target != nil {
		what = describeTarget(spec.Target, l)
	}
	fmt.Fprintf(stderr, "arena run %s: %s\n", sc.Name(), what)
	if l.Agents != nil {
		fmt.Fprintf(stderr, "arena run %s: %s\n", sc.Name(), describeAgents(l.Agents))
	}
	run, dir, runErr := l.Run(ctx, lab.RunOptions{Spec: spec, Scenario: sc, Contenders: ms, RunsDir: runsDir, Command: command})
	if run == nil || dir == "" { // nothing measured, nowhere to write
		return nil, "", runErr
	}
	if repErr := reportRun(l, run, dir, stdout, stderr); runErr == nil {
		runErr = repErr
	}
	return run, dir, runErr
}

// reportRun draws the run's report and prints its summary and where it is; an interrupted
// run's error says so.
func reportRun(l *lab.Lab, run *results.Run, dir string, stdout, stderr io.Writer) error {
	reportPath := filepath.Join(dir, "report.html")
	repErr := report.WriteFile(run, report.ChartLibPath(l.Root), reportPath)
	if err := printSummary(stdout, run); err != nil {
		fmt.Fprintf(stderr, "summary: not printed: %v\n", err)
	}
	fmt.Fprintf(stderr, "\nresults: %s\n", dir)
	if repErr != nil {
		fmt.Fprintf(stderr, "report: not written: %v\n", repErr)
	} else {
		fmt.Fprintf(stderr, "report:  %s\n", reportPath)
	}
	if run.Status == results.RunInterrupted {
		fmt.Fprintln(stderr, "interrupted: finished cells are kept in the results")
		return errors.Join(errInterrupted, repErr)
	}
	return repErr
}

// firstLook are the contenders of `arena run` with no scenario: one of each model study 004
// sets apart, so that its answer shows in minutes. The blocking servlet starves; the async
// servlet, WebFlux and virtual threads stay isolated.
var firstLook = []string{"spring-mvc", "spring-mvc-async", "spring-webflux", "spring-mvc-virtual"}

// firstLookDefaults is the scenario to run: the one named, or with none the first look,
// whose contenders and quick form apply unless a flag was given for them.
func firstLookDefaults(cmd *cobra.Command, args []string, contenders *[]string, quick *bool) string {
	if len(args) == 1 {
		return args[0]
	}
	if !cmd.Flags().Changed("contenders") {
		*contenders = firstLook
	}
	if !cmd.Flags().Changed("quick") && !cmd.Flags().Changed("duration") && !cmd.Flags().Changed("preset") {
		*quick = true
	}
	return "isolation"
}

// setByLab are the variables the lab sets itself, per start and per level. BIND_ADDRESS among
// them: only the lab moves a contender off loopback (to the server address agents on other
// hosts reach), never a flag, which could open it to every interface.
var setByLab = []string{"PORT", "DOWNSTREAM_URL", "JAVA_HOME", "JAVA_OPTS", "PATH", "BIND_ADDRESS"}

// checkEnv refuses --env variables the lab sets itself, or that are no variable's name, and a
// PPROF_ADDR off loopback (a profiler's port answers anyone who reaches it).
func checkEnv(env map[string]string) error {
	for k, v := range env {
		if slices.Contains(setByLab, k) {
			return fmt.Errorf("--env %s: the lab sets it itself", k)
		}
		if k == profile.PprofVar {
			if ap, err := netip.ParseAddrPort(v); err != nil || !ap.Addr().IsLoopback() {
				return fmt.Errorf("--env %s=%s: give a loopback IP:port, e.g. 127.0.0.1:6060 (the lab reads the profile here)", k, v)
			}
		}
		if k == "" || strings.Trim(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != "" {
			return fmt.Errorf("--env %q: a contract variable is named in capitals, e.g. WORKER_THREADS=11", k)
		}
	}
	return nil
}

// printSummary prints to out one row per contender and level (verdict, latency per tag,
// resources), then the study's claims; its error is the table's, written to out.
func printSummary(out io.Writer, run *results.Run) error {
	if len(run.Summary) == 0 {
		return nil
	}
	verdict := map[string]string{}
	for _, v := range run.Verdicts {
		verdict[v.Contender+"/"+v.Level] = v.Verdict
	}
	var tags []string
	for _, t := range run.Summary[0].Tags {
		tags = append(tags, t.Tag)
	}
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	head := []string{"CONTENDER", "LEVEL", "VERDICT"}
	for _, t := range tags {
		head = append(head, strings.ToUpper(t)+" p50/p99")
	}
	head = append(head, "PER S", "ERRORS", "CPU%", "RSS MB", "THREADS", "NOTE")
	fmt.Fprintln(w)
	fmt.Fprintln(w, strings.Join(head, "\t"))
	for _, s := range run.Summary {
		v, ok := verdict[s.Contender+"/"+s.Level]
		if !ok {
			v = verdict[s.Contender+"/"] // a verdict on the contender as a whole
		}
		row := []string{s.Contender, s.Level, v}
		for _, tag := range tags {
			cellText := "-"
			for _, t := range s.Tags {
				if t.Tag == tag && t.Merged.Count > 0 {
					cellText = results.FormatMs(t.Merged.P50) + " / " + results.FormatMs(t.Merged.P99)
				}
			}
			row = append(row, cellText)
		}
		var failed int64 // attempts with no correct answer over every tag: a percentile alone hides them
		for _, t := range s.Tags {
			failed += t.Errors
		}
		rate := "-"
		if len(s.Tags) > 0 && s.Tags[0].RPS.Median > 0 {
			rate = fmt.Sprintf("%.0f", s.Tags[0].RPS.Median)
		}
		row = append(row, rate, fmt.Sprint(failed))
		var note []string
		for _, o := range s.Outcomes {
			if o != results.OutcomeOK && !slices.Contains(note, o) {
				note = append(note, o)
			}
		}
		if s.Noisy {
			note = append(note, "noisy")
		}
		if s.SharedCPU {
			note = append(note, "shared-cpu")
		}
		if s.ClientBnd {
			note = append(note, "client-bound")
		}
		if s.Faulty() {
			note = append(note, "faults: "+results.FormatFaults(s.Faults))
		}
		if s.Unverified {
			note = append(note, "unverified")
		}
		row = append(append(row, resourceCells(s)...), strings.Join(note, ","))
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(run.Claims) > 0 {
		fmt.Fprintln(out, "\nThe study's claims:")
		for _, c := range run.Claims {
			fmt.Fprintf(out, "  (%s) %s\n      %s: %s\n", c.ID, c.Text, strings.ToUpper(c.Verdict), c.Why)
		}
	}
	return nil
}
