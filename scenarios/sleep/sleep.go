// Package sleep is study 001: Netty against Tomcat (here with its default 200 threads; the
// study states none) when every request waits (100 ms asleep, or a 50 ms downstream call),
// at 200 to 2600 concurrent connections, as ab drove them: a closed loop of N connections.
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
	return "study 001 (seeds/001): Netty vs Tomcat (its default 200 threads here; the study states none), 100 ms sleep and 50 ms downstream, 200–2600 connections"
}

// Presets: seed (the study's ab: a count of requests a level) and steady (each level warmed
// up until its throughput settles, then measured for a fixed time).
func (Scenario) Presets() []string { return []string{"seed", scenario.PresetSteady} }

func levelName(t test, c int) string { return fmt.Sprintf("%s-c%d", t.prefix, c) }

// Plan: each test at each connection count, a warm-up then the study's 90,000 requests
// (10,000 in the quick form), each stack with its own defaults (Tomcat's 200 threads).
func (s Scenario) Plan(o scenario.Options) (scenario.Plan, error) {
	r, err := o.Resolve(s)
	if err != nil {
		return scenario.Plan{}, err
	}
	requests, warm := seedRequests, int64(10000)
	if r.Quick {
		requests, warm = quickRequests, 3000
	}
	bound := r.Duration(5 * time.Minute)   // every loop is bounded in time too
	timeout := r.Timeout(30 * time.Second) // ab's default
	steady := r.Preset == scenario.PresetSteady
	plan := scenario.Plan{Preset: r.Preset, Headline: []results.Headline{
		{Figure: "mean", Per: results.PerCurve, Label: "mean latency at the most connections", Unit: "ms"},
	}}
	if steady {
		plan.Notes = append(plan.Notes, "A closed loop per level, in the steady state.", r.SteadyNote())
	} else {
		plan.Notes = append(plan.Notes, fmt.Sprintf("A closed loop per level, as ab: %d requests after %d of warm-up, at most %s a level.", requests, warm, bound))
	}
	plan.Notes = append(plan.Notes,
		fmt.Sprintf("Each stack keeps its own thread pool (WORKER_THREADS unset): Tomcat's is its default server.tomcat.threads.max, %d threads. The seed states no pool size (seeds/001 lines 12–17): leaving Tomcat's default is arena's choice, and it bounds Tomcat at %d threads / 100 ms = %d requests/s.", tomcatDefaultThreads, tomcatDefaultThreads, tomcatDefaultThreads*10),
		"The 50 ms test calls /data/1 against the lab's downstream, which waits 50 ms and runs on the client's CPUs.")
	for _, t := range tests {
		for _, c := range Connections {
			loop := load.ClosedLoop{Tag: t.tag, Request: load.Request{Path: t.path}, Connections: c, Timeout: timeout}
			lv := scenario.Level{Name: levelName(t, c), Group: t.group, X: float64(c), XName: "connections"}
			if steady {
				lv.Load = r.Steady(loop)
			} else {
				measured, warmup := loop, loop
				measured.Requests, measured.Duration = requests, bound
				// Planned time: the requests at c per wait, slower when threads run out.
				measured.Expect = time.Duration(float64(requests)/float64(min(c, 200))) * t.wait
				warmup.Tag, warmup.Requests, warmup.Duration = "warmup", warm, min(30*time.Second, bound)
				lv.Load, lv.Warmup = measured, []load.Load{warmup}
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
// 20 % of the wait; the study's claims, and the lab's on virtual threads.
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
	return verdicts, []results.Claim{claimAlikeAt200(run, idx), claimTomcatFallsBehind(run, idx), claimSmallerGapAt50(run, idx),
		claimThroughputGapGrows(run, idx), claimThreadPerRequest(run, idx), claimVirtualStaysNear(run, idx)}
}

// near is a mean latency within 20 % of the wait: the wait and little else.
func near(mean float64, t test) bool { return mean <= waitMs(t)*1.2 }

func waitMs(t test) float64 { return float64(t.wait) / float64(time.Millisecond) }

func mean(idx scenario.Summaries, contender string, t test, c int) (float64, bool) {
	ts, ok := idx.Tag(contender, levelName(t, c), t.tag)
	return ts.Merged.Mean, ok
}

func flatness(idx scenario.Summaries, contender string, t test) (results.Verdict, bool) {
	wait := float64(t.wait) / float64(time.Millisecond)
	var seen, unjudged []string
	word := scenario.Inconclusive // or InconclusiveShared, as the unjudged levels were
	flatTo := 0
	broke := false
	for _, c := range Connections {
		m, ok := mean(idx, contender, t, c)
		if !ok {
			if cs, measured := idx[contender][levelName(t, c)]; measured {
				if w, disturbed := scenario.Disturbed(cs); disturbed {
					unjudged, word = append(unjudged, fmt.Sprint(c)), w
				}
			}
			continue
		}
		point := fmt.Sprintf("%d: %s", c, results.FormatMs(m))
		if scenario.Unsettled(idx, contender, levelName(t, c)) {
			point += " (not settled)"
		}
		seen = append(seen, point)
		if !broke && m <= wait*1.2 {
			flatTo = c
		} else {
			broke = true
		}
	}
	notJudged := ""
	if len(unjudged) > 0 {
		notJudged = "; " + word.Cause() + " at " + strings.Join(unjudged, ", ") + " connections: not judged"
	}
	if len(seen) == 0 {
		if len(unjudged) > 0 {
			return word.Verdict(contender, t.group, strings.TrimPrefix(notJudged, "; ")), true
		}
		return results.Verdict{}, false
	}
	var w scenario.Word
	switch {
	case flatTo == 0:
		w = scenario.Word{Text: "queues", Tone: results.Bad}
	case !broke:
		w = scenario.Word{Text: fmt.Sprintf("flat to %d", flatTo), Tone: results.Good}
	default:
		w = scenario.Word{Text: fmt.Sprintf("flat to %d, then queues", flatTo), Tone: results.Mixed}
	}
	return w.Verdict(contender, t.group, "mean latency by connections: "+strings.Join(seen, ", ")+notJudged), true
}

// virtual stands for Tomcat on virtual threads: blocking code, no pool to run out of.
var virtual = "spring-mvc-virtual"

// claimVirtualStaysNear: beyond the study, Tomcat on virtual threads keeps its latency near
// the wait above 200 connections, as Netty does, with the same blocking code as Tomcat's. A
// level where its CPU was busy is untested here, as in claim (c): the CPU, not a pool, set
// its pace there (one core cannot serve 2600 connections' 26,000 requests/s).
func claimVirtualStaysNear(run *results.Run, idx scenario.Summaries) results.Claim {
	t := tests[0]
	c := results.Claim{ID: "arena-1", Text: fmt.Sprintf("Beyond the study: Tomcat on virtual threads (%s) stays near %s above 200 connections, as Netty does, with blocking code.", virtual, results.FormatMs(waitMs(t)))}
	cores := scenario.CountCPUs(run.Env.ServerCPUs)
	var parts []scenario.Part
	var nearAt, of int
	var seen []string
	for _, conns := range Connections[1:] {
		m, ok := mean(idx, virtual, t, conns)
		if !ok {
			continue
		}
		at := fmt.Sprintf("c=%d: %s", conns, results.FormatMs(m))
		if cores > 0 {
			cond, busy := scenario.CPUHeadroom(run, idx, levelName(t, conns), virtual)
			c.Conditions = append(c.Conditions, cond)
			if busy != "" {
				parts = append(parts, scenario.Part{Verdict: results.ClaimUntestedHere, Why: fmt.Sprintf("%s: %s", at, busy)})
				continue
			}
		}
		of++
		if near(m, t) {
			nearAt++
		}
		seen = append(seen, at)
	}
	if of > 0 {
		parts = append([]scenario.Part{{Verdict: scenario.Count(nearAt, of),
			Why: fmt.Sprintf("%s within 20 %% of the wait at %d of %d levels: %s", virtual, nearAt, of, strings.Join(seen, ", "))}}, parts...)
	}
	if len(parts) == 0 {
		c.Verdict, c.Why = results.ClaimUntested, "needs "+virtual+" above 200 connections of "+t.group
		return c
	}
	return scenario.Combine(c, parts...)
}
