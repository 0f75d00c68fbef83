package chat

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// studyStacks are the contenders that stand for study 000's seven applications: its claims
// rank these among themselves, whatever else the run measured.
var studyStacks = []string{"play-akka", "vertx", "vertx-eventbus", "node-express", "node-express-cluster", "spring-mvc", "spring-mvc-jetty"}

// javaStacks are the study's five applications on the JVM (seeds/000 lines 19–50).
var javaStacks = []string{"play-akka", "vertx", "vertx-eventbus", "spring-mvc", "spring-mvc-jetty"}

// studyCores is the condition of the claims that rest on the study's 8 cores (seeds/000
// line 72, and line 111: "a maximum of 800% CPU"): mechanism says which of the study's words
// tie the claim to them.
func studyCores(mechanism string) scenario.Condition {
	return scenario.ServerCores(8, "seeds/000 line 72: 8 CPU cores; "+mechanism)
}

// atStudyCores records the study's cores on c as what it depends on: a claim measured at
// fewer is untested here; one the run measured nothing for stays untested, the cores not
// being why.
func atStudyCores(c results.Claim, run *results.Run, mechanism string) results.Claim {
	at, _ := scenario.AtConditions(c, run, studyCores(mechanism))
	if c.Verdict == results.ClaimUntested {
		c.Conditions = at.Conditions
		return c
	}
	return at
}

// claims are the study's conclusions, each with the seed lines it comes from, judged by
// parts through scenario.Combine and scenario.Count, the one rule of every scenario.
func claims(run *results.Run, idx scenario.Summaries) []results.Claim {
	return []results.Claim{
		claimBusCosts(run, idx), claimNodeWorst(run, idx), claimTomcatBest(run, idx), claimMemory(run, idx),
		claimBusyAreFast(run, idx), claimNodeCPU(run, idx), claimConstantMemory(run, idx),
	}
}

// judged reports whether a contender's cell at a level may count in a claim: run, ended ok,
// and its figures the server's (scenario.Summaries.Tag: not client-bound, shared, faulty or
// failing).
func judged(idx scenario.Summaries, contender, level string) bool {
	_, ok := idx.Tag(contender, level, Tag)
	return ok
}

// samples are a contender's values of figure at a level, one per repeat; none where its
// cell may not count.
func samples(run *results.Run, idx scenario.Summaries, contender, level, figure string) []float64 {
	if !judged(idx, contender, level) {
		return nil
	}
	return scenario.Samples(run, contender, level, Tag, figure)
}

// present reports whether every named contender has a usable figure at some level.
func present(run *results.Run, idx scenario.Summaries, names ...string) bool {
	for _, n := range names {
		if !slices.ContainsFunc(allLevels(run), func(l string) bool { return judged(idx, n, l) }) {
			return false
		}
	}
	return true
}

func allLevels(run *results.Run) []string {
	var out []string
	for _, l := range run.Scenario.Levels {
		out = append(out, l.Name)
	}
	return out
}

// topLevels are each group's largest level: where differences between stacks show most.
func topLevels(run *results.Run) []string {
	var out []string
	for _, g := range groupsOf(run) {
		ls := levelsOf(run, g)
		if len(ls) > 0 {
			out = append(out, ls[len(ls)-1].Name)
		}
	}
	return out
}

// rank is a part of a claim that orders one stack against others by one figure ("mean",
// "cpu_pct", "rss_mb"): at a level it holds when who's figure is on side want of every
// rival measured there beyond the noise (scenario.Compare over the repeats). A tie is no
// order, so a claim that needs one is not held by it.
type rank struct {
	who    string
	rivals []string
	figure string
	want   scenario.Order
	what   string // what holding means, e.g. "node-express the worst latency"
}

// shownMisses is how many levels where a rank did not hold its why names.
const shownMisses = 3

// part counts the levels where the rank holds, over those where who and a rival were
// measured; ranks found at a few of many levels, no more than chance gives, are no order
// (scenario.CountOrders, each level's chance scenario.FalseRank's).
func (r rank) part(run *results.Run, idx scenario.Summaries, levels []string) scenario.Part {
	var passed, of int
	var chance float64
	var misses []string
	for _, l := range levels {
		mine := samples(run, idx, r.who, l, r.figure)
		if len(mine) == 0 {
			continue
		}
		var against []string
		var sizes []int // each rival's repeats, for the chance of this level's rank
		for _, rival := range r.rivals {
			theirs := samples(run, idx, rival, l, r.figure)
			if rival == r.who || len(theirs) == 0 {
				continue
			}
			sizes = append(sizes, len(theirs))
			if o, why := scenario.Compare(mine, theirs); o != r.want {
				rel := fmt.Sprintf("%s than %s", o, rival)
				if o == scenario.Tie {
					rel = "a tie with " + rival
				}
				against = append(against, rel+": "+why)
			}
		}
		if len(sizes) == 0 {
			continue
		}
		chance = max(chance, scenario.FalseRank(len(mine), sizes))
		of++
		if len(against) == 0 {
			passed++
			continue
		}
		misses = append(misses, l+": "+strings.Join(against, ", "))
	}
	if of == 0 {
		return scenario.Part{Verdict: results.ClaimUntested, Why: r.what + ": " + r.who + " not measured beside the others"}
	}
	why := fmt.Sprintf("%s at %d of %d levels", r.what, passed, of)
	if len(misses) > shownMisses {
		misses = append(misses[:shownMisses], fmt.Sprintf("%d levels more", len(misses)-shownMisses))
	}
	if len(misses) > 0 {
		why += fmt.Sprintf(" (not at %s; a tie is no order)", strings.Join(misses, "; "))
	}
	verdict, chanceNote := scenario.CountOrders(passed, of, chance)
	if chanceNote != "" {
		why += "; " + chanceNote
	}
	return scenario.Part{Verdict: verdict, Why: why}
}

func claimBusCosts(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "a", Text: "Vert.x with the EventBus has higher latency (seeds/000 line 176) and uses much more CPU (line 188) than without it."}
	if !present(run, idx, "vertx", "vertx-eventbus") {
		c.Verdict, c.Why = results.ClaimUntested, "needs vertx and vertx-eventbus"
		return c
	}
	// "much greater use of the CPU": the seed gives no figure, so more beyond the noise.
	levels := allLevels(run)
	return scenario.Combine(c,
		rank{"vertx-eventbus", []string{"vertx"}, "mean", scenario.Above, "vertx-eventbus higher latency than vertx"}.part(run, idx, levels),
		rank{"vertx-eventbus", []string{"vertx"}, "cpu_pct", scenario.Above, "vertx-eventbus more CPU than vertx"}.part(run, idx, levels))
}

// claimNodeWorst rests on the cores: single-threaded Node against multi-threaded Java, and a
// cluster spreading over the cores (lines 178–180); on one core a cluster is one worker and
// a relay.
func claimNodeWorst(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "b", Text: "Single-process Node.js has the worst latency, and cluster improves it (seeds/000 lines 178–180)."}
	if !present(run, idx, "node-express", "node-express-cluster") {
		c.Verdict, c.Why = results.ClaimUntested, "needs node-express and node-express-cluster"
	} else {
		levels := topLevels(run)
		c = scenario.Combine(c,
			rank{"node-express", studyStacks, "mean", scenario.Above, "at each room count's largest level: node-express the worst latency"}.part(run, idx, levels),
			rank{"node-express-cluster", []string{"node-express"}, "mean", scenario.Below, "node-express-cluster faster than node-express"}.part(run, idx, levels))
	}
	return atStudyCores(c, run, "lines 178–180: single-threaded Node against multi-threaded Java, a cluster over the processors")
}

// claimTomcatBest: the study puts both Spring servers ahead of the rest, "followed by Akka"
// (line 174), and Spring on Tomcat the best (line 182); its stacks differ in how they use
// the cores (threads per connection, event loops per core, one Node thread), so it rests on
// them as (b) does.
func claimTomcatBest(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "c", Text: "Spring on Tomcat has the best latency, Akka (Play) the next best after the two Spring stacks (among the study's stacks; seeds/000 lines 174, 182)."}
	if !present(run, idx, "spring-mvc", "play-akka") {
		c.Verdict, c.Why = results.ClaimUntested, "needs spring-mvc and play-akka"
	} else {
		var notSpring []string
		for _, s := range studyStacks {
			if !strings.HasPrefix(s, "spring-mvc") {
				notSpring = append(notSpring, s)
			}
		}
		levels := topLevels(run)
		c = scenario.Combine(c,
			rank{"spring-mvc", studyStacks, "mean", scenario.Below, "at each room count's largest level: spring-mvc the best latency"}.part(run, idx, levels),
			rank{"play-akka", notSpring, "mean", scenario.Below, "play-akka the best after the two Spring stacks"}.part(run, idx, levels))
	}
	return atStudyCores(c, run, "lines 174–182: multi-threaded Java against single-threaded Node, ranked on the study's cores")
}

// claimBusyAreFast: (e) the stacks with the better times use more CPU (line 186) than those
// with worse times, the EventBus aside (line 188 is its own, in (a)). On one core every
// stack's CPU is capped at 100 %: the more of a stack that spreads over cores cannot show.
func claimBusyAreFast(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "e", Text: "Spring (Tomcat, Jetty) and Akka, the stacks with the better times, use more CPU than Vert.x without the EventBus and the two Node stacks (seeds/000 line 186)."}
	slower := []string{"vertx", "node-express", "node-express-cluster"}
	levels := topLevels(run)
	var parts []scenario.Part
	for _, busy := range []string{"spring-mvc", "spring-mvc-jetty", "play-akka"} {
		parts = append(parts, rank{busy, slower, "cpu_pct", scenario.Above, "at each room count's largest level: " + busy + " more CPU than " + strings.Join(slower, ", ")}.part(run, idx, levels))
	}
	c = scenario.Combine(c, parts...)
	return atStudyCores(c, run, "lines 111 and 186: CPU over 100 % is the use of several cores")
}

// oneCore is one core's CPU and the noise of one measurement of it: single Node at most
// this is "limited to a single processor" (line 190), the cluster above it uses several.
const oneCore = 100 * (1 + scenario.SingleRunNoise)

// claimNodeCPU: (f) the Node stacks use much less CPU than the Java stacks; single Node is
// limited to one processor, the cluster uses several (line 190): a claim about cores.
func claimNodeCPU(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "f", Text: "The Node.js stacks use less CPU than the Java stacks; single Node.js is limited to one processor, the cluster uses several (seeds/000 line 190)."}
	levels := topLevels(run)
	c = scenario.Combine(c,
		rank{"node-express", javaStacks, "cpu_pct", scenario.Below, "at each room count's largest level: node-express less CPU than every Java stack"}.part(run, idx, levels),
		rank{"node-express-cluster", javaStacks, "cpu_pct", scenario.Below, "node-express-cluster less CPU than every Java stack"}.part(run, idx, levels),
		cpuLine(run, idx, levels, "node-express", false),
		cpuLine(run, idx, levels, "node-express-cluster", true))
	return atStudyCores(c, run, "line 190: one processor against several")
}

// cpuLine is a part that holds at the levels where who's CPU (the median over repeats) is
// beyond one core (above) or within it (!above).
func cpuLine(run *results.Run, idx scenario.Summaries, levels []string, who string, above bool) scenario.Part {
	var passed, of int
	var figs []string
	for _, l := range levels {
		if !judged(idx, who, l) {
			continue
		}
		cpu := idx[who][l].CPUPct.Median
		of++
		if (cpu > oneCore) == above {
			passed++
		}
		figs = append(figs, fmt.Sprintf("%s %.0f %%", l, cpu))
	}
	what := fmt.Sprintf("%s within one core (at most %.0f %% CPU)", who, oneCore)
	if above {
		what = fmt.Sprintf("%s beyond one core (over %.0f %% CPU)", who, oneCore)
	}
	if of == 0 {
		return scenario.Part{Verdict: results.ClaimUntested, Why: what + ": not measured"}
	}
	return scenario.Part{Verdict: scenario.Count(passed, of), Why: fmt.Sprintf("%s at %d of %d levels (%s)", what, passed, of, strings.Join(figs, ", "))}
}

// claimMemory: (d) Node.js uses the least memory (line 198), and Vert.x with the EventBus
// and Akka use more above 40 users, "with any number of rooms" (line 194): all users of a
// level. Memory does not rest on the cores in the study's words: no condition.
func claimMemory(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "d", Text: "Node.js uses the least memory (among the study's stacks; seeds/000 line 198); Vert.x with EventBus and Akka use more memory above 40 users (line 194)."}
	var lighter []string
	for _, s := range studyStacks {
		if !strings.HasPrefix(s, "node-express") {
			lighter = append(lighter, s)
		}
	}
	least := rank{"node-express", lighter, "rss_mb", scenario.Below, "node-express the least memory"}.part(run, idx, allLevels(run))
	if results.Untested(least.Verdict) {
		least.Why = "node-express was not measured beside the Java stacks"
	}
	return scenario.Combine(c, least, growthPart(run, idx, risesOf, true))
}

// claimConstantMemory: (g) Vert.x without the EventBus and the Spring Boot applications
// keep a constant memory (line 196): they grow by less than the least rise the study calls
// one.
func claimConstantMemory(run *results.Run, idx scenario.Summaries) results.Claim {
	c := results.Claim{ID: "g", Text: "Vert.x without the EventBus and Spring Boot (Tomcat, Jetty) keep a constant memory as users grow past 40 (seeds/000 line 196)."}
	return scenario.Combine(c, growthPart(run, idx, constantOf, false))
}

// The study's memory (seeds/000 line 194): the Java stacks at 9–12 % of the machine's at low
// load; above 40 users Vert.x with the EventBus at 25 % and Akka at 15 %. The least rise
// those figures give is theirs against the low load's 12 %: 25/12 (over 100 %) and 15/12
// (25 %). "Constant" (line 196) is less than the least rise the study calls one, Akka's.
var (
	risesOf    = map[string]float64{"vertx-eventbus": 25.0 / 12, "play-akka": 15.0 / 12}
	constantOf = map[string]float64{"vertx": 15.0 / 12, "spring-mvc": 15.0 / 12, "spring-mvc-jetty": 15.0 / 12}
)

// growthPart counts the stacks of lines whose peak RSS above 40 users in all against their
// peak at 40 or fewer rises by at least their line (rise) or stays below it (!rise). A rise
// is an order, more memory, so it counts only beyond the noise of the two levels' repeats
// (scenario.Compare): past the line but a tie, it neither makes (d) hold nor (g) fail.
func growthPart(run *results.Run, idx scenario.Summaries, lines map[string]float64, rise bool) scenario.Part {
	var passed, of int
	var figs []string
	for _, name := range slices.Sorted(maps.Keys(lines)) {
		g, ok := growth(run, idx, name)
		if !ok {
			continue
		}
		of++
		ratio := g.high / g.low
		fig := fmt.Sprintf("%s %.0f → %.0f MB, %.2f×", name, g.low, g.high, ratio)
		risen := ratio >= lines[name]
		if risen {
			order, why := scenario.Compare(samples(run, idx, name, g.highLevel, "rss_mb"), samples(run, idx, name, g.lowLevel, "rss_mb"))
			if order != scenario.Above {
				risen = false
				fig += ", a rise inside the noise (" + why + ")"
			}
		}
		if risen == rise {
			passed++
		}
		figs = append(figs, fig)
	}
	what := "a rise above 40 users of at least the study's (×2.08 for vertx-eventbus: 12 → 25 %; ×1.25 for play-akka: 12 → 15 %; seeds/000 line 194)"
	if !rise {
		what = "constant above 40 users: a rise below ×1.25, the least the study calls one (Akka's 12 → 15 %, seeds/000 line 194)"
	}
	if of == 0 {
		return scenario.Part{Verdict: results.ClaimUntested, Why: what + ": needs " + strings.Join(slices.Sorted(maps.Keys(lines)), " or ") + " measured both above 40 users and at or below"}
	}
	return scenario.Part{Verdict: scenario.Count(passed, of), Why: fmt.Sprintf("%s in %d of %d (%s)", what, passed, of, strings.Join(figs, "; "))}
}

// peaks are a contender's peak RSS (the median over repeats) at levels of more than 40 users
// in all and at those of 40 or fewer (line 194's split), with the levels they were reached at.
type peaks struct {
	low, high           float64
	lowLevel, highLevel string
}

// growth is a contender's peaks; ok when both sides of the split were measured.
func growth(run *results.Run, idx scenario.Summaries, name string) (g peaks, ok bool) {
	for _, l := range run.Scenario.Levels {
		if !judged(idx, name, l.Name) {
			continue
		}
		rss := idx[name][l.Name].RSSMB.Median
		switch {
		case usersOf(l) <= 40 && rss > g.low:
			g.low, g.lowLevel = rss, l.Name
		case usersOf(l) > 40 && rss > g.high:
			g.high, g.highLevel = rss, l.Name
		}
	}
	return g, g.low > 0 && g.high > 0
}

// usersOf is a level's users in all: rooms × users per room.
func usersOf(l results.Level) int {
	var rooms, users int
	if _, err := fmt.Sscanf(l.Name, "r%d-u%d", &rooms, &users); err != nil {
		return 0
	}
	return rooms * users
}
