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
func (Scenario) Presets() []string { return []string{"seed"} }

// Plan: both forms, each a warm-up then the measured closed loop.
func (s Scenario) Plan(o scenario.Options) (scenario.Plan, error) {
	preset := o.Preset
	if preset == "" {
		preset = "seed"
	}
	if preset != "seed" {
		return scenario.Plan{}, fmt.Errorf("downstream has no preset %q (presets: %s)", preset, strings.Join(s.Presets(), ", "))
	}
	warm, requests := int64(seedWarmup), int64(seedRequests)
	if o.Quick {
		warm, requests = quickWarmup, quickRequests
	}
	bound := 2 * time.Minute
	if o.Duration > 0 {
		bound = o.Duration
	}
	timeout := 10 * time.Second
	if o.Timeout > 0 {
		timeout = o.Timeout
	}
	closed := func(t string, n int64, d time.Duration) *load.ClosedLoop {
		return &load.ClosedLoop{Tag: t, Request: load.Request{Path: path}, Connections: connections, Requests: n, Duration: d, Timeout: timeout}
	}
	plan := scenario.Plan{Preset: preset, Notes: []string{
		fmt.Sprintf("%d connections, %d requests of warm-up, then %d measured, as the study (at most %s a level).", connections, warm, requests, bound),
		"Level self: the contender is its own downstream (DOWNSTREAM_URL unset), as the study ran it, so one core serves both sides.",
		"Level lab: the lab's own downstream serves the JSON from the client's CPUs, so the contender's core does only its own side.",
	}}
	for _, name := range []string{LevelSelf, LevelLab} {
		lv := scenario.Level{Name: name, Closed: closed(tag, requests, bound), Warmup: []*load.ClosedLoop{closed("warmup", warm, bound)}, Drain: 15 * time.Second}
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
		for _, c := range run.Contenders {
			if t, ok := idx.Tag(c.Name, level, tag); ok {
				entries = append(entries, entry{c.Name, t.RPS.Median, t.Merged.P99})
			}
		}
		sort.SliceStable(entries, func(i, j int) bool { return entries[i].rps > entries[j].rps }) // ties keep run order
		for i, e := range entries {
			v := results.Verdict{Contender: e.name, Level: level,
				Why: fmt.Sprintf("%.0f requests/s, p99 %s", e.rps, results.FormatMs(e.p99))}
			share := e.rps / entries[0].rps
			switch {
			case i == 0:
				v.Verdict = "fastest"
			case share >= 0.9:
				v.Verdict = "within 10 %"
			default:
				v.Verdict = fmt.Sprintf("%.0f %% of fastest", share*100)
			}
			if i > 0 {
				v.Why += fmt.Sprintf(" (%s: %.0f)", entries[0].name, entries[0].rps)
			}
			verdicts = append(verdicts, v)
		}
	}
	return verdicts, []results.Claim{claimVertxFaster(idx), claimAnnotatedIsFunctional(idx)}
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
		c.Verdict, c.Why = "untested", "needs vertx and spring-webflux at level self"
		return c
	}
	r := v / w
	c.Why = fmt.Sprintf("vertx %.0f, spring-webflux %.0f requests/s: %.2f×", v, w, r)
	switch {
	case r >= 2.0 && r <= 3.0:
		c.Verdict = "holds"
	case r >= 1.25:
		c.Verdict = "partly"
	default:
		c.Verdict = "fails"
	}
	return c
}

func claimAnnotatedIsFunctional(idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "b", Text: "WebFlux's annotated controllers and functional endpoints perform about the same."}
	a, okA := rps(idx, "spring-webflux")
	f, okF := rps(idx, "spring-webflux-fn")
	if !okA || !okF {
		c.Verdict, c.Why = "untested", "needs spring-webflux and spring-webflux-fn at level self"
		return c
	}
	c.Why = fmt.Sprintf("annotated %.0f, functional %.0f requests/s", a, f)
	if math.Abs(a-f) <= 0.10*math.Max(a, f) { // symmetric: neither form is the reference
		c.Verdict = "holds"
	} else {
		c.Verdict = "fails"
	}
	return c
}
