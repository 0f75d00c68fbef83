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
// repeats merged), "starved" otherwise, and the study's two claims.
func (Scenario) Judge(run *results.Run) ([]results.Verdict, []results.Claim) {
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
			[]string{"spring-mvc-async", "spring-mvc-async-all", "spring-webflux"}, byName),
		claimAllIsolated("arena-1", "Beyond the study: Tomcat on virtual threads stays isolated too, with blocking code.",
			[]string{"spring-mvc-virtual"}, byName),
	}
	// The study's claims are about its load: 11 request threads. Another preset tests
	// something else, so it leaves them untested rather than judged at the wrong load.
	if run.Scenario.Preset != "seed" {
		for i := range claims[:2] {
			claims[i].Verdict = results.ClaimUntested
			claims[i].Why = fmt.Sprintf("the study's load is preset seed (%d request threads); this run is preset %s", seedThreads, run.Scenario.Preset)
		}
	}
	return verdicts, claims
}

func judge(cs results.CellSummary) results.Verdict {
	for _, o := range cs.Outcomes {
		if o != results.OutcomeOK {
			return scenario.Outcome(o).Verdict(cs.Contender, cs.Level, "a repeat ended "+o+": see Outcomes")
		}
	}
	if w, why, unjudged := scenario.Unjudged(cs); unjudged {
		return w.Verdict(cs.Contender, cs.Level, why)
	}
	var slow, fine []string
	for _, t := range cs.Tags {
		if !slices.Contains(fastTags, t.Tag) {
			continue
		}
		desc := fmt.Sprintf("%s p99 %s", t.Tag, results.FormatMs(t.Merged.P99))
		if t.Merged.Count == 0 || t.Merged.P99 >= ms(IsolatedBelow) || t.Errors > 0 {
			if t.Errors > 0 {
				desc += fmt.Sprintf(" (%d errors)", t.Errors)
			}
			slow = append(slow, desc)
		} else {
			fine = append(fine, desc)
		}
	}
	if len(slow) > 0 {
		return Starved.Verdict(cs.Contender, cs.Level, strings.Join(slow, ", ")+fmt.Sprintf(" (isolated needs p99 < %s)", IsolatedBelow))
	}
	return Isolated.Verdict(cs.Contender, cs.Level, strings.Join(fine, ", "))
}

// claimSyncDegrades: (a) the synchronous servlet degrades every endpoint to seconds, the
// probes included: the study's medians were 56 s for /instant and 48 s for the probes, so
// every fast endpoint's median, the fastest's too, must reach a second.
func claimSyncDegrades(byName map[string]results.Verdict, fastest map[string]float64) results.Claim {
	c := results.Claim{ID: "a", Text: "The synchronous servlet (spring-mvc, blocking on Tomcat's request threads) degrades every endpoint to seconds, the probes included."}
	v, ok := byName["spring-mvc"]
	switch {
	case !ok:
		c.Verdict, c.Why = results.ClaimUntested, "spring-mvc was not in this run"
	case v.Verdict == results.OutcomeUnresponsive:
		// readiness unanswered for longer than the load itself waits: every endpoint, the
		// probes included, degraded past seconds
		c.Verdict, c.Why = results.ClaimHolds, "spring-mvc stopped answering: "+v.Why
	case v.Verdict != Starved.Text && v.Verdict != Isolated.Text:
		c.Verdict, c.Why = results.ClaimUntested, "spring-mvc's cell ended "+v.Verdict
	case fastest["spring-mvc"] >= 1000:
		c.Verdict, c.Why = results.ClaimHolds, fmt.Sprintf("median of its fastest fast endpoint %s; %s", results.FormatMs(fastest["spring-mvc"]), v.Why)
	case v.Verdict == Starved.Text:
		c.Verdict, c.Why = results.ClaimPartly, fmt.Sprintf("starved at the tail (%s) but not every median reaches a second (the fastest: %s)", v.Why, results.FormatMs(fastest["spring-mvc"]))
	default:
		c.Verdict, c.Why = results.ClaimFails, "spring-mvc stayed isolated: "+v.Why
	}
	return c
}

func claimAllIsolated(id, text string, names []string, byName map[string]results.Verdict) results.Claim {
	c := results.Claim{ID: id, Text: text}
	var isolated, starved, missing []string
	for _, n := range names {
		v, ok := byName[n]
		switch {
		case !ok:
			missing = append(missing, n)
		case v.Verdict == Isolated.Text:
			isolated = append(isolated, n)
		case v.Verdict != Starved.Text && v.Verdict != results.OutcomeCrashed && v.Verdict != results.OutcomeUnresponsive:
			missing = append(missing, n+" ("+v.Verdict+")") // never measured, or client-bound: says nothing either way
		default:
			starved = append(starved, fmt.Sprintf("%s %s (%s)", n, v.Verdict, v.Why))
		}
	}
	switch {
	case len(starved) > 0:
		c.Verdict, c.Why = results.ClaimFails, strings.Join(starved, "; ")
	case len(isolated) == 0:
		c.Verdict, c.Why = results.ClaimUntested, "none of "+strings.Join(names, ", ")+" was in this run"
	case len(missing) > 0:
		c.Verdict, c.Why = results.ClaimPartly, fmt.Sprintf("isolated: %s; not run: %s", strings.Join(isolated, ", "), strings.Join(missing, ", "))
	default:
		c.Verdict, c.Why = results.ClaimHolds, "isolated: "+strings.Join(isolated, ", ")
	}
	return c
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
