package sleep

import (
	"fmt"
	"math"
	"strings"

	"github.com/arena-lab/arena/internal/compare"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// aboutWait is how far from the study's 101 ms a mean at 200 connections is still "about
// 101 ms": ±15 %, arena's reading of ab's whole-millisecond mean beside a 100 ms wait.
var aboutWait = scenario.Tolerance{Want: 101, Frac: 0.15, Words: `"latency=101ms" (seeds/001 lines 32–33)`,
	Source: "arena's choice: ab's whole-millisecond mean beside a 100 ms wait"}

// alike is how close two means are to answer alike: the ratio's 90 % interval within ±10 %
// (arena's reading of the study's "Perform at the same level", seeds/001 line 34), by an
// equivalence test (scenario.Alike).
var alike = scenario.Tolerance{Want: 1, Frac: 0.10, Words: `"Perform at the same level" (seeds/001 line 34)`,
	Source: "arena's choice: repeats of one cell land up to ~10 % apart"}

func claimAlikeAt200(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "a", Text: "At 200 connections Tomcat and Netty answer alike, in about 101 ms (100 ms asleep)."}
	tc, okT := idx.FirstPresent(tomcat...)
	nt, okN := idx.FirstPresent(netty...)
	t := tests[0]
	mt, hasT := mean(idx, tc, t, 200)
	mn, hasN := mean(idx, nt, t, 200)
	if !okT || !okN || !hasT || !hasN {
		c.Verdict, c.Why = results.ClaimUntested, "needs spring-mvc and netty (or spring-webflux) at sleep-c200"
		return c
	}
	level := levelName(t, 200)
	// "about 101 ms" is a magnitude: each stack's mean over its repeats, judged on its
	// median's interval (scenario.Near), not on one figure
	part := func(name string, m float64) scenario.Part {
		verdict, why := scenario.Near(scenario.Samples(run, name, level, t.tag, "mean"), aboutWait, "ms")
		return scenario.Part{Verdict: verdict, Why: fmt.Sprintf("%s %s mean, about %s: %s", name, results.FormatMs(m), results.FormatMs(aboutWait.Want), why)}
	}
	verdict, why := scenario.Alike(scenario.Samples(run, tc, level, t.tag, "mean"), scenario.Samples(run, nt, level, t.tag, "mean"), alike)
	return scenario.Combine(c, part(tc, mt), part(nt, mn), scenario.Part{Verdict: verdict, Why: fmt.Sprintf("alike: %s's mean against %s's: %s", tc, nt, why)})
}

func holdsIf(ok bool) string {
	if ok {
		return results.ClaimHolds
	}
	return results.ClaimFails
}

// gap is Tomcat's and Netty's figures at one level of a test: the merged means, and the
// per-repeat means and requests/s that orders are judged on beyond the noise.
type gap struct {
	conns          int
	tomcat, netty  float64
	tomcatName, nt string
	level          string
	tomcatMeans    []float64
	nettyMeans     []float64
}

// gapsOf are the gaps at every level of a test both were measured at, in connection order;
// false when the run has no Tomcat or no Netty.
func gapsOf(run *results.Run, idx scenario.Summaries, t test) ([]gap, bool) {
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
			level := levelName(t, c)
			out = append(out, gap{conns: c, tomcat: mt, netty: mn, tomcatName: tc, nt: nt, level: level,
				tomcatMeans: scenario.Samples(run, tc, level, t.tag, "mean"), nettyMeans: scenario.Samples(run, nt, level, t.tag, "mean")})
		}
	}
	return out, true
}

func (g gap) String() string {
	return fmt.Sprintf("c=%d: %s %s, %s %s", g.conns, g.tomcatName, results.FormatMs(g.tomcat), g.nt, results.FormatMs(g.netty))
}

// behind is how Tomcat's mean orders against Netty's (Above: behind, beyond the noise), and
// on what.
func (g gap) behind() (scenario.Order, string) {
	o, why := scenario.Compare(g.tomcatMeans, g.nettyMeans)
	return o, fmt.Sprintf("c=%d %s", g.conns, why)
}

// diffs are the per-repeat differences of Tomcat's and Netty's means, repeat by repeat.
func (g gap) diffs() []float64 { return pairwise(g.tomcatMeans, g.nettyMeans) }

// pairwise is a[i] − b[i] for the repeats both have.
func pairwise(a, b []float64) []float64 {
	out := make([]float64, min(len(a), len(b)))
	for i := range out {
		out[i] = a[i] - b[i]
	}
	return out
}

// compareGaps orders two sets of per-repeat differences, which may be zero or negative
// (Tomcat ahead at 200 connections): by the kit's U test where the repeats allow it (a test
// of ranks, blind to the sign); else by the medians, ordered when they are more than
// scenario.SingleRunNoise of the larger's size apart.
func compareGaps(a, b []float64) (scenario.Order, string) {
	if len(a) >= scenario.MinRepeats && len(b) >= scenario.MinRepeats || len(a) == 0 || len(b) == 0 {
		return scenario.Compare(a, b)
	}
	ma, mb := compare.Median(a), compare.Median(b)
	size := max(math.Abs(ma), math.Abs(mb))
	if math.Abs(ma-mb) <= scenario.SingleRunNoise*size {
		return scenario.Tie, fmt.Sprintf("%.4g vs %.4g, not separated: within %.0f %% (%d and %d repeats)", ma, mb, scenario.SingleRunNoise*100, len(a), len(b))
	}
	o := scenario.Below
	if ma > mb {
		o = scenario.Above
	}
	return o, fmt.Sprintf("%.4g vs %.4g, more than %.0f %% apart (%d and %d repeats: no test of the noise)", ma, mb, scenario.SingleRunNoise*100, len(a), len(b))
}

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

// withNote is "; note", or nothing without one.
func withNote(note string) string {
	if note == "" {
		return ""
	}
	return "; " + note
}

// behindPart is the part of a claim that Tomcat is behind Netty beyond the noise, at gaps:
// ahead at a level is shown otherwise, a tie not shown; orders at a few of many levels, no
// more than chance gives, are not shown (scenario.CountOrders).
func behindPart(gaps []gap) scenario.Part {
	var n, ahead int
	var chance float64
	var why []string
	for _, g := range gaps {
		o, w := g.behind()
		switch o {
		case scenario.Above:
			n++
		case scenario.Below:
			ahead++
		}
		chance = max(chance, scenario.FalseOrder(len(g.tomcatMeans), len(g.nettyMeans)))
		why = append(why, w)
	}
	verdict, note := scenario.CountOrders(n, ahead, len(gaps), chance)
	return scenario.Part{Verdict: verdict,
		Why: fmt.Sprintf("%s behind beyond the noise at %d of %d levels, ahead at %d (%s)%s", gaps[0].tomcatName, n, len(gaps), ahead, strings.Join(why, "; "), withNote(note))}
}

// claimTomcatFallsBehind: (b) above 200 connections Tomcat's latency rises while Netty's
// stays near the 100 ms wait, and the gap grows with connections. The study measured it at
// 800 connections: Tomcat 111 ms, Netty 103 ms ("Netty is better slightly", seeds/001 lines
// 38–40), and says the gap grows as connections do (line 48).
func claimTomcatFallsBehind(run *results.Run, idx scenario.Summaries) results.Claim {
	t := tests[0]
	c := results.Claim{ID: "b", Text: fmt.Sprintf("Above 200 connections (%s) Tomcat's latency rises while Netty's stays near %s, and the gap grows with connections.", t.group, results.FormatMs(waitMs(t)))}
	all, ok := gapsOf(run, idx, t)
	gaps := above200(all)
	if !ok || len(gaps) == 0 {
		c.Verdict, c.Why = results.ClaimUntested, "needs spring-mvc and netty (or spring-webflux) above 200 connections"
		return c
	}
	var nettyNear int
	var seen []string
	for _, g := range gaps {
		seen = append(seen, g.String())
		if near(g.netty, t) {
			nettyNear++
		}
	}
	c = scenario.Combine(c,
		scenario.Part{Verdict: scenario.Count(nettyNear, len(gaps)), Why: fmt.Sprintf("%s within 20 %% of the wait at %d of %d levels", gaps[0].nt, nettyNear, len(gaps))},
		behindPart(gaps), growing(all))
	c.Why = strings.Join(seen, "; ") + ": " + c.Why
	return c
}

// growing is the part of a claim that the gap grows with connections: from the fewest
// connections measured to the most, which must be above 200, beyond the noise.
func growing(gaps []gap) scenario.Part {
	if len(gaps) < 2 || gaps[len(gaps)-1].conns <= 200 {
		return scenario.Part{Verdict: results.ClaimUntested, Why: "whether the gap grows needs two levels, one above 200 connections"}
	}
	first, last := gaps[0], gaps[len(gaps)-1]
	o, why := compareGaps(last.diffs(), first.diffs())
	return scenario.Part{Verdict: scenario.OrderVerdict(o, scenario.Above),
		Why: fmt.Sprintf("the gap %s at %d connections, %s at %d (%s)", results.FormatMs(first.tomcat-first.netty), first.conns, results.FormatMs(last.tomcat-last.netty), last.conns, why)}
}

// cpuCondition is claim (c)'s condition at one level: the server's CPU below
// scenario.CPUBusy of its cores for both stacks (scenario.CPUHeadroom).
func cpuCondition(run *results.Run, idx scenario.Summaries, g gap) (results.Condition, string) {
	cond, busy := scenario.CPUHeadroom(run, idx, g.level, g.tomcatName, g.nt)
	if busy != "" {
		busy = fmt.Sprintf("c=%d: %s", g.conns, busy)
	}
	return cond, busy
}

// claimSmallerGapAt50: (c) with a 50 ms downstream call Tomcat falls behind Netty too, by
// less than with the 100 ms sleep: "the latency gap is more in Perf Test-1 ... because the
// waiting period is 100ms" (seeds/001 line 49). The seed names its Perf Test-2 there and
// gives no setup or figure for it: a call to the lab's downstream is arena's choice. A level
// where either server's CPU was busy is untested here: it measures the CPU, not the wait.
func claimSmallerGapAt50(run *results.Run, idx scenario.Summaries) results.Claim {
	sleep, data := tests[0], tests[1]
	c := results.Claim{ID: "c", Text: fmt.Sprintf("With a %s call (%s) instead, Tomcat falls behind Netty above 200 connections too, by less than with the %s sleep. (The seed names a 50 ms Perf Test-2, line 49, with no setup or figure: the downstream call is arena's choice.)",
		results.FormatMs(waitMs(data)), data.group, results.FormatMs(waitMs(sleep)))}
	all, ok := gapsOf(run, idx, data)
	gaps := above200(all)
	if !ok || len(gaps) == 0 {
		c.Verdict, c.Why = results.ClaimUntested, "needs spring-mvc and netty (or spring-webflux) above 200 connections of "+data.group
		return c
	}
	var parts []scenario.Part
	var judged []gap
	var seen []string
	for _, g := range gaps {
		seen = append(seen, g.String())
		cond, busy := cpuCondition(run, idx, g)
		c.Conditions = append(c.Conditions, cond)
		if busy != "" {
			parts = append(parts, scenario.Part{Verdict: results.ClaimUntestedHere, Why: busy})
			continue
		}
		judged = append(judged, g)
		o, why := g.behind()
		if o == scenario.Below {
			why += "; the other way: " + g.tomcatName + " ahead"
		}
		parts = append(parts, scenario.Part{Verdict: scenario.OrderVerdict(o, scenario.Above), Why: fmt.Sprintf("%s behind beyond the noise: %s", g.tomcatName, why)})
	}
	c = scenario.Combine(c, append(parts, smallerThanSleep(run, idx, judged))...)
	c.Why = strings.Join(seen, "; ") + ": " + c.Why
	return c
}

// smallerThanSleep is the part of claim (c) that the 50 ms gap is smaller than the sleep's,
// at the most connections judged at both.
func smallerThanSleep(run *results.Run, idx scenario.Summaries, gaps []gap) scenario.Part {
	sleepGaps, _ := gapsOf(run, idx, tests[0])
	for i := len(gaps) - 1; i >= 0; i-- {
		for _, sg := range sleepGaps {
			if sg.conns != gaps[i].conns {
				continue
			}
			o, why := compareGaps(gaps[i].diffs(), sg.diffs())
			return scenario.Part{Verdict: scenario.OrderVerdict(o, scenario.Below), Why: fmt.Sprintf("at %d connections the gap is %s against %s with the sleep (%s)",
				sg.conns, results.FormatMs(gaps[i].tomcat-gaps[i].netty), results.FormatMs(sg.tomcat-sg.netty), why)}
		}
	}
	return scenario.Part{Verdict: results.ClaimUntested, Why: "the sleep test's gap at the same connections was not measured"}
}

// rps is a contender's requests/s at a level, the median over its repeats.
func rps(idx scenario.Summaries, contender string, t test, c int) (float64, bool) {
	ts, ok := idx.Tag(contender, levelName(t, c), t.tag)
	return ts.RPS.Median, ok
}

// claimThroughputGapGrows: (d) "As the number of concurrent IO bound requests increases the
// latency and throughput gap between Netty and Tomcat will increases" (seeds/001 line 48):
// the latency half is claim (b); this is the throughput half, on the 100 ms sleep. Netty
// serves more requests/s than Tomcat above 200 connections, and the difference grows, both
// beyond the noise. The seed gives no throughput figure.
func claimThroughputGapGrows(run *results.Run, idx scenario.Summaries) results.Claim {
	t := tests[0]
	c := results.Claim{ID: "d", Text: fmt.Sprintf("As connections grow (%s), Netty's throughput pulls ahead of Tomcat's, and the gap grows.", t.group)}
	tc, okT := idx.FirstPresent(tomcat...)
	nt, okN := idx.FirstPresent(netty...)
	type point struct {
		conns    int
		rt, rn   float64
		st, sn   []float64
		order    scenario.Order // Netty's requests/s against Tomcat's
		aheadWhy string
	}
	var points []point
	for _, conns := range Connections {
		rt, hasT := rps(idx, tc, t, conns)
		rn, hasN := rps(idx, nt, t, conns)
		if !okT || !okN || !hasT || !hasN {
			continue
		}
		level := levelName(t, conns)
		p := point{conns: conns, rt: rt, rn: rn, st: scenario.Samples(run, tc, level, t.tag, "requests/s"), sn: scenario.Samples(run, nt, level, t.tag, "requests/s")}
		o, why := scenario.Compare(p.sn, p.st)
		p.order, p.aheadWhy = o, fmt.Sprintf("c=%d: %s %.0f, %s %.0f requests/s, %s", conns, nt, rn, tc, rt, why)
		points = append(points, p)
	}
	var above []point
	for _, p := range points {
		if p.conns > 200 {
			above = append(above, p)
		}
	}
	if len(above) == 0 {
		c.Verdict, c.Why = results.ClaimUntested, "needs spring-mvc and netty (or spring-webflux) above 200 connections of "+t.group
		return c
	}
	var ahead, behind int
	var chance float64
	var why []string
	for _, p := range above {
		switch p.order {
		case scenario.Above:
			ahead++
		case scenario.Below:
			behind++
		}
		chance = max(chance, scenario.FalseOrder(len(p.sn), len(p.st)))
		why = append(why, p.aheadWhy)
	}
	verdict, note := scenario.CountOrders(ahead, behind, len(above), chance)
	parts := []scenario.Part{{Verdict: verdict, Why: fmt.Sprintf("%s ahead beyond the noise at %d of %d levels, behind at %d (%s)%s", nt, ahead, len(above), behind, strings.Join(why, "; "), withNote(note))}}
	grows := scenario.Part{Verdict: results.ClaimUntested, Why: "whether the gap grows needs two levels, one above 200 connections"}
	if len(points) >= 2 {
		first, last := points[0], points[len(points)-1]
		o, w := compareGaps(pairwise(last.sn, last.st), pairwise(first.sn, first.st))
		grows = scenario.Part{Verdict: scenario.OrderVerdict(o, scenario.Above), Why: fmt.Sprintf("the gap %.0f requests/s at %d connections, %.0f at %d (%s)", first.rn-first.rt, first.conns, last.rn-last.rt, last.conns, w)}
	}
	return scenario.Combine(c, append(parts, grows)...)
}

// The study's thread counts: "if there are 2000 concurrent requests on 32 core machine then
// Netty uses around 32 active threads vs Tomcat uses 2000 active threads" (seeds/001 line 4).
const (
	studyTomcatThreads = 2000
	studyCores         = 32
)

// claimThreadPerRequest: (e) Tomcat runs a thread per concurrent request, Netty a few per
// core (seeds/001 line 4). It rests on a Tomcat pool as large as the concurrency and on the
// study's 32 cores: at a pool of 200 Tomcat cannot run 2000 threads, and on one core Netty's
// threads per core are no count to set beside 32.
func claimThreadPerRequest(run *results.Run, idx scenario.Summaries) results.Claim {
	t := tests[0]
	c := results.Claim{ID: "e", Text: fmt.Sprintf("At %d concurrent requests Tomcat runs a thread for each (%d), Netty about one a core (%d on %d cores).", studyTomcatThreads, studyTomcatThreads, studyCores, studyCores)}
	tc, okT := idx.FirstPresent(tomcat...)
	nt, okN := idx.FirstPresent(netty...)
	top := Connections[len(Connections)-1]
	level := levelName(t, top)
	tt, nn := scenario.Samples(run, tc, level, t.tag, "threads"), scenario.Samples(run, nt, level, t.tag, "threads")
	if !okT || !okN || len(tt) == 0 || len(nn) == 0 {
		c.Verdict, c.Why = results.ClaimUntested, fmt.Sprintf("needs spring-mvc and netty (or spring-webflux) at %s", level)
		return c
	}
	c.Why = fmt.Sprintf("at %d connections %s ran at most %.0f threads, %s %.0f", top, tc, compare.Median(tt), nt, compare.Median(nn))
	pool := scenario.Condition{Name: tc + " request threads", Needs: studyTomcatThreads, Source: "seeds/001 line 4",
		Of: func(r *results.Run) float64 { n, _ := threadsOf(r, tc, level); return float64(n) }}
	c, met := scenario.AtConditions(c, run, pool, scenario.ServerCores(studyCores, "seeds/001 lines 4, 17"))
	if !met {
		return c
	}
	o, why := scenario.Compare(nn, tt)
	perRequest := compare.Median(tt) >= studyTomcatThreads
	return scenario.Combine(c,
		scenario.Part{Verdict: holdsIf(perRequest), Why: fmt.Sprintf("%s at most %.0f threads at %d connections", tc, compare.Median(tt), top)},
		scenario.Part{Verdict: scenario.OrderVerdict(o, scenario.Below), Why: fmt.Sprintf("%s's threads below %s's: %s", nt, tc, why)})
}
