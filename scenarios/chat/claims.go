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
// rival measured there beyond the noise (scenario.Compare over the repeats), fails when it is
// on the other side of some rival, and is not shown otherwise: a tie is no evidence either
// way (scenario.OrderVerdict).
type rank struct {
	who    string
	rivals []string
	figure string
	want   scenario.Order
	what   string // what holding means, e.g. "node-express the worst latency"
}

// shownMisses is how many levels where a rank did not hold its why names.
const shownMisses = 3

// part counts the levels where the rank holds, fails and is not shown, over those where who
// and a rival were measured; orders found at a few of many levels, no more than chance gives,
// are not shown (scenario.CountOrders, each level's chance scenario.FalseRank's).
func (r rank) part(run *results.Run, idx scenario.Summaries, levels []string) scenario.Part {
	var held, reversed, of int
	var chance float64
	var misses []string
	for _, l := range levels {
		mine := samples(run, idx, r.who, l, r.figure)
		if len(mine) == 0 {
			continue
		}
		var against []string
		var sizes []int // each rival's repeats, for the chance of this level's rank
		other := false
		for _, rival := range r.rivals {
			theirs := samples(run, idx, rival, l, r.figure)
			if rival == r.who || len(theirs) == 0 {
				continue
			}
			sizes = append(sizes, len(theirs))
			if o, why := scenario.Compare(mine, theirs); o != r.want {
				rel := fmt.Sprintf("%s than %s", o, rival)
				if o == scenario.Tie {
					rel = "not separated from " + rival
				} else {
					other = true
				}
				against = append(against, rel+": "+why)
			}
		}
		if len(sizes) == 0 {
			continue
		}
		chance = max(chance, scenario.FalseRank(len(mine), sizes))
		of++
		switch {
		case len(against) == 0:
			held++
			continue
		case other:
			reversed++
		}
		misses = append(misses, l+": "+strings.Join(against, ", "))
	}
	if of == 0 {
		return scenario.Part{Verdict: results.ClaimUntested, Why: r.what + ": " + r.who + " not measured beside the others"}
	}
	why := fmt.Sprintf("%s at %d of %d levels, the other way at %d, not shown at %d", r.what, held, of, reversed, of-held-reversed)
	if len(misses) > shownMisses {
		misses = append(misses[:shownMisses], fmt.Sprintf("%d levels more", len(misses)-shownMisses))
	}
	if len(misses) > 0 {
		why += fmt.Sprintf(" (not at %s)", strings.Join(misses, "; "))
	}
	verdict, chanceNote := scenario.CountOrders(held, reversed, of, chance)
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
	levels := allLevels(run)
	cpu, conds := scenario.PartAtConditions(muchMoreCPU(run, idx, levels), run,
		studyCores("lines 111 and 188: CPU over 100 % is the use of several cores, as in (e) and (f)"))
	c.Conditions = conds
	return scenario.Combine(c,
		rank{"vertx-eventbus", []string{"vertx"}, "mean", scenario.Above, "vertx-eventbus higher latency than vertx"}.part(run, idx, levels),
		cpu)
}

// muchMore is the size of "much greater use of the CPU" (seeds/000 line 188). The study
// gives its CPU as charts only, no figure; the least difference it names with figures is the
// least rise it calls one, Akka's memory 12 → 15 % (line 194): ×1.25.
const muchMore = 15.0 / 12

// muchMoreCPU is (a)'s CPU half: at each level where both were measured, vertx-eventbus's CPU
// at least muchMore times vertx's over the repeats (scenario.AtLeast).
func muchMoreCPU(run *results.Run, idx scenario.Summaries, levels []string) scenario.Part {
	what := "vertx-eventbus much more CPU than vertx"
	var n scenario.Counts
	var figs []string
	for _, l := range levels {
		bus, plain := samples(run, idx, "vertx-eventbus", l, "cpu_pct"), samples(run, idx, "vertx", l, "cpu_pct")
		if len(bus) == 0 || len(plain) == 0 {
			continue
		}
		verdict, why := scenario.AtLeast(bus, plain, muchMore, "seeds/000 line 194: the least rise the study names, Akka's 12 → 15 %; line 188 gives no figure")
		n.Add(verdict)
		if len(figs) < shownMisses {
			figs = append(figs, l+": "+why)
		}
	}
	if n.Of() == 0 {
		return scenario.Part{Verdict: results.ClaimUntested, Why: what + ": not measured side by side"}
	}
	return scenario.Part{Verdict: n.Verdict(),
		Why: fmt.Sprintf("%s at %d of %d levels, less at %d, not shown at %d (%s)", what, n.Held, n.Of(), n.Failed, n.NotShown, strings.Join(figs, "; "))}
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
// keep a constant memory (line 196): above 40 users the same as at the low workload, within
// the least rise the study calls one, by an equivalence test (scenario.Alike).
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

// lowWorkload is the study's "low workloads" (line 194), the one baseline of (d) and (g) and
// of their figure rows (reproduction.go): 10 users in one room, its one-room ladder's first.
var lowWorkload = levelName(1, 10)

// growthPart judges each stack of lines on its peak RSS above 40 users in all (the level of
// the highest median) against the low workload, over the two levels' repeats: a rise of at
// least its line (rise: scenario.AtLeast), or constancy, the ratio's interval within
// ×1/1.25–×1.25 (!rise: scenario.Alike). A stack whose interval cannot decide is not shown.
func growthPart(run *results.Run, idx scenario.Summaries, lines map[string]float64, rise bool) scenario.Part {
	var n scenario.Counts
	var figs []string
	for _, name := range slices.Sorted(maps.Keys(lines)) {
		high, ok := highLevel(run, idx, name)
		if !ok || !judged(idx, name, lowWorkload) {
			continue
		}
		hi, lo := samples(run, idx, name, high, "rss_mb"), samples(run, idx, name, lowWorkload, "rss_mb")
		var verdict, why string
		if rise {
			verdict, why = scenario.AtLeast(hi, lo, lines[name], "seeds/000 line 194")
		} else {
			verdict, why = scenario.Alike(hi, lo, constantMemory)
		}
		n.Add(verdict)
		figs = append(figs, fmt.Sprintf("%s %.0f MB at %s → %.0f MB at %s, %s", name, idx[name][lowWorkload].RSSMB.Median, lowWorkload, idx[name][high].RSSMB.Median, high, why))
	}
	what := "a rise above 40 users, against the study's low workload (10 users), of at least the study's (×2.08 for vertx-eventbus: 12 → 25 %; ×1.25 for play-akka: 12 → 15 %; seeds/000 line 194)"
	if !rise {
		what = "constant above 40 users against the study's low workload (10 users)"
	}
	if n.Of() == 0 {
		return scenario.Part{Verdict: results.ClaimUntested, Why: what + ": needs " + strings.Join(slices.Sorted(maps.Keys(lines)), " or ") + " measured both above 40 users and at " + lowWorkload}
	}
	return scenario.Part{Verdict: n.Verdict(),
		Why: fmt.Sprintf("%s: shown in %d of %d, shown otherwise in %d, not shown in %d (%s)", what, n.Held, n.Of(), n.Failed, n.NotShown, strings.Join(figs, "; "))}
}

// constantMemory is "a constant memory" (line 196): the same within the least rise the
// study calls one (line 194), either way.
var constantMemory = scenario.Tolerance{Want: 1, Frac: 15.0/12 - 1, Words: `"a constant memory usage" (seeds/000 line 196)`,
	Source: "seeds/000 line 194: below ×1.25, the least rise the study calls one (Akka's 12 → 15 %)"}

// highLevel is the level above 40 users in all (line 194's split) where a contender's peak
// RSS (the median over repeats) is highest; false when none was measured.
func highLevel(run *results.Run, idx scenario.Summaries, name string) (string, bool) {
	var level string
	var peak float64
	for _, l := range run.Scenario.Levels {
		if usersOf(l) <= 40 || !judged(idx, name, l.Name) {
			continue
		}
		if rss := idx[name][l.Name].RSSMB.Median; rss > peak {
			peak, level = rss, l.Name
		}
	}
	return level, peak > 0
}

// usersOf is a level's users in all: rooms × users per room.
func usersOf(l results.Level) int {
	var rooms, users int
	if _, err := fmt.Sscanf(l.Name, "r%d-u%d", &rooms, &users); err != nil {
		return 0
	}
	return rooms * users
}
