// Package sleep is study 001: Netty against a 200-thread Tomcat when every request waits
// (100 ms asleep, or a 50 ms downstream call), at 200 to 2600 concurrent connections, as
// ab drove them: a closed loop of N connections.
package sleep

import (
	"fmt"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// The study's levels and load: ab -n 90000 -c N.
var (
	Connections   = []int{200, 400, 800, 1600, 2600}
	seedRequests  = int64(90000)
	quickRequests = int64(10000)
)

// A test is one of the study's two waits.
type test struct {
	group  string
	prefix string
	tag    string
	path   string
	wait   time.Duration
	viaLab bool // the wait is the lab's downstream's delay
}

var tests = []test{
	{group: "sleep 100 ms", prefix: "sleep", tag: "sleep", path: "/sleep", wait: 100 * time.Millisecond},
	{group: "downstream 50 ms", prefix: "data50", tag: "data", path: "/data/1", wait: 50 * time.Millisecond, viaLab: true},
}

// Contenders that stand for the study's two servers, in order of preference.
var (
	tomcat = []string{"spring-mvc"}
	netty  = []string{"netty", "spring-webflux"}
)

// Scenario is the I/O-wait study.
type Scenario struct{}

func (Scenario) Name() string { return "sleep" }
func (Scenario) Title() string {
	return "I/O waits: does a thread per request keep up as connections grow?"
}
func (Scenario) Study() string {
	return "study 001 (seeds/001): Netty vs a 200-thread Tomcat, 100 ms sleep and 50 ms downstream, 200–2600 connections"
}
func (Scenario) Presets() []string { return []string{"seed"} }

func levelName(t test, c int) string { return fmt.Sprintf("%s-c%d", t.prefix, c) }

// Plan: each test at each connection count, a warm-up then the study's 90,000 requests
// (10,000 in the quick form), each stack with its own defaults (Tomcat's 200 threads).
func (s Scenario) Plan(o scenario.Options) (scenario.Plan, error) {
	preset := o.Preset
	if preset == "" {
		preset = "seed"
	}
	if preset != "seed" {
		return scenario.Plan{}, fmt.Errorf("sleep has no preset %q (presets: %s)", preset, strings.Join(s.Presets(), ", "))
	}
	requests, warm := seedRequests, int64(10000)
	if o.Quick {
		requests, warm = quickRequests, 3000
	}
	bound := 5 * time.Minute // every loop is bounded in time too
	if o.Duration > 0 {
		bound = o.Duration
	}
	timeout := 30 * time.Second // ab's default
	if o.Timeout > 0 {
		timeout = o.Timeout
	}
	plan := scenario.Plan{Preset: preset, Notes: []string{
		fmt.Sprintf("A closed loop per level, as ab: %d requests after %d of warm-up, at most %s a level.", requests, warm, bound),
		"Each stack keeps its own thread pool (WORKER_THREADS unset): Tomcat's is 200 threads, as in the study.",
		"The 50 ms test calls /data/1 against the lab's downstream, which waits 50 ms and runs on the client's CPUs.",
	}}
	for _, t := range tests {
		for _, c := range Connections {
			lv := scenario.Level{
				Name: levelName(t, c), Group: t.group, X: float64(c), XName: "connections",
				Closed: &load.ClosedLoop{Tag: t.tag, Request: load.Request{Path: t.path}, Connections: c,
					Requests: requests, Duration: bound, Timeout: timeout},
				Warmup: []*load.ClosedLoop{{Tag: "warmup", Request: load.Request{Path: t.path}, Connections: c,
					Requests: warm, Duration: min(30*time.Second, bound), Timeout: timeout}},
				// Planned time: the requests at c per wait, slower when threads run out.
				Drain: time.Duration(float64(requests)/float64(min(c, 200))) * t.wait,
			}
			if t.viaLab {
				lv.Downstream = &scenario.Downstream{Delay: t.wait}
			}
			plan.Levels = append(plan.Levels, lv)
		}
	}
	return plan, nil
}

// Judge: per contender and test, the connections up to which its mean latency stays within
// 20 % of the wait; and the study's three claims.
func (Scenario) Judge(run *results.Run) ([]results.Verdict, []results.Claim) {
	idx := scenario.Index(run)
	var verdicts []results.Verdict
	for _, c := range run.Contenders {
		for _, t := range tests {
			if v, ok := flatness(idx, c.Name, t); ok {
				verdicts = append(verdicts, v)
			}
		}
	}
	claims := []results.Claim{claimAlikeAt200(idx)}
	for i, t := range tests {
		claims = append(claims, claimTomcatQueues(idx, []string{"b", "c"}[i], t))
	}
	return verdicts, claims
}

func mean(idx scenario.Summaries, contender string, t test, c int) (float64, bool) {
	ts, ok := idx.Tag(contender, levelName(t, c), t.tag)
	return ts.Merged.Mean, ok
}

func flatness(idx scenario.Summaries, contender string, t test) (results.Verdict, bool) {
	wait := float64(t.wait) / float64(time.Millisecond)
	var seen []string
	flatTo := 0
	broke := false
	for _, c := range Connections {
		m, ok := mean(idx, contender, t, c)
		if !ok {
			continue
		}
		seen = append(seen, fmt.Sprintf("%d: %s", c, results.FormatMs(m)))
		if !broke && m <= wait*1.2 {
			flatTo = c
		} else {
			broke = true
		}
	}
	if len(seen) == 0 {
		return results.Verdict{}, false
	}
	v := results.Verdict{Contender: contender, Level: t.group, Why: "mean latency by connections: " + strings.Join(seen, ", ")}
	switch {
	case flatTo == 0:
		v.Verdict = "queues"
	case !broke:
		v.Verdict = fmt.Sprintf("flat to %d", flatTo)
	default:
		v.Verdict = fmt.Sprintf("flat to %d, then queues", flatTo)
	}
	return v, true
}

func claimAlikeAt200(idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "a", Text: "At 200 connections Tomcat and Netty answer alike, in about 101 ms (100 ms asleep)."}
	tc, okT := idx.FirstPresent(tomcat...)
	nt, okN := idx.FirstPresent(netty...)
	t := tests[0]
	mt, hasT := mean(idx, tc, t, 200)
	mn, hasN := mean(idx, nt, t, 200)
	switch {
	case !okT || !okN || !hasT || !hasN:
		c.Verdict, c.Why = "untested", "needs spring-mvc and netty (or spring-webflux) at sleep-c200"
	case mt <= 115 && mn <= 115 && scenario.Within(mt, mn, 0.10):
		c.Verdict, c.Why = "holds", fmt.Sprintf("%s %s, %s %s (mean)", tc, results.FormatMs(mt), nt, results.FormatMs(mn))
	case mt <= 130 && mn <= 130:
		c.Verdict, c.Why = "partly", fmt.Sprintf("both near the wait but apart: %s %s, %s %s", tc, results.FormatMs(mt), nt, results.FormatMs(mn))
	default:
		c.Verdict, c.Why = "fails", fmt.Sprintf("%s %s, %s %s", tc, results.FormatMs(mt), nt, results.FormatMs(mn))
	}
	return c
}

// claimTomcatQueues: above 200 connections the 200-thread Tomcat queues, its latency near
// wait × c/200, while Netty stays near the wait up to 800 connections.
func claimTomcatQueues(idx scenario.Summaries, id string, t test) results.Claim {
	wait := float64(t.wait) / float64(time.Millisecond)
	c := results.Claim{ID: id, Text: fmt.Sprintf("Above 200 connections (%s) the 200-thread Tomcat's latency grows as %s × c/200, while Netty stays near %s up to 800 connections.",
		t.group, results.FormatMs(wait), results.FormatMs(wait))}
	tc, okT := idx.FirstPresent(tomcat...)
	nt, okN := idx.FirstPresent(netty...)
	if !okT || !okN {
		c.Verdict, c.Why = "untested", "needs spring-mvc and netty (or spring-webflux)"
		return c
	}
	var tomcatOK, nettyOK, measured int
	var why []string
	for _, conns := range []int{400, 800} {
		mt, hasT := mean(idx, tc, t, conns)
		mn, hasN := mean(idx, nt, t, conns)
		if !hasT || !hasN {
			continue
		}
		measured++
		predicted := wait * float64(conns) / 200
		if scenario.Within(mt, predicted, 0.25) {
			tomcatOK++
		}
		if mn <= wait*1.2 {
			nettyOK++
		}
		why = append(why, fmt.Sprintf("c=%d: %s %s (predicted %s), %s %s", conns, tc, results.FormatMs(mt), results.FormatMs(predicted), nt, results.FormatMs(mn)))
	}
	switch {
	case measured == 0:
		c.Verdict, c.Why = "untested", "needs the 400 and 800 connection levels"
		return c
	case tomcatOK == measured && nettyOK == measured:
		c.Verdict = "holds"
	case tomcatOK+nettyOK > 0:
		c.Verdict = "partly"
	default:
		c.Verdict = "fails"
	}
	c.Why = strings.Join(why, "; ")
	return c
}
