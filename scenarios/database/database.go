// Package database is arena's own study, beyond the seeds: the question the five studies ask
// with timers and HTTP calls, asked of the I/O most servers have, a database. Every contender
// with the db feature reads the same rows from one PostgreSQL the lab starts (internal/postgres)
// through its stack's own driver and pool (JDBC + HikariCP, R2DBC, Vert.x's client,
// node-postgres, pgx), every pool the same size.
package database

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// Tags of the streams.
const (
	TagDB        = "db"
	TagSlow      = "slow"
	TagInstant   = "instant"
	TagLiveness  = "liveness"
	TagReadiness = "readiness"
)

// Levels: reads at a ladder of connections, reads at a ladder of pool sizes, and the
// pool held by slow queries beside the fast paths, with the same streams unloaded first.
const (
	LevelIdle = "idle"
	LevelHeld = "held"
	groupRead = "reads, DB_POOL 16"
	groupPool = "reads at 64 connections"
)

// The load's shape.
const (
	defaultPool = 16 // DB_POOL wherever a level does not vary it
	poolConns   = 64 // connections of the pool ladder
	slowHold    = 2 * time.Second
	// slowRate sends /db/slow a quarter faster than defaultPool connections held slowHold
	// each can serve, so that every pooled connection is held throughout and the rest wait.
	slowRate = defaultPool * 5 / 4 / 2
	dbRate   = 20 // /db/{id} a second beside it
	// IsolatedBelow is the p99 under which /instant and the probes count as unaffected, as in
	// study 004's scenario.
	IsolatedBelow = 100 * time.Millisecond
	// StarvedBy is how much slower /db/{id}'s p99 must be with the pool held than unloaded
	// for a model to count as not protecting fast queries.
	StarvedBy = 10.0
)

// readLadder and poolLadder are the full preset's levels; the quick form runs reads at
// poolConns only.
var (
	readLadder = []int{16, poolConns, 256}
	poolLadder = []int{4, 64}
)

// The ids the streams read: every row whose JSON is as long (the even ids of 1000..9999:
// four digits, active false, a value of fixed width), so that one learned answer length
// fits them all.
const firstID, lastID = 1000, 9999

// plannedRate is the reads a second the ETA plans with: below the slowest stack's here.
const plannedRate = 2000

// dbPaths are /db/{id} over every even id from firstID to lastID, in a fixed order that
// jumps across the table (a stride coprime with their count), the same in every run.
func dbPaths() []string {
	n := (lastID - firstID + 1) / 2
	const stride = 7919 // a prime, coprime with 4,500
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("/db/%d", firstID+2*(i*stride%n))
	}
	return paths
}

// Scenario is the database study.
type Scenario struct{}

func (Scenario) Name() string { return "database" }
func (Scenario) Title() string {
	return "Database: the pool, the driver and the model, on a real PostgreSQL"
}
func (Scenario) Study() string {
	return "arena's own study (no seed): JDBC + HikariCP, R2DBC, Vert.x's client, node-postgres and pgx reading one PostgreSQL through pools of one size"
}
func (Scenario) Presets() []string { return []string{"default"} }

// ReadLevel and PoolLevel name the ladders' levels.
func ReadLevel(connections int) string { return fmt.Sprintf("read-c%d", connections) }
func PoolLevel(pool int) string        { return fmt.Sprintf("pool-%d", pool) }

// Plan: the read ladder, the pool ladder, then idle and held. The quick form keeps one read
// level and both isolation levels, each shorter.
func (s Scenario) Plan(o scenario.Options) (scenario.Plan, error) {
	r, err := o.Resolve(s)
	if err != nil {
		return scenario.Plan{}, err
	}
	reads, pools := readLadder, poolLadder
	requests, idleFor, heldFor := int64(60_000), 20*time.Second, 60*time.Second
	if r.Quick {
		reads, pools = []int{poolConns}, nil
		requests, idleFor, heldFor = 15_000, 10*time.Second, 20*time.Second
	}
	bound := r.Duration(2 * time.Minute)
	idleFor, heldFor = r.Duration(idleFor), r.Duration(heldFor)
	timeout := r.Timeout(30 * time.Second)
	paths := dbPaths()
	db := load.Request{Path: paths[0], Paths: paths}
	plan := scenario.Plan{Preset: r.Preset, Headline: []results.Headline{
		{Figure: "rps", Tag: TagDB, Per: results.PerCurve, Label: "/db/{id} requests/s", Unit: "requests/s"},
	}}
	plan.Notes = append(plan.Notes,
		"arena's own study: no seed measured it. The lab's PostgreSQL (Debian's, durability off: its data is made anew for every cell and only read) runs on the client's CPUs, probed beside the contender.",
		fmt.Sprintf("Reads go over the even ids %d to %d (a fixed order across the table; rows whose JSON is as long); DB_POOL is %d unless the level varies it, the same for every contender, never a driver's own default.", firstID, lastID-1, defaultPool),
		fmt.Sprintf("A read level is a closed loop of %d requests (at most %s) after 5,000 of warm-up.", requests, bound),
		fmt.Sprintf("Level %s: /db/slow?ms=%d at %d/s holds every pooled connection, beside /db/{id} at %d/s, /instant at 10/s and the probes at 1/s; level %s is the same without /db/slow.", LevelHeld, slowHold.Milliseconds(), slowRate, dbRate, LevelIdle))
	warm := []load.Load{load.ClosedLoop{Tag: "warmup", Request: db, Connections: defaultPool, Requests: 5000, Duration: 20 * time.Second, Timeout: timeout}}
	read := func(name, group string, x float64, xName string, conns, pool int) scenario.Level {
		return scenario.Level{Name: name, Group: group, X: x, XName: xName, Database: &scenario.Database{Pool: pool}, Warmup: warm,
			Load: load.ClosedLoop{Tag: TagDB, Request: db, Connections: conns, Requests: requests, Duration: bound, Timeout: timeout,
				Expect: time.Duration(requests) * time.Second / plannedRate}}
	}
	for _, c := range reads {
		plan.Levels = append(plan.Levels, read(ReadLevel(c), groupRead, float64(c), "connections", c, defaultPool))
	}
	for _, p := range pools {
		plan.Levels = append(plan.Levels, read(PoolLevel(p), groupPool, float64(p), "DB_POOL", poolConns, p))
	}
	fast := []load.Stream{
		{Tag: TagDB, Request: db, Pacer: load.PerSecond(dbRate)},
		{Tag: TagInstant, Request: load.Request{Path: "/instant"}, Pacer: load.PerSecond(10)},
		{Tag: TagLiveness, Request: load.Request{Path: "/actuator/health/liveness"}, Pacer: load.PerSecond(1)},
		{Tag: TagReadiness, Request: load.Request{Path: "/actuator/health/readiness"}, Pacer: load.PerSecond(1)},
	}
	warmFast := []load.Load{
		load.ClosedLoop{Tag: "warmup", Request: load.Request{Path: "/instant"}, Connections: 4, Requests: 2000, Duration: 10 * time.Second, Timeout: 5 * time.Second},
		load.ClosedLoop{Tag: "warmup", Request: db, Connections: 4, Requests: 2000, Duration: 20 * time.Second, Timeout: timeout},
	}
	open := func(streams []load.Stream, d time.Duration) load.OpenLoop {
		return load.OpenLoop{Streams: streams, Duration: d, Timeout: timeout, LateAfter: 10 * time.Millisecond, Drain: min(timeout, 20*time.Second)}
	}
	held := append([]load.Stream{{Tag: TagSlow, Request: load.Request{Path: fmt.Sprintf("/db/slow?ms=%d", slowHold.Milliseconds())}, Pacer: load.PerSecond(slowRate)}}, fast...)
	plan.Levels = append(plan.Levels,
		scenario.Level{Name: LevelIdle, Database: &scenario.Database{Pool: defaultPool}, Warmup: warmFast, Load: open(fast, idleFor)},
		scenario.Level{Name: LevelHeld, Database: &scenario.Database{Pool: defaultPool}, Warmup: warmFast, Load: open(held, heldFor)})
	return plan, nil
}

// The isolation words, as in study 004's scenario.
var (
	Isolated = scenario.Word{Text: "isolated", Tone: results.Good}
	Starved  = scenario.Word{Text: "starved", Tone: results.Bad}
	Baseline = scenario.Word{Text: "baseline", Tone: results.Neutral}
)

// fastTags must stay fast with the pool held for a contender to count as isolated.
var fastTags = []string{TagInstant, TagLiveness, TagReadiness}

// Judge ranks the read levels by throughput, gives the isolation levels their words, and
// judges the claims.
func (Scenario) Judge(run *results.Run) ([]results.Verdict, []results.Claim) {
	idx := scenario.Index(run)
	var verdicts []results.Verdict
	for _, lv := range run.Scenario.Levels {
		switch lv.Name {
		case LevelIdle, LevelHeld:
			for _, c := range run.Contenders {
				if cs, ok := idx[c.Name][lv.Name]; ok {
					verdicts = append(verdicts, judgeIsolation(cs, idx[c.Name][LevelIdle]))
				}
			}
		default:
			verdicts = append(verdicts, rank(run, idx, lv.Name)...)
		}
	}
	claims := []results.Claim{
		claimVirtualMatchesReactive(run, idx),
		claimPlatformOutServes(run, idx),
		claimPoolStarvesFastQueries(run, idx),
		claimNonBlockingKeepsInstant(run, idx),
	}
	return verdicts, claims
}

// rank orders the contenders at a read level by /db/{id} requests/s.
func rank(run *results.Run, idx scenario.Summaries, level string) []results.Verdict {
	type entry struct {
		name     string
		rps, p99 float64
	}
	var entries []entry
	var out []results.Verdict
	for _, c := range run.Contenders {
		cs, ran := idx[c.Name][level]
		if !ran {
			continue
		}
		if t, ok := idx.Tag(c.Name, level, TagDB); ok {
			entries = append(entries, entry{c.Name, t.RPS.Median, t.Merged.P99})
			continue
		}
		out = append(out, notRanked(c.Name, level, cs))
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].rps > entries[j].rps })
	for i, e := range entries {
		why := fmt.Sprintf("%.0f requests/s, p99 %s", e.rps, results.FormatMs(e.p99))
		w := scenario.Word{Text: "fastest", Tone: results.Good}
		if share := e.rps / entries[0].rps; i > 0 && share >= 0.9 {
			w = scenario.Word{Text: "within 10 %", Tone: results.Good}
		} else if i > 0 {
			w = scenario.Word{Text: fmt.Sprintf("%.0f %% of fastest", share*100), Tone: results.Mixed}
		}
		if i > 0 {
			why += fmt.Sprintf(" (%s: %.0f)", entries[0].name, entries[0].rps)
		}
		out = append(out, w.Verdict(e.name, level, why))
	}
	return out
}

// notRanked is the verdict of a summary with no figures to rank: not run ok, or unjudged.
func notRanked(name, level string, cs results.CellSummary) results.Verdict {
	for _, o := range cs.Outcomes {
		if o != results.OutcomeOK {
			return scenario.Outcome(o).Verdict(name, level, "a repeat ended "+o+": see Outcomes")
		}
	}
	if w, why, unjudged := scenario.Unjudged(cs); unjudged {
		return w.Verdict(name, level, why+": not ranked")
	}
	return scenario.NotMeasured.Verdict(name, level, "no correct answer measured")
}

// judgeIsolation: at level idle the baseline; at level held isolated when /instant and both
// probes keep p99 under IsolatedBelow, starved otherwise, with /db/{id}'s p99 beside its idle one.
func judgeIsolation(cs, idle results.CellSummary) results.Verdict {
	for _, o := range cs.Outcomes {
		if o != results.OutcomeOK {
			return scenario.Outcome(o).Verdict(cs.Contender, cs.Level, "a repeat ended "+o+": see Outcomes")
		}
	}
	if w, why, unjudged := scenario.Unjudged(cs); unjudged {
		return w.Verdict(cs.Contender, cs.Level, why)
	}
	slow, fine := scenario.FastEndpoints(cs, fastTags, IsolatedBelow)
	dbWhy := ""
	if t, ok := tagOf(cs, TagDB); ok {
		dbWhy = fmt.Sprintf("; /db/{id} p99 %s", results.FormatMs(t.Merged.P99))
		if base, ok := tagOf(idle, TagDB); ok && cs.Level == LevelHeld && base.Merged.P99 > 0 {
			dbWhy += fmt.Sprintf(" (%.1f× its %s unloaded)", t.Merged.P99/base.Merged.P99, results.FormatMs(base.Merged.P99))
		}
	}
	switch {
	case cs.Level == LevelIdle:
		return Baseline.Verdict(cs.Contender, cs.Level, strings.Join(append(fine, slow...), ", ")+dbWhy)
	case len(slow) > 0:
		return Starved.Verdict(cs.Contender, cs.Level, strings.Join(slow, ", ")+fmt.Sprintf(" (isolated needs p99 < %s)", IsolatedBelow)+dbWhy)
	}
	return Isolated.Verdict(cs.Contender, cs.Level, strings.Join(fine, ", ")+dbWhy)
}

func tagOf(cs results.CellSummary, tag string) (results.TagSummary, bool) {
	for _, t := range cs.Tags {
		if t.Tag == tag && t.Merged.Count > 0 {
			return t, true
		}
	}
	return results.TagSummary{}, false
}

// readLevelOf is the read level a claim on throughput is judged at: the read ladder's level
// at poolConns connections (the quick form's only one), when the run has it.
func readLevelOf(run *results.Run) (string, bool) {
	want := ReadLevel(poolConns)
	for _, lv := range run.Scenario.Levels {
		if lv.Name == want {
			return want, true
		}
	}
	return "", false
}

// aboutTheSame: "match", the ratio's 90 % interval within ±10 % (scenario.Alike, an
// equivalence test).
var aboutTheSame = scenario.Tolerance{Want: 1, Frac: 0.10,
	Words:  "\"match\" (chrisgleissner/loom-webflux-benchmarks)",
	Source: "arena's choice: its reading of the source's word; repeats of one cell land up to ~10 % apart"}

// claimVirtualMatchesReactive: (a) virtual threads with JDBC match WebFlux with R2DBC on
// database reads, as chrisgleissner/loom-webflux-benchmarks reports for its PostgreSQL
// scenario (issue 23): spring-mvc-virtual against spring-webflux at 64 connections, under the
// CPU-headroom condition sleep (c) uses (scenario.AtHeadroom): at saturation each server's
// throughput is its core's, untested here.
func claimVirtualMatchesReactive(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "a", Text: "Virtual threads with JDBC match WebFlux with R2DBC on database reads (chrisgleissner/loom-webflux-benchmarks, its PostgreSQL scenario)."}
	level, ok := readLevelOf(run)
	v, okV := idx.Tag("spring-mvc-virtual", level, TagDB)
	w, okW := idx.Tag("spring-webflux", level, TagDB)
	if !ok || !okV || !okW {
		c.Verdict, c.Why = results.ClaimUntested, fmt.Sprintf("needs spring-mvc-virtual and spring-webflux at level %s, each answering correctly", ReadLevel(poolConns))
		return c
	}
	a, b := v.RPS.Median, w.RPS.Median
	if a <= 0 || b <= 0 {
		c.Verdict, c.Why = results.ClaimUntested, "no throughput measured"
		return c
	}
	verdict, why := scenario.Alike(scenario.Samples(run, "spring-mvc-virtual", level, TagDB, "requests/s"), scenario.Samples(run, "spring-webflux", level, TagDB, "requests/s"), aboutTheSame)
	c = scenario.Combine(c, scenario.Part{Verdict: verdict, Why: fmt.Sprintf("spring-mvc-virtual %.0f, spring-webflux %.0f requests/s at %s: %s", a, b, level, why)})
	c, _ = scenario.AtHeadroom(c, run, idx, level, "spring-mvc-virtual", "spring-webflux")
	return c
}

// claimPlatformOutServes: (b) plain Spring Web on platform threads serves more database
// reads than the same on virtual threads, and than WebFlux (gavlyukovskiy/benchmark-spring-
// application, BENCHLOG.md 2023-12-01, db-read-test: ~39,600 iterations/s against ~10,000
// and ~9,200): two orders, each beyond the noise (a tie not shown), under the CPU-headroom
// condition of (a).
func claimPlatformOutServes(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "b", Text: "Plain Spring Web on platform threads serves more database reads than on virtual threads and than WebFlux (gavlyukovskiy/benchmark-spring-application, BENCHLOG.md 2023-12-01, db-read-test: ~39,600 against ~10,000 and ~9,200 iterations/s)."}
	level, ok := readLevelOf(run)
	if !ok {
		c.Verdict, c.Why = results.ClaimUntested, "needs level "+ReadLevel(poolConns)
		return c
	}
	var parts []scenario.Part
	for _, other := range []string{"spring-mvc-virtual", "spring-webflux"} {
		_, okA := idx.Tag("spring-mvc", level, TagDB)
		_, okB := idx.Tag(other, level, TagDB)
		if !okA || !okB {
			parts = append(parts, scenario.Part{Verdict: results.ClaimUntested, Why: fmt.Sprintf("needs spring-mvc and %s at level %s, each answering correctly", other, level)})
			continue
		}
		parts = append(parts, scenario.OrderPart(scenario.Samples(run, "spring-mvc", level, TagDB, "requests/s"), scenario.Samples(run, other, level, TagDB, "requests/s"),
			scenario.Above, fmt.Sprintf("requests/s at %s, spring-mvc above %s", level, other)))
	}
	c = scenario.Combine(c, parts...)
	c, _ = scenario.AtHeadroom(c, run, idx, level, present(idx, level, "spring-mvc", "spring-mvc-virtual", "spring-webflux")...)
	return c
}

// nonBlocking are the models that wait without holding a thread of a bounded pool.
var nonBlocking = []string{"reactive", "event-loop", "event-loop-bus", "event-loop-workers", "event-loop-processes", "virtual-threads", "goroutines", "coroutines", "actors"}

// reactiveModels are the models that use a non-blocking driver on their loop.
var reactiveModels = []string{"reactive", "event-loop", "event-loop-bus", "event-loop-processes"}

// claimPoolStarvesFastQueries: (c) a reactive stack does not protect fast queries from a
// pool held by slow ones: on every contender of a reactive or event-loop model, /db/{id}'s
// p99 with the pool held is at least StarvedBy× its unloaded p99. arena's own claim, stated
// before it was measured (issue 23): a query waits for a pooled connection in any model.
func claimPoolStarvesFastQueries(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "c", Text: fmt.Sprintf("A reactive stack does not protect fast queries from a pool held by slow ones: /db/{id}'s p99 is at least %.0f× its unloaded p99 on every reactive and event-loop contender (arena's own claim, issue 23).", StarvedBy)}
	var parts []scenario.Part
	for _, ct := range run.Contenders {
		if !slices.Contains(reactiveModels, ct.Model) {
			continue
		}
		held, okH := idx.Tag(ct.Name, LevelHeld, TagDB)
		idle, okI := idx.Tag(ct.Name, LevelIdle, TagDB)
		if !okH || !okI || idle.Merged.P99 <= 0 {
			parts = append(parts, scenario.Part{Verdict: results.ClaimUntested, Why: ct.Name + ": needs levels idle and held, each answering correctly"})
			continue
		}
		r := held.Merged.P99 / idle.Merged.P99
		why := fmt.Sprintf("%s: /db/{id} p99 %s held, %s unloaded: %.1f×", ct.Name, results.FormatMs(held.Merged.P99), results.FormatMs(idle.Merged.P99), r)
		v := results.ClaimFails
		if r >= StarvedBy {
			v = results.ClaimHolds
		}
		parts = append(parts, scenario.Part{Verdict: v, Why: why})
	}
	if len(parts) == 0 {
		c.Verdict, c.Why = results.ClaimUntested, "no reactive or event-loop contender in this run"
		return c
	}
	return scenario.Combine(c, parts...)
}

// claimNonBlockingKeepsInstant: (d) /instant and the probes stay fast on every non-blocking
// model while the pool is exhausted: isolated at level held. arena's own claim (issue 23).
func claimNonBlockingKeepsInstant(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "d", Text: "/instant and the probes stay fast (p99 < 100 ms) on every non-blocking model while slow queries hold the pool (arena's own claim, issue 23)."}
	var parts []scenario.Part
	for _, ct := range run.Contenders {
		if !slices.Contains(nonBlocking, ct.Model) {
			continue
		}
		cs, ok := idx[ct.Name][LevelHeld]
		if !ok {
			continue
		}
		v := judgeIsolation(cs, idx[ct.Name][LevelIdle])
		switch v.Verdict {
		case Isolated.Text:
			parts = append(parts, scenario.Part{Verdict: results.ClaimHolds, Why: ct.Name + ": " + v.Why})
		case Starved.Text:
			parts = append(parts, scenario.Part{Verdict: results.ClaimFails, Why: ct.Name + ": " + v.Why})
		default:
			parts = append(parts, scenario.Part{Verdict: results.ClaimUntested, Why: ct.Name + ": " + v.Verdict + ", " + v.Why})
		}
	}
	if len(parts) == 0 {
		c.Verdict, c.Why = results.ClaimUntested, "no non-blocking contender ran level held"
		return c
	}
	return scenario.Combine(c, parts...)
}

// present are those of names measured at level, for the conditions of a claim on them.
func present(idx scenario.Summaries, level string, names ...string) []string {
	var out []string
	for _, n := range names {
		if _, ok := idx[n][level]; ok {
			out = append(out, n)
		}
	}
	return out
}
