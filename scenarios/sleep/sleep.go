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
		"Each stack keeps its own thread pool (WORKER_THREADS unset): Tomcat's is 200 threads, as in the study.",
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
// 20 % of the wait; the study's three claims, and the lab's on virtual threads.
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
	return verdicts, []results.Claim{claimAlikeAt200(idx), claimTomcatFallsBehind(idx), claimSmallerGapAt50(idx), claimVirtualStaysNear(idx)}
}

// near is a mean latency within 20 % of the wait: the wait and little else.
func near(mean float64, t test) bool { return mean <= waitMs(t)*1.2 }

// behindBy is how far a contender's mean is behind another's to count: 5 %.
const behindBy = 1.05

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

func claimAlikeAt200(idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "a", Text: "At 200 connections Tomcat and Netty answer alike, in about 101 ms (100 ms asleep)."}
	tc, okT := idx.FirstPresent(tomcat...)
	nt, okN := idx.FirstPresent(netty...)
	t := tests[0]
	mt, hasT := mean(idx, tc, t, 200)
	mn, hasN := mean(idx, nt, t, 200)
	switch {
	case !okT || !okN || !hasT || !hasN:
		c.Verdict, c.Why = results.ClaimUntested, "needs spring-mvc and netty (or spring-webflux) at sleep-c200"
	case mt <= 115 && mn <= 115 && scenario.Within(mt, mn, 0.10):
		c.Verdict, c.Why = results.ClaimHolds, fmt.Sprintf("%s %s, %s %s (mean)", tc, results.FormatMs(mt), nt, results.FormatMs(mn))
	case mt <= 130 && mn <= 130:
		c.Verdict, c.Why = results.ClaimPartly, fmt.Sprintf("both near the wait but apart: %s %s, %s %s", tc, results.FormatMs(mt), nt, results.FormatMs(mn))
	default:
		c.Verdict, c.Why = results.ClaimFails, fmt.Sprintf("%s %s, %s %s", tc, results.FormatMs(mt), nt, results.FormatMs(mn))
	}
	return c
}

// gap is Tomcat's and Netty's means at one level of a test.
type gap struct {
	conns          int
	tomcat, netty  float64
	tomcatName, nt string
}

// gapsOf are the gaps at every level of a test both were measured at, in connection order;
// false when the run has no Tomcat or no Netty.
func gapsOf(idx scenario.Summaries, t test) ([]gap, bool) {
	tc, okT := idx.FirstPresent(tomcat...)
	nt, okN := idx.FirstPresent(netty...)
	if !okT || !okN {
		return nil, false
	}
	var out []gap
	for _, c := range Connections {
		mt, hasT := mean(idx, tc, t, c)
		mn, hasN := mean(idx, nt, t, c)
		if hasT && hasN {
			out = append(out, gap{c, mt, mn, tc, nt})
		}
	}
	return out, true
}

func (g gap) String() string {
	return fmt.Sprintf("c=%d: %s %s, %s %s", g.conns, g.tomcatName, results.FormatMs(g.tomcat), g.nt, results.FormatMs(g.netty))
}

// behind is Tomcat behind Netty at a level: its mean more than 5 % above.
func (g gap) behind() bool { return g.tomcat > g.netty*behindBy }

// above200 are the gaps where a 200-thread pool has run out of threads.
func above200(gaps []gap) []gap {
	var out []gap
	for _, g := range gaps {
		if g.conns > 200 {
			out = append(out, g)
		}
	}
	return out
}

// claimTomcatFallsBehind: (b) above 200 connections Tomcat's latency rises while Netty's
// stays near the 100 ms wait, and the gap grows with connections. The study measured it at
// 800 connections: Tomcat 111 ms, Netty 103 ms ("Netty is better slightly"), and says the gap
// grows as connections do.
func claimTomcatFallsBehind(idx scenario.Summaries) results.Claim {
	t := tests[0]
	c := results.Claim{ID: "b", Text: fmt.Sprintf("Above 200 connections (%s) Tomcat's latency rises while Netty's stays near %s, and the gap grows with connections.", t.group, results.FormatMs(waitMs(t)))}
	all, ok := gapsOf(idx, t)
	gaps := above200(all)
	if !ok || len(gaps) == 0 {
		c.Verdict, c.Why = results.ClaimUntested, "needs spring-mvc and netty (or spring-webflux) above 200 connections"
		return c
	}
	var nettyNear, tomcatBehind int
	var seen []string
	for _, g := range gaps {
		seen = append(seen, g.String())
		if near(g.netty, t) {
			nettyNear++
		}
		if g.behind() {
			tomcatBehind++
		}
	}
	parts := []scenario.Part{
		{Verdict: scenario.Count(nettyNear, len(gaps)), Why: fmt.Sprintf("%s within 20 %% of the wait at %d of %d levels", gaps[0].nt, nettyNear, len(gaps))},
		{Verdict: scenario.Count(tomcatBehind, len(gaps)), Why: fmt.Sprintf("%s more than 5 %% behind at %d of %d", gaps[0].tomcatName, tomcatBehind, len(gaps))},
		growing(all),
	}
	c = scenario.Combine(c, parts...)
	c.Why = strings.Join(seen, "; ") + ": " + c.Why
	return c
}

// growing is the part of a claim that the gap grows with connections: from the fewest
// connections measured to the most, which must be above 200.
func growing(gaps []gap) scenario.Part {
	if len(gaps) < 2 || gaps[len(gaps)-1].conns <= 200 {
		return scenario.Part{Verdict: results.ClaimUntested, Why: "whether the gap grows needs two levels, one above 200 connections"}
	}
	first, last := gaps[0], gaps[len(gaps)-1]
	d0, d1 := first.tomcat-first.netty, last.tomcat-last.netty
	p := scenario.Part{Why: fmt.Sprintf("the gap %s at %d connections, %s at %d", results.FormatMs(d0), first.conns, results.FormatMs(d1), last.conns)}
	p.Verdict = results.ClaimFails
	if d1 > d0 {
		p.Verdict = results.ClaimHolds
	}
	return p
}

// claimSmallerGapAt50: (c) with a 50 ms downstream call (the study's Perf Test-2) Tomcat falls
// behind Netty too, by less than with the 100 ms sleep: "the latency gap is more in Perf
// Test-1 ... because the waiting period is 100ms".
func claimSmallerGapAt50(idx scenario.Summaries) results.Claim {
	sleep, data := tests[0], tests[1]
	c := results.Claim{ID: "c", Text: fmt.Sprintf("With a %s call (%s) instead, Tomcat falls behind Netty above 200 connections too, by less than with the %s sleep.",
		results.FormatMs(waitMs(data)), data.group, results.FormatMs(waitMs(sleep)))}
	all, ok := gapsOf(idx, data)
	gaps := above200(all)
	if !ok || len(gaps) == 0 {
		c.Verdict, c.Why = results.ClaimUntested, "needs spring-mvc and netty (or spring-webflux) above 200 connections of "+data.group
		return c
	}
	var behind int
	var seen []string
	for _, g := range gaps {
		seen = append(seen, g.String())
		if g.behind() {
			behind++
		}
	}
	parts := []scenario.Part{{Verdict: scenario.Count(behind, len(gaps)), Why: fmt.Sprintf("%s more than 5 %% behind at %d of %d levels", gaps[0].tomcatName, behind, len(gaps))}}
	smaller := scenario.Part{Verdict: results.ClaimUntested, Why: "the sleep test's gap at the same connections was not measured"}
	sleepGaps, _ := gapsOf(idx, sleep)
	for i := len(gaps) - 1; i >= 0 && smaller.Verdict == results.ClaimUntested; i-- {
		for _, sg := range sleepGaps {
			if sg.conns != gaps[i].conns {
				continue
			}
			d50, d100 := gaps[i].tomcat-gaps[i].netty, sg.tomcat-sg.netty
			smaller = scenario.Part{Verdict: results.ClaimFails, Why: fmt.Sprintf("at %d connections the gap is %s against %s with the sleep", sg.conns, results.FormatMs(d50), results.FormatMs(d100))}
			if d50 < d100 {
				smaller.Verdict = results.ClaimHolds
			}
		}
	}
	c = scenario.Combine(c, append(parts, smaller)...)
	c.Why = strings.Join(seen, "; ") + ": " + c.Why
	return c
}

// virtual stands for Tomcat on virtual threads: blocking code, no pool to run out of.
var virtual = "spring-mvc-virtual"

// claimVirtualStaysNear: beyond the study, Tomcat on virtual threads keeps its latency near
// the wait above 200 connections, as Netty does, with the same blocking code as Tomcat's.
func claimVirtualStaysNear(idx scenario.Summaries) results.Claim {
	t := tests[0]
	c := results.Claim{ID: "arena-1", Text: fmt.Sprintf("Beyond the study: Tomcat on virtual threads (%s) stays near %s above 200 connections, as Netty does, with blocking code.", virtual, results.FormatMs(waitMs(t)))}
	var nearAt, of int
	var seen []string
	for _, conns := range Connections[1:] {
		m, ok := mean(idx, virtual, t, conns)
		if !ok {
			continue
		}
		of++
		if near(m, t) {
			nearAt++
		}
		seen = append(seen, fmt.Sprintf("c=%d: %s", conns, results.FormatMs(m)))
	}
	c.Verdict = scenario.Count(nearAt, of)
	if of == 0 {
		c.Why = "needs " + virtual + " above 200 connections of " + t.group
		return c
	}
	c.Why = fmt.Sprintf("%s within 20 %% of the wait at %d of %d levels: %s", virtual, nearAt, of, strings.Join(seen, ", "))
	return c
}
