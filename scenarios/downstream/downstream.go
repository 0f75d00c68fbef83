// Package downstream is study 002: WebFlux (annotated and functional) against Vert.x, each
// serving /data/{id} by fetching JSON from a downstream service, decoding it into a typed
// record and encoding it back.
package downstream

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// Level names: the study's form (the contender is its own downstream) and the lab's.
const (
	LevelSelf = "self"
	LevelLab  = "lab"
	tag       = "data"
	path      = "/data/1"
)

// The study's load: 100 connections, 30,000 requests of warm-up, 10,000 measured.
const (
	connections   = 100
	seedWarmup    = 30000
	seedRequests  = 10000
	quickWarmup   = 5000
	quickRequests = 5000
)

// Scenario is the downstream study.
type Scenario struct{}

func (Scenario) Name() string { return "downstream" }
func (Scenario) Title() string {
	return "Downstream calls: fetch, decode, encode: who serves the most?"
}
func (Scenario) Study() string {
	return "study 002 (seeds/002): Spring WebFlux annotated and functional vs Vert.x, /data/{id} over a downstream JSON service"
}

// Presets: seed (the study's ab: a count of requests after a count of warm-up) and steady
// (warm-up until throughput settles, then a timed measurement).
func (Scenario) Presets() []string { return []string{"seed", scenario.PresetSteady} }

// Plan: both forms (self and lab), each a warm-up then the measured closed loop.
func (s Scenario) Plan(o scenario.Options) (scenario.Plan, error) {
	r, err := o.Resolve(s)
	if err != nil {
		return scenario.Plan{}, err
	}
	timeout := r.Timeout(10 * time.Second)
	// Planned time: the count at 1,000 requests/s, below the slowest stack's rate (WebFlux,
	// its own downstream, on one core: about 1,300).
	closed := func(t string, n int64, d time.Duration) load.ClosedLoop {
		return load.ClosedLoop{Tag: t, Request: load.Request{Path: path}, Connections: connections, Requests: n, Duration: d, Timeout: timeout, Expect: time.Duration(n) * time.Millisecond}
	}
	plan := scenario.Plan{Preset: r.Preset, Headline: []results.Headline{
		{Figure: "rps", Tag: tag, Per: results.PerLevel, Label: "requests/s", Unit: "requests/s"},
	}}
	// Each level's load, and what runs before it.
	var measure func() (load.Load, []load.Load)
	if r.Preset == scenario.PresetSteady {
		plan.Notes = append(plan.Notes, fmt.Sprintf("%d connections on /data/1.", connections), r.SteadyNote())
		measure = func() (load.Load, []load.Load) { return r.Steady(closed(tag, 0, 0)), nil }
	} else {
		warm, requests := int64(seedWarmup), int64(seedRequests)
		if r.Quick {
			warm, requests = quickWarmup, quickRequests
		}
		bound := r.Duration(2 * time.Minute)
		plan.Notes = append(plan.Notes, fmt.Sprintf("%d connections, %d requests of warm-up, then %d measured, as the study (at most %s a level).", connections, warm, requests, bound))
		measure = func() (load.Load, []load.Load) {
			return closed(tag, requests, bound), []load.Load{closed("warmup", warm, bound)}
		}
	}
	plan.Notes = append(plan.Notes,
		"Level self: the contender is its own downstream (DOWNSTREAM_URL unset), as the study ran it, so one core serves both sides.",
		"Level lab: the lab's own downstream serves the JSON from the client's CPUs, so the contender's core does only its own side.")
	for _, name := range []string{LevelSelf, LevelLab} {
		lv := scenario.Level{Name: name}
		lv.Load, lv.Warmup = measure()
		if name == LevelLab {
			lv.Downstream = &scenario.Downstream{}
		}
		plan.Levels = append(plan.Levels, lv)
	}
	return plan, nil
}

// Judge ranks contenders by throughput at each level, and judges the study's claims.
func (Scenario) Judge(run *results.Run) ([]results.Verdict, []results.Claim) {
	idx := scenario.Index(run)
	var verdicts []results.Verdict
	for _, level := range []string{LevelSelf, LevelLab} {
		type entry struct {
			name string
			rps  float64
			p99  float64
		}
		var entries []entry
		var unranked []results.Verdict // client-bound or faulty: no place beside honest figures
		for _, c := range run.Contenders {
			if t, ok := idx.Tag(c.Name, level, tag); ok {
				entries = append(entries, entry{c.Name, t.RPS.Median, t.Merged.P99})
			} else if w, why, unjudged := scenario.Unjudged(idx[c.Name][level]); unjudged {
				unranked = append(unranked, w.Verdict(c.Name, level, why+": not ranked"))
			}
		}
		sort.SliceStable(entries, func(i, j int) bool { return entries[i].rps > entries[j].rps }) // ties keep run order
		for i, e := range entries {
			why := fmt.Sprintf("%.0f requests/s, p99 %s", e.rps, results.FormatMs(e.p99))
			share := e.rps / entries[0].rps
			var w scenario.Word
			switch {
			case i == 0:
				w = scenario.Word{Text: "fastest", Tone: results.Good}
			case share >= 0.9:
				w = scenario.Word{Text: "within 10 %", Tone: results.Good}
			default:
				w = scenario.Word{Text: fmt.Sprintf("%.0f %% of fastest", share*100), Tone: results.Mixed}
			}
			if i > 0 {
				why += fmt.Sprintf(" (%s: %.0f)", entries[0].name, entries[0].rps)
			}
			if steady := scenario.SteadyWhy(idx, e.name, level); steady != "" {
				why += "; " + steady
			}
			verdicts = append(verdicts, w.Verdict(e.name, level, why))
		}
		verdicts = append(verdicts, unranked...)
	}
	claims := []results.Claim{claimVertxFaster(idx), claimAnnotatedIsFunctional(idx)}
	if run.Scenario.Preset == scenario.PresetSteady {
		for i, names := range [][]string{{"vertx", "spring-webflux"}, {"spring-webflux", "spring-webflux-fn"}} {
			claims[i] = inSteadyState(claims[i], idx, names)
		}
	}
	return verdicts, claims
}

// inSteadyState says that a claim was judged in the steady state, and how each contender's
// warm-up went.
func inSteadyState(c results.Claim, idx scenario.Summaries, names []string) results.Claim {
	if c.Verdict == results.ClaimUntested {
		return c
	}
	var how []string
	for _, n := range names {
		if w := scenario.SteadyWhy(idx, n, LevelSelf); w != "" {
			how = append(how, w)
		}
	}
	c.Why = "in the steady state: " + c.Why
	if len(how) > 0 {
		c.Why += " (" + strings.Join(how, "; ") + ")"
	}
	return c
}

func rps(idx scenario.Summaries, contender string) (float64, bool) {
	t, ok := idx.Tag(contender, LevelSelf, tag)
	return t.RPS.Median, ok && t.RPS.Median > 0
}

func claimVertxFaster(idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "a", Text: "Vert.x serves about 2.5× the throughput of Spring WebFlux (the study's form: each its own downstream)."}
	v, okV := rps(idx, "vertx")
	w, okW := rps(idx, "spring-webflux")
	if !okV || !okW {
		c.Verdict, c.Why = results.ClaimUntested, "needs vertx and spring-webflux at level self"
		return c
	}
	r := v / w
	c.Why = fmt.Sprintf("vertx %.0f, spring-webflux %.0f requests/s: %.2f×", v, w, r)
	switch {
	case r >= 2.0 && r <= 3.0:
		c.Verdict = results.ClaimHolds
	case r >= 1.25:
		c.Verdict = results.ClaimPartly
	default:
		c.Verdict = results.ClaimFails
	}
	return c
}

func claimAnnotatedIsFunctional(idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "b", Text: "WebFlux's annotated controllers and functional endpoints perform about the same."}
	a, okA := rps(idx, "spring-webflux")
	f, okF := rps(idx, "spring-webflux-fn")
	if !okA || !okF {
		c.Verdict, c.Why = results.ClaimUntested, "needs spring-webflux and spring-webflux-fn at level self"
		return c
	}
	c.Why = fmt.Sprintf("annotated %.0f, functional %.0f requests/s", a, f)
	if math.Abs(a-f) <= 0.10*math.Max(a, f) { // symmetric: neither form is the reference
		c.Verdict = results.ClaimHolds
	} else {
		c.Verdict = results.ClaimFails
	}
	return c
}
