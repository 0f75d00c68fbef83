// Package isolation is study 004: does a slow endpoint starve the fast ones? /instant and
// the two health probes run at a constant rate beside /delayed (10 s each); a server whose
// request threads all wait in /delayed cannot answer the others.
package isolation

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// Tags of the four streams, as the study's k6 script named them.
const (
	TagInstant   = "instant"
	TagDelayed   = "delayed"
	TagLiveness  = "liveness"
	TagReadiness = "readiness"
)

// IsolatedBelow is the p99 under which /instant and both probes count as unaffected.
const IsolatedBelow = 100 * time.Millisecond

// The pool study 004 starved (WORKER_THREADS=11), and Tomcat's default the other preset
// must overrun.
const (
	seedThreads    = 11
	defaultThreads = 200
	delayedFor     = 10 * time.Second
)

// Scenario is the isolation study.
type Scenario struct{}

func (Scenario) Name() string  { return "isolation" }
func (Scenario) Title() string { return "Isolation: does a slow endpoint starve the fast ones?" }
func (Scenario) Study() string {
	return "study 004 (seeds/004): Spring servlet sync, async, async-all and WebFlux under /delayed (10 s) at 10/s"
}
func (Scenario) Presets() []string { return []string{"seed", "default"} }

// Plan: the study's rates and its 60 s with k6's 60 s request timeout. The quick form keeps
// the rates and shortens both to 20 s: a starved server is still starved well past 100 ms.
func (s Scenario) Plan(o scenario.Options) (scenario.Plan, error) {
	r, err := o.Resolve(s)
	if err != nil {
		return scenario.Plan{}, err
	}
	preset := r.Preset
	duration, timeout := 60*time.Second, 60*time.Second
	if r.Quick {
		duration, timeout = 20*time.Second, 20*time.Second
	}
	duration, timeout = r.Duration(duration), r.Timeout(timeout)
	plan := scenario.Plan{Preset: preset, Headline: []results.Headline{
		{Figure: "p99", Tag: TagInstant, Per: results.PerFirst, Label: "/instant p99", Unit: "ms"},
	}}
	var env map[string]string
	delayedRate := 10
	switch preset {
	case "seed":
		env = map[string]string{"WORKER_THREADS": fmt.Sprint(seedThreads)}
		plan.Notes = append(plan.Notes, fmt.Sprintf("WORKER_THREADS=%d for every contender that honours it, as the study's services were configured.", seedThreads))
	case "default":
		// Each stack keeps its own pool size; /delayed must hold more requests than
		// Tomcat's 200 threads: 10 s × 25/s = 250 in flight.
		delayedRate = int(defaultThreads/delayedFor.Seconds()) + 5
		plan.Notes = append(plan.Notes, fmt.Sprintf("Each stack's default pool; /delayed at %d/s so that %d requests wait at once, more than Tomcat's %d threads.", delayedRate, delayedRate*int(delayedFor.Seconds()), defaultThreads))
	}
	if duration != 60*time.Second || timeout != 60*time.Second {
		plan.Notes = append(plan.Notes, fmt.Sprintf("Load for %s (the study: 60 s), request timeout %s (the study: 60 s).", duration, timeout))
	}
	// A short warm-up of the fast paths, so that a cold JVM's first requests are not read as
	// starvation: the question is whether /delayed takes the threads, not how fast JIT is.
	warm := func(path string, n int64) load.Load {
		return load.ClosedLoop{Tag: "warmup", Request: load.Request{Path: path}, Connections: 4, Requests: n, Duration: 10 * time.Second, Timeout: 5 * time.Second}
	}
	plan.Notes = append(plan.Notes, "Before the load, 2,000 requests to /instant and 200 to each probe (4 connections) warm the fast paths; the study measured from a cold start.")
	plan.Levels = []scenario.Level{{
		Name:   preset,
		Env:    env,
		Warmup: []load.Load{warm("/instant", 2000), warm("/actuator/health/liveness", 200), warm("/actuator/health/readiness", 200)},
		Load: load.OpenLoop{
			Streams: []load.Stream{
				{Tag: TagInstant, Request: load.Request{Path: "/instant"}, Pacer: load.PerSecond(10)},
				{Tag: TagDelayed, Request: load.Request{Path: "/delayed"}, Pacer: load.PerSecond(delayedRate)},
				{Tag: TagLiveness, Request: load.Request{Path: "/actuator/health/liveness"}, Pacer: load.PerSecond(1)},
				{Tag: TagReadiness, Request: load.Request{Path: "/actuator/health/readiness"}, Pacer: load.PerSecond(1)},
			},
			Duration:  duration,
			Timeout:   timeout,
			LateAfter: 10 * time.Millisecond,
			Drain:     min(timeout, delayedFor+2*time.Second),
		},
	}}
	return plan, nil
}

// The verdicts: the fast endpoints kept their p99 under IsolatedBelow, or not.
var (
	Isolated = scenario.Word{Text: "isolated", Tone: results.Good}
	Starved  = scenario.Word{Text: "starved", Tone: results.Bad}
)

// fastTags must stay fast for a contender to count as isolated.
var fastTags = []string{TagInstant, TagLiveness, TagReadiness}

// Judge: "isolated" when /instant and both probes keep p99 < 100 ms (response time, all
// repeats merged), "starved" otherwise, "failing (errors)" when they answer wrongly, and the
// study's claims.
func (Scenario) Judge(run *results.Run) ([]results.Verdict, []results.Claim) {
	idx := scenario.Index(run)
	var verdicts []results.Verdict
	byName := map[string]results.Verdict{}
	fastest := map[string]float64{} // the fastest median of /instant and the probes, per contender
	for _, cs := range run.Summary {
		v := judge(cs)
		verdicts = append(verdicts, v)
		byName[cs.Contender] = v
		for _, t := range cs.Tags {
			if slices.Contains(fastTags, t.Tag) && t.Merged.Count > 0 {
				if f, seen := fastest[cs.Contender]; !seen || t.Merged.P50 < f {
					fastest[cs.Contender] = t.Merged.P50
				}
			}
		}
	}
	claims := []results.Claim{
		claimSyncDegrades(byName, fastest),
		claimAllIsolated("b", "Both async servlets and WebFlux stay isolated: /instant and the probes answer in milliseconds.",
			asyncStacks, byName),
		claimDelayedCompounds(run, idx, byName),
		claimDelayedStays(run, idx, byName),
		claimAllIsolated("arena-1", "Beyond the study: Tomcat on virtual threads stays isolated too, with blocking code.",
			[]string{"spring-mvc-virtual"}, byName),
		claimEveryModel(run, byName),
	}
	// The study's claims are about its load: 11 request threads. Another preset tests
	// something else, so it leaves them untested rather than judged at the wrong load.
	if run.Scenario.Preset != "seed" {
		for _, i := range []int{0, 1, 2, 3, 5} {
			claims[i].Verdict = results.ClaimUntested
			claims[i].Why = fmt.Sprintf("the study's load is preset seed (%d request threads); this run is preset %s", seedThreads, run.Scenario.Preset)
		}
	}
	return verdicts, claims
}

// claimEveryModel: (arena-2) the study's finding asked of every ecosystem, by each contender's
// model (contenders/README.md, "How each model waits and calls"): a thread-per-request server
// blocks a pool thread for the whole of /delayed, so at the study's 11 threads it starves, in
// Java, Python or Rust alike; every other model leaves the wait without a pool thread (or, as
// Undertow does, serves /instant on its IO loop) and stays isolated. Each contender is a part;
// a thread-per-request one that does not honour WORKER_THREADS ran another pool, and is
// untested. Judged only over more than one runtime: the study's own Spring stacks are one
// ecosystem, which claims (a), (b) and arena-1 already judge.
func claimEveryModel(run *results.Run, byName map[string]results.Verdict) results.Claim {
	c := results.Claim{ID: "arena-2", Text: fmt.Sprintf("Beyond the study, in every ecosystem: each thread-per-request contender (Tomcat, Jetty, Flask on gunicorn's threads, Rust's request threads), its pool at the study's %d threads, starves; each whose model does not hold a pool thread for the whole wait (async servlets, reactive, event loops, virtual threads, goroutines, coroutines, actors) stays isolated.", seedThreads)}
	var parts []scenario.Part
	runtimes := map[string]bool{}
	for _, ct := range run.Contenders {
		v, ok := byName[ct.Name]
		if !ok {
			continue
		}
		runtimes[ct.Runtime] = true
		parts = append(parts, modelPart(ct, v))
	}
	if len(runtimes) < 2 {
		c.Verdict, c.Why = results.ClaimUntested, fmt.Sprintf("needs contenders of more than one runtime; this run has %d", len(runtimes))
		return c
	}
	return scenario.Combine(c, parts...)
}

// modelPart is one contender's part of claim arena-2: starved (or silent) if its model blocks
// a pool thread per request, isolated otherwise; figures that are no verdict either way
// (client-bound, shared CPU, a crash of a blocking server) are untested.
func modelPart(ct results.Contender, v results.Verdict) scenario.Part {
	who := fmt.Sprintf("%s (%s, %s)", ct.Name, ct.Model, ct.Runtime)
	said := fmt.Sprintf("%s %s (%s)", who, v.Verdict, v.Why)
	if ct.Model == "thread-per-request" {
		switch {
		case !slices.Contains(ct.Knobs, "WORKER_THREADS"):
			return scenario.Part{Verdict: results.ClaimUntested, Why: who + " does not honour WORKER_THREADS: its pool was not the study's"}
		case v.Verdict == Starved.Text || v.Verdict == results.OutcomeUnresponsive:
			return scenario.Part{Verdict: results.ClaimHolds, Why: said}
		case v.Verdict == Isolated.Text:
			return scenario.Part{Verdict: results.ClaimFails, Why: said + ", though its model blocks a pool thread per request"}
		}
		return scenario.Part{Verdict: results.ClaimUntested, Why: who + " " + v.Verdict}
	}
	switch {
	case v.Verdict == Isolated.Text:
		return scenario.Part{Verdict: results.ClaimHolds, Why: said}
	case notIsolated(v.Verdict):
		return scenario.Part{Verdict: results.ClaimFails, Why: said}
	}
	return scenario.Part{Verdict: results.ClaimUntested, Why: who + " " + v.Verdict}
}

// asyncStacks are the study's three services that release the request thread.
var asyncStacks = []string{"spring-mvc-async", "spring-mvc-async-all", "spring-webflux"}

func judge(cs results.CellSummary) results.Verdict {
	for _, o := range cs.Outcomes {
		if o != results.OutcomeOK {
			return scenario.Outcome(o).Verdict(cs.Contender, cs.Level, "a repeat ended "+o+": see Outcomes")
		}
	}
	if w, why, unjudged := scenario.Unjudged(cs); unjudged {
		return w.Verdict(cs.Contender, cs.Level, why)
	}
	slow, fine := scenario.FastEndpoints(cs, fastTags, IsolatedBelow)
	if len(slow) > 0 {
		return Starved.Verdict(cs.Contender, cs.Level, strings.Join(slow, ", ")+fmt.Sprintf(" (isolated needs p99 < %s)", IsolatedBelow))
	}
	return Isolated.Verdict(cs.Contender, cs.Level, strings.Join(fine, ", "))
}

// claimSyncDegrades: (a) the synchronous servlet degrades every endpoint to seconds, the
// probes included: the study's medians were 56 s for /instant and 48 s for the probes
// (seeds/004 lines 25-27). Two parts: starved at all, and every fast endpoint's median, the
// fastest's too, at a second or more.
func claimSyncDegrades(byName map[string]results.Verdict, fastest map[string]float64) results.Claim {
	c := results.Claim{ID: "a", Text: "The synchronous servlet (spring-mvc, blocking on Tomcat's request threads) degrades every endpoint to seconds, the probes included."}
	v, ok := byName["spring-mvc"]
	switch {
	case !ok:
		c.Verdict, c.Why = results.ClaimUntested, "spring-mvc was not in this run"
		return c
	case v.Verdict == results.OutcomeUnresponsive:
		// readiness unanswered for longer than the load itself waits: every endpoint, the
		// probes included, degraded past seconds
		return scenario.Combine(c, scenario.Part{Verdict: results.ClaimHolds, Why: "spring-mvc stopped answering: " + v.Why})
	case v.Verdict != Starved.Text && v.Verdict != Isolated.Text:
		c.Verdict, c.Why = results.ClaimUntested, "spring-mvc's cell ended "+v.Verdict+": "+v.Why
		return c
	}
	starved := scenario.Part{Verdict: results.ClaimHolds, Why: "starved: " + v.Why}
	if v.Verdict == Isolated.Text {
		starved = scenario.Part{Verdict: results.ClaimFails, Why: "spring-mvc stayed isolated: " + v.Why}
	}
	seconds := scenario.Part{Verdict: results.ClaimHolds, Why: "median of its fastest fast endpoint " + results.FormatMs(fastest["spring-mvc"])}
	if fastest["spring-mvc"] < 1000 {
		seconds = scenario.Part{Verdict: results.ClaimFails, Why: "not every median reaches a second (the fastest: " + results.FormatMs(fastest["spring-mvc"]) + ")"}
	}
	return scenario.Combine(c, seconds, starved)
}

// claimAllIsolated: every one of names stays isolated, each a part of its own: a contender
// not run (or whose figures are no verdict on it) is an untested part, never a mark against.
func claimAllIsolated(id, text string, names []string, byName map[string]results.Verdict) results.Claim {
	c := results.Claim{ID: id, Text: text}
	var parts []scenario.Part
	for _, n := range names {
		v, ok := byName[n]
		switch {
		case !ok:
			parts = append(parts, scenario.Part{Verdict: results.ClaimUntested, Why: n + " not run"})
		case v.Verdict == Isolated.Text:
			parts = append(parts, scenario.Part{Verdict: results.ClaimHolds, Why: n + " isolated"})
		case notIsolated(v.Verdict):
			parts = append(parts, scenario.Part{Verdict: results.ClaimFails, Why: fmt.Sprintf("%s %s (%s)", n, v.Verdict, v.Why)})
		default: // never measured, client-bound, shared CPU: says nothing either way
			parts = append(parts, scenario.Part{Verdict: results.ClaimUntested, Why: n + " " + v.Verdict})
		}
	}
	return scenario.Combine(c, parts...)
}

// notIsolated says whether a contender's verdict is evidence that its fast endpoints were
// not served: starved, answered wrongly (a fast 503 is no answer, seeds/004 line 13 asks for
// /instant "serviced successfully"), or the server died or fell silent.
func notIsolated(verdict string) bool {
	return slices.Contains([]string{Starved.Text, scenario.Failing.Text, results.OutcomeCrashed, results.OutcomeUnresponsive}, verdict)
}

// CompoundsPast is how long the sync servlet's /delayed waits at its median for the study's
// "beyond 50 seconds" (seeds/004 line 30; its median was 59.99 s, line 24).
const CompoundsPast = 50 * time.Second

// loadConditions: a wait past 50 s can be seen only in a load that lasts that long, each
// request allowed that long: the study's k6 ran 60 s with its 60 s timeout (max=1m0s, seeds/004
// lines 22-27).
var loadConditions = []scenario.Condition{
	{Name: "seconds of load", Needs: CompoundsPast.Seconds(), Source: "seeds/004 line 30 (latencies beyond 50 s; the study's k6 ran 60 s, lines 22-27)",
		Of: func(r *results.Run) float64 { return r.Scenario.Duration }},
	{Name: "seconds of request timeout", Needs: CompoundsPast.Seconds(), Source: "seeds/004 line 30 (latencies beyond 50 s; k6's 60 s timeout, max=1m0s, line 24)",
		Of: func(r *results.Run) float64 { return r.Scenario.Timeout }},
}

// claimDelayedCompounds: (c) under the sync servlet /delayed's wait compounds past 50 s
// (seeds/004 lines 24, 30): its median, timeouts counted at the time they waited.
func claimDelayedCompounds(run *results.Run, idx scenario.Summaries, byName map[string]results.Verdict) results.Claim {
	c := results.Claim{ID: "c", Text: "Under the synchronous servlet, /delayed compounds: its requests wait beyond 50 s (seeds/004 lines 24, 30)."}
	part := delayedPart("spring-mvc", idx, byName, func(t results.TagSummary) scenario.Part {
		why := fmt.Sprintf("spring-mvc /delayed median %s (the study: 59.99 s)", results.FormatMs(t.Merged.P50))
		if t.Merged.P50 >= ms(CompoundsPast) {
			return scenario.Part{Verdict: results.ClaimHolds, Why: why}
		}
		return scenario.Part{Verdict: results.ClaimFails, Why: why + ", not beyond " + CompoundsPast.String()}
	})
	c, _ = scenario.AtConditions(scenario.Combine(c, part), run, loadConditions...)
	return c
}

// stays10s: the async services' /delayed stays at its 10 s: "a consistent performance"
// (seeds/004 line 43), p95 10.01 s and max 10.08 s (line 37); its p99 within 10 %.
var stays10s = scenario.Tolerance{Want: delayedFor.Seconds(), Frac: 0.10,
	Words:  `"even the requests to /delayed have had a consistent performance" (seeds/004 line 43; p95 10.01 s, max 10.08 s, line 37)`,
	Source: "arena's choice: the study's own spread is under 1 % (line 37); ±10 % allows a p99 beside its p95"}

// waitConditions: a request that waits 10 s can be seen to, within stays10s, only when each
// request is allowed more than that (the study's k6 allowed 60 s, seeds/004 line 24); a
// shorter timeout cuts every /delayed at the timeout, which says nothing of the server.
var waitConditions = []scenario.Condition{
	{Name: "seconds of request timeout", Needs: delayedFor.Seconds() * (1 + stays10s.Frac), Source: "seeds/004 line 37 (/delayed's 10 s; k6's 60 s timeout, line 24)",
		Of: func(r *results.Run) float64 { return r.Scenario.Timeout }},
}

// claimDelayedStays: (d) under the async servlets and WebFlux /delayed stays at 10 s
// (seeds/004 lines 37-43, 49, 61), each a part of its own, by an equivalence test on its
// repeats' p99 (scenario.Near: 5 repeats give the 90 % interval, 3 do not).
func claimDelayedStays(run *results.Run, idx scenario.Summaries, byName map[string]results.Verdict) results.Claim {
	c := results.Claim{ID: "d", Text: "Under both async servlets and WebFlux, /delayed stays at its 10 s (seeds/004 lines 37, 43, 49, 61)."}
	var parts []scenario.Part
	for _, n := range asyncStacks {
		parts = append(parts, delayedPart(n, idx, byName, func(results.TagSummary) scenario.Part {
			// "stays at 10 s" is a sameness: the p99 of each repeat, judged on its median's
			// interval (scenario.Near), not on one merged figure
			var secs []float64
			for _, p99 := range scenario.Samples(run, n, "seed", TagDelayed, "p99") {
				secs = append(secs, p99/1000)
			}
			verdict, why := scenario.Near(secs, stays10s, "s")
			return scenario.Part{Verdict: verdict, Why: n + " /delayed p99: " + why}
		}))
	}
	c, _ = scenario.AtConditions(scenario.Combine(c, parts...), run, waitConditions...)
	return c
}

// delayedPart judges name's /delayed figures with judge when they can be judged; else it is
// a failing part when the server failed (errors, a crash, silence), untested otherwise.
func delayedPart(name string, idx scenario.Summaries, byName map[string]results.Verdict, judge func(results.TagSummary) scenario.Part) scenario.Part {
	if t, ok := idx.Tag(name, "seed", TagDelayed); ok {
		return judge(t)
	}
	v, ran := byName[name]
	switch {
	case !ran:
		return scenario.Part{Verdict: results.ClaimUntested, Why: name + " not run"}
	case v.Verdict != Starved.Text && notIsolated(v.Verdict):
		return scenario.Part{Verdict: results.ClaimFails, Why: fmt.Sprintf("%s %s (%s)", name, v.Verdict, v.Why)}
	}
	return scenario.Part{Verdict: results.ClaimUntested, Why: name + " " + v.Verdict}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
