package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/report"
	"github.com/arena-lab/arena/scenarios"
)

func newRunCmd() *cobra.Command {
	var (
		lf         labFlags
		contenders []string
		levels     []string
		preset     string
		quick      bool
		repeat     int
		duration   time.Duration
		timeout    time.Duration
		rebuild    bool
		reverify   bool
		port       int
		runsDir    string
	)
	cmd := &cobra.Command{
		Use:   "run [scenario]",
		Short: "Build, verify and measure contenders on a scenario (default: isolation)",
		Long: `Builds what is needed, verifies every contender against the contract (refusing any that
fails), then measures each one on the scenario, one fresh server per cell, and writes
runs/<id>/ with results.json, results.csv, .hlog interval logs, logs and report.html.
Ctrl-C stops cleanly: the server is stopped and every finished cell is kept.`,
		Example: `  arena run
  arena run isolation --contenders spring-mvc,spring-webflux --quick
  arena run isolation --preset default --repeat 3 --duration 30s`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "isolation"
			if len(args) == 1 {
				name = args[0]
			}
			sc, err := scenarios.Find(name)
			if err != nil {
				return err
			}
			if repeat < 1 || repeat > 100 {
				return fmt.Errorf("--repeat %d: give 1 to 100", repeat)
			}
			if duration < 0 || timeout < 0 {
				return errors.New("--duration and --timeout must be positive")
			}
			if port != 0 && (port < 1024 || port > 65535) {
				return fmt.Errorf("--port %d: give 1024 to 65535, or 0 for a free port per start", port)
			}
			if port != 0 {
				if err := contender.PortFree(port); err != nil {
					return err
				}
			}
			opts := scenario.Options{Preset: preset, Quick: quick, Duration: duration, Timeout: timeout}
			plan, err := sc.Plan(opts) // a bad preset or level fails before any build
			if err != nil {
				return err
			}
			if _, err := plan.Filter(levels); err != nil {
				return err
			}
			l, ms, err := lf.openWith(contenders)
			if err != nil {
				return err
			}
			if runsDir == "" {
				runsDir = filepath.Join(l.Root, "runs")
			}
			fmt.Fprintf(os.Stderr, "arena run %s: %d contender(s), contenders on CPU %s, client on CPU %s, heap %d MiB\n",
				sc.Name(), len(ms), lab.FormatCPUs(l.ServerCPUs), lab.FormatCPUs(l.ClientCPUs), lf.heapMB)
			run, dir, runErr := l.Run(cmd.Context(), lab.RunOptions{
				Scenario: sc, Options: opts, Contenders: ms, Levels: levels, Repeat: repeat, Rebuild: rebuild, Reverify: reverify,
				Port: port, RunsDir: runsDir, Command: os.Args,
			})
			if run == nil {
				return runErr
			}
			reportPath := filepath.Join(dir, "report.html")
			repErr := report.WriteFile(run, report.ChartLibPath(l.Root), reportPath)
			printSummary(run)
			fmt.Fprintf(os.Stderr, "\nresults: %s\n", dir)
			if repErr != nil {
				fmt.Fprintf(os.Stderr, "report: not written: %v\n", repErr)
			} else {
				fmt.Fprintf(os.Stderr, "report:  %s\n", reportPath)
			}
			switch {
			case runErr != nil:
				return runErr
			case run.Status == "interrupted":
				fmt.Fprintln(os.Stderr, "interrupted: finished cells are kept in the results")
				return errInterrupted
			}
			return repErr
		},
	}
	lf.register(cmd)
	f := cmd.Flags()
	f.StringSliceVar(&contenders, "contenders", nil, "contenders to run, comma-separated (default: all; see arena list)")
	f.StringVar(&preset, "preset", "", "the scenario's preset (see arena list; default: the study's own)")
	f.StringSliceVar(&levels, "levels", nil, "only these load levels of the preset, comma-separated (default: all)")
	f.BoolVar(&quick, "quick", false, "a shorter form of the scenario, for a first look")
	f.IntVar(&repeat, "repeat", 1, "measure every cell N times; the report gives medians and their spread")
	f.DurationVar(&duration, "duration", 0, "length of the measured load (default: the preset's)")
	f.DurationVar(&timeout, "timeout", 0, "per-request timeout (default: the preset's)")
	f.BoolVar(&rebuild, "rebuild", false, "rebuild contenders even when their sources did not change")
	f.BoolVar(&reverify, "reverify", false, "verify contenders even when this build already passed")
	f.IntVar(&port, "port", 0, "start contenders on this port (default: a free port per start)")
	f.StringVar(&runsDir, "out", "", "folder for runs/<id>/ (default: <lab>/runs)")
	return cmd
}

// printSummary prints one row per contender and level: verdict, latency per tag, resources.
func printSummary(run *results.Run) {
	if len(run.Summary) == 0 {
		return
	}
	verdict := map[string]string{}
	for _, v := range run.Verdicts {
		verdict[v.Contender+"/"+v.Level] = v.Verdict
	}
	var tags []string
	for _, t := range run.Summary[0].Tags {
		tags = append(tags, t.Tag)
	}
	w := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', 0)
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
		var failed int64 // transport errors and non-2xx answers over every tag: a percentile alone hides them
		for _, t := range s.Tags {
			failed += t.Errors + t.Non2xx
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
		if s.ClientBnd {
			note = append(note, "client-bound")
		}
		row = append(row, fmt.Sprintf("%.0f", s.CPUPct.Median), fmt.Sprintf("%.0f", s.RSSMB.Median), fmt.Sprintf("%.0f", s.Threads.Median), strings.Join(note, ","))
		fmt.Fprintln(w, strings.Join(row, "\t"))
	}
	w.Flush()
	if len(run.Claims) > 0 {
		fmt.Println("\nThe study's claims:")
		for _, c := range run.Claims {
			fmt.Printf("  (%s) %s\n      %s: %s\n", c.ID, c.Text, strings.ToUpper(c.Verdict), c.Why)
		}
	}
}
