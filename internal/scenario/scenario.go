// Package scenario defines what a scenario is: a load plan per preset, and the judgement of
// a finished run (a verdict per contender, a verdict per claim of the study it reproduces).
// Each scenario is a package under scenarios/.
package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

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
	// Database, if set, is the lab's PostgreSQL for this level (internal/postgres), made
	// for each cell on the client's CPUs and given to the contender as DB_URL and DB_POOL:
	// the level needs the contract's db feature.
	Database *Database
	// Load is what the level does to the contender; Warmup runs before it, one load after
	// another, and is discarded.
	Load   load.Load
	Warmup []load.Load
	// MemoryCap runs the contender under a memory cap (the lab's heap + 512 MiB, in a memory
	// cgroup where the lab can make one), so that running out of memory is an outcome.
	MemoryCap bool
}

// Downstream is the lab's downstream server as a level needs it.
type Downstream struct {
	Delay time.Duration // before each answer, e.g. study 001's 50 ms
}

// Database is the lab's PostgreSQL as a level needs it.
type Database struct {
	Pool int // DB_POOL: the most connections every contender may hold to it
}

// Plan is a scenario's levels under one preset.
type Plan struct {
	Preset string
	Levels []Level
	// Broken, if set, ends a contender's ladder: once a level of a group breaks for it, its
	// higher levels of that group are skipped (a preset that raises the load to find limits).
	Broken func(results.Cell) bool
	Notes  []string // what this plan does differently from the study, and why
	// Headline is the figure the scenario is summed up by, in the matrix and the findings.
	Headline []results.Headline
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
	d := l.Load.Describe()
	out := results.Level{Name: l.Name, Env: l.Env, Group: l.Group, X: l.X, XName: l.XName, Load: d.Text, Streams: d.Streams,
		Duration: d.Duration.Seconds(), Timeout: d.Timeout.Seconds()}
	if l.Downstream != nil {
		out.DownstreamDelayMs = float64(l.Downstream.Delay) / float64(time.Millisecond)
		out.Downstream = true
	}
	if l.Database != nil {
		out.Database, out.DBPool = true, l.Database.Pool
	}
	return out
}

// Expected is the planned length of a level's measured load, for the ETA; a warm-up's
// length is unknown (its bound is no estimate), and the ETA learns it.
func (l Level) Expected() time.Duration { return l.Load.Describe().Expected }

// Feature is the part of the contract beyond HTTP the level needs ("" for none): the db
// feature for a level with the lab's database, else what its load needs.
func (l Level) Feature() string {
	if l.Database != nil {
		return "db"
	}
	return l.Load.Describe().Feature
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

// Level returns the plan's level called name.
func (p Plan) Level(name string) (Level, bool) {
	for _, l := range p.Levels {
		if l.Name == name {
			return l, true
		}
	}
	return Level{}, false
}

// WithEnv sets contract variables for every level over the plan's own, and says so in its
// notes: one setting changed for a comparison (e.g. WORKER_THREADS=11).
func (p Plan) WithEnv(env map[string]string) Plan {
	if len(env) == 0 {
		return p
	}
	levels := make([]Level, len(p.Levels))
	for i, l := range p.Levels {
		l.Env = maps.Clone(l.Env)
		if l.Env == nil {
			l.Env = map[string]string{}
		}
		maps.Copy(l.Env, env)
		levels[i] = l
	}
	p.Levels = levels
	var set []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		set = append(set, k+"="+env[k])
	}
	p.Notes = append(slices.Clone(p.Notes), "Set for every level by --env, over the preset's: "+strings.Join(set, ", ")+" (a contender gets only the variables it honours).")
	return p
}
