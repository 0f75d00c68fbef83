// Package scenario defines what a scenario is: a load plan per preset, and the judgement of
// a finished run (a verdict per contender, a verdict per claim of the study it reproduces).
// Each scenario is a package under scenarios/.
package scenario

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

// Options shape a plan from the command line.
type Options struct {
	Preset   string        // "" for the scenario's default
	Quick    bool          // a shorter form, for a first look and for CI
	Duration time.Duration // 0: the preset's
	Timeout  time.Duration // 0: the preset's
}

// Level is one load level: how the contender is started and what load it gets.
type Level struct {
	Name string
	// Group and X place the level on a curve (e.g. group "sleep 100 ms", X = 800
	// connections): the report draws figures against X, one line per contender per group.
	Group string
	X     float64
	XName string
	Env   map[string]string // contract variables for the contender (besides PORT)
	// Downstream, if set, is the lab's downstream server for this level, started as its own
	// process on the client's CPUs and given to the contender as DOWNSTREAM_URL.
	Downstream *Downstream
	// Exactly one of Open, Closed and Driver is set.
	Open   *load.OpenLoop
	Closed *load.ClosedLoop
	Driver Driver
	// MemoryCap runs the contender under a memory cap (the lab's heap + 512 MiB, in a memory
	// cgroup where the lab can make one), so that running out of memory is an outcome.
	MemoryCap bool
	// Warmup runs before the measured load, one loop after another, and is discarded.
	Warmup []*load.ClosedLoop
	// Drain is for the ETA: in an open loop, how long the last requests take after the last
	// send; in a closed loop, how long its requests are expected to take (0: its time bound).
	Drain time.Duration
}

// A Driver is a load that is not plain HTTP requests, such as chat users on WebSockets.
type Driver interface {
	// Run drives the contender at addr (host:port) into rec; an error means it could not start.
	Run(ctx context.Context, addr string, rec *load.Recorder) error
	// Feature is the part of the contract a contender needs for this load (e.g. "chat").
	Feature() string
	Describe() string
	Stream() results.StreamPlan // its one tagged stream, for the results
	Expected() time.Duration    // for the ETA
}

// A Measurer is a Driver with figures beyond latency, such as study 003's deliveries, drops
// and server counters.
type Measurer interface {
	Driver
	Measure(ctx context.Context, addr string, rec *load.Recorder) (*results.Stream, error)
}

// Downstream is the lab's downstream server as a level needs it.
type Downstream struct {
	Delay time.Duration // before each answer, e.g. study 001's 50 ms
}

// Plan is a scenario's levels under one preset.
type Plan struct {
	Preset string
	Levels []Level
	// Broken, if set, ends a contender's ladder: once a level of a group breaks for it, its
	// higher levels of that group are skipped (a preset that raises the load to find limits).
	Broken func(results.Cell) bool
	Notes  []string // what this plan does differently from the study, and why
}

// Scenario is one study made runnable.
type Scenario interface {
	Name() string
	Title() string
	Study() string // which seed, and its one-line question
	Presets() []string
	Plan(Options) (Plan, error)
	// Judge gives each contender a verdict and each of the study's claims a verdict.
	Judge(run *results.Run) ([]results.Verdict, []results.Claim)
}

// Describe renders a level as the results' plan record.
func Describe(l Level) results.Level {
	out := results.Level{Name: l.Name, Env: l.Env, Group: l.Group, X: l.X, XName: l.XName}
	if l.Downstream != nil {
		out.DownstreamDelayMs = float64(l.Downstream.Delay) / float64(time.Millisecond)
		out.Downstream = true
	}
	switch {
	case l.Open != nil:
		out.Load = fmt.Sprintf("open loop, %s, request timeout %s", l.Open.Duration, l.Open.Timeout)
		for _, s := range l.Open.Streams {
			out.Streams = append(out.Streams, results.StreamPlan{Tag: s.Tag, Path: s.Request.Path, Mode: "open", Rate: s.Pacer.Rate(), Connections: s.Connections})
		}
	case l.Driver != nil:
		out.Load = l.Driver.Describe()
		out.Streams = append(out.Streams, l.Driver.Stream())
	case l.Closed != nil:
		out.Load = fmt.Sprintf("closed loop, %d connections, %d requests (at most %s), request timeout %s", l.Closed.Connections, l.Closed.Requests, l.Closed.Duration, l.Closed.Timeout)
		out.Streams = append(out.Streams, results.StreamPlan{Tag: l.Closed.Tag, Path: l.Closed.Request.Path, Mode: "closed", Connections: l.Closed.Connections, Requests: l.Closed.Requests})
	}
	return out
}

// Expected is the planned length of a level's measured load, for the ETA.
func (l Level) Expected() time.Duration {
	d := l.Drain
	if l.Open != nil {
		d += l.Open.Duration
	}
	if l.Closed != nil && l.Drain == 0 {
		d += l.Closed.Duration
	}
	if l.Driver != nil {
		d += l.Driver.Expected()
	}
	return d // a warm-up's length is unknown (its bound is not an estimate); the ETA learns it
}

// Filter keeps the levels named in names (all when names is empty); an unknown name is an
// error that lists the plan's levels.
func (p Plan) Filter(names []string) (Plan, error) {
	if len(names) == 0 {
		return p, nil
	}
	var kept []Level
	var known []string
	for _, l := range p.Levels {
		known = append(known, l.Name)
	}
	for i, n := range names {
		if slices.Contains(names[:i], n) {
			continue
		}
		found := false
		for _, l := range p.Levels {
			if l.Name == n {
				kept, found = append(kept, l), true
			}
		}
		if !found {
			return p, fmt.Errorf("no level %q in preset %s (levels: %s)", n, p.Preset, strings.Join(known, ", "))
		}
	}
	p.Levels = kept
	return p, nil
}
