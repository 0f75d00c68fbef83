package stream

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// Fate is how one cell's server came through: whether it failed, how, and its memory.
type Fate struct {
	Failed   string  // "" or out-of-memory | crashed | unresponsive
	PeakMB   float64 // the server's highest RSS
	GrowthMB float64 // what the last third of the load added to the middle third's peak
	CapMB    float64
	Seconds  float64 // of load: up to the failure, if it failed
	// Unanswered of Polls of /stream/stats went without an answer within 2 s.
	Unanswered, Polls int
}

// stalled is a server that left at least two stats polls, and a fifth of them, unanswered.
func stalled(s *results.Stream) bool {
	return s.StatsFailed >= 2 && s.StatsFailed*5 >= len(s.StatsTimeline)
}

// FateOf reads a measured cell.
func FateOf(c results.Cell) Fate {
	f := Fate{PeakMB: c.Server.Summary.RSSMBMax, Seconds: c.Seconds}
	if c.Memory != nil {
		f.CapMB = c.Memory.CapMB
	}
	switch {
	case c.Outcome.Status == results.OutcomeOutOfMemory || c.Outcome.Status == results.OutcomeCrashed:
		f.Failed = c.Outcome.Status
	case c.Stream != nil && (!c.Stream.Responsive || stalled(c.Stream)):
		// a server stuck collecting garbage at its heap limit answers nothing, yet may
		// recover once its clients are gone: an outage during the load is a failure too
		f.Failed = "unresponsive"
		f.Unanswered, f.Polls = c.Stream.StatsFailed, len(c.Stream.StatsTimeline)
	}
	// Growth is the last third's peak over the middle third's: the first third is the
	// kernel's socket buffers filling (megabytes a connection, the study's QS column) and the
	// server's queues filling behind them, which a bounded server does once.
	var middle, last float64
	for _, s := range c.Server.Timeline {
		switch {
		case s.T >= c.Seconds*2/3:
			last = max(last, s.RSSMB)
		case s.T >= c.Seconds/3:
			middle = max(middle, s.RSSMB)
		}
	}
	if middle > 0 && last > middle {
		f.GrowthMB = last - middle
	}
	return f
}

// Bounded is memory that held: no failure, under the cap, and no growth worth the name in the
// last third.
func (f Fate) Bounded() bool {
	return f.Failed == "" && (f.CapMB == 0 || f.PeakMB < f.CapMB) && f.GrowthMB <= growthShare*max(f.CapMB, 512)
}

// Grew is memory that failed or kept growing.
func (f Fate) Grew() bool { return f.Failed != "" || f.GrowthMB > growthShare*max(f.CapMB, 512) }

func (f Fate) String() string {
	mem := fmt.Sprintf("RSS peak %.0f MB", f.PeakMB)
	if f.CapMB > 0 {
		mem += fmt.Sprintf(" of a %.0f MB cap", f.CapMB)
	}
	if f.GrowthMB > 0 {
		mem += fmt.Sprintf(", +%.0f MB in the last third", f.GrowthMB)
	}
	if f.Unanswered > 0 {
		mem += fmt.Sprintf(", %d of %d stats polls unanswered", f.Unanswered, f.Polls)
	}
	if f.Failed != "" {
		return fmt.Sprintf("%s after %.1f s (%s)", f.Failed, f.Seconds, mem)
	}
	return mem
}

// measured is a contender's cells at one level that ran (not unsupported, skipped or
// interrupted).
func measured(run *results.Run, contender, level string) []results.Cell {
	var out []results.Cell
	for _, c := range run.Cells {
		if c.Contender == contender && c.Level == level && c.Stream != nil {
			out = append(out, c)
		}
	}
	return out
}

// worst is the fate of the cell that fared worst: a failure over growth over none.
func worst(cells []results.Cell) (Fate, bool) {
	if len(cells) == 0 {
		return Fate{}, false
	}
	w := FateOf(cells[0])
	for _, c := range cells[1:] {
		f := FateOf(c)
		if (f.Failed != "" && w.Failed == "") || (f.Failed == w.Failed && f.GrowthMB > w.GrowthMB) {
			w = f
		}
	}
	return w, true
}

// delivered is the median over repeats of messages/s the clients read, and whether the server
// failed in any of them (its rate is then over the time it lasted).
func delivered(cells []results.Cell) (float64, bool, bool) {
	var rates []float64
	failed := false
	for _, c := range cells {
		rates = append(rates, c.Stream.PerSecond)
		failed = failed || FateOf(c).Failed != ""
	}
	if len(rates) == 0 {
		return 0, false, false
	}
	slices.Sort(rates)
	return rates[len(rates)/2], failed, true
}

// Judge gives each contender a verdict on memory and cost, and the study's two claims theirs.
func (Scenario) Judge(run *results.Run) ([]results.Verdict, []results.Claim) {
	var verdicts []results.Verdict
	for _, ct := range run.Contenders {
		if v, ok := judge(run, ct.Name); ok {
			verdicts = append(verdicts, v)
		}
	}
	return verdicts, []results.Claim{claimGrowsUntilFails(run), claimBoundedAtSmallCost(run)}
}

func judge(run *results.Run, name string) (results.Verdict, bool) {
	var parts []string
	verdict := ""
	if on, ok := worst(measured(run, name, SlowOn)); ok {
		parts = append(parts, "slow consumers with back-pressure: "+on.String())
		if on.Bounded() {
			verdict = "bounded"
		} else {
			verdict = "unbounded"
		}
	}
	if off, ok := worst(measured(run, name, SlowOff)); ok {
		parts = append(parts, "without: "+off.String())
	}
	if cost, why, ok := costOf(run, name); ok {
		parts = append(parts, why)
		if verdict == "bounded" && cost > maxCost {
			verdict = "bounded, costly"
		}
	}
	if len(parts) == 0 {
		return results.Verdict{}, false
	}
	if verdict == "" {
		verdict = "n/a"
	}
	return results.Verdict{Contender: name, Level: SlowOn, Verdict: verdict, Why: strings.Join(parts, "; ")}, true
}

// costOf is what back-pressure cost a contender in delivered messages/s.
func costOf(run *results.Run, name string) (float64, string, bool) {
	on, onFailed, ok1 := delivered(measured(run, name, ThroughputOn))
	off, offFailed, ok2 := delivered(measured(run, name, ThroughputOff))
	if !ok1 || !ok2 || off <= 0 {
		return 0, "", false
	}
	cost := 1 - on/off
	why := fmt.Sprintf("throughput %.0f msg/s with back-pressure, %.0f without (cost %+.0f %%)", on, off, cost*100)
	if offFailed {
		why += "; without back-pressure it failed during the throughput run, its rate is over the time it lasted"
	}
	if onFailed {
		why += "; with back-pressure it failed during the throughput run"
	}
	return cost, why, true
}

// claimGrowsUntilFails: (a) without back-pressure, slow clients grow server memory until it
// fails.
func claimGrowsUntilFails(run *results.Run) results.Claim {
	cl := results.Claim{ID: "a", Text: "Without back-pressure, slow clients grow the server's memory until it fails."}
	var failed, grew, held []string
	for _, ct := range run.Contenders {
		f, ok := worst(measured(run, ct.Name, SlowOff))
		switch {
		case !ok:
		case f.Failed != "":
			failed = append(failed, fmt.Sprintf("%s (%s)", ct.Name, f))
		case f.Grew():
			grew = append(grew, fmt.Sprintf("%s (%s)", ct.Name, f))
		default:
			held = append(held, fmt.Sprintf("%s (%s)", ct.Name, f))
		}
	}
	return judged(cl, SlowOff, []outcomeGroup{{"failed", failed}, {"grew but lasted the run", grew}, {"held its memory", held}})
}

// outcomeGroup is the contenders that came out one way under a claim, in the claim's terms.
type outcomeGroup struct {
	what string
	list []string
}

// judged gives a claim its verdict from its groups, the first the claim's support and the last
// its refutation (holds: all in the first; fails: all in the last; partly otherwise), and says
// who is in which.
func judged(cl results.Claim, level string, groups []outcomeGroup) results.Claim {
	n := 0
	var why []string
	for _, g := range groups {
		n += len(g.list)
		if len(g.list) > 0 {
			why = append(why, g.what+": "+strings.Join(g.list, ", "))
		}
	}
	switch {
	case n == 0:
		cl.Verdict, cl.Why = "untested", "no contender ran "+level
		return cl
	case len(groups[0].list) == n:
		cl.Verdict = "holds"
	case len(groups[len(groups)-1].list) == n:
		cl.Verdict = "fails"
	default:
		cl.Verdict = "partly"
	}
	cl.Why = strings.Join(why, "; ")
	return cl
}

// claimBoundedAtSmallCost: (b) with back-pressure memory stays bounded at ≤ 20 % throughput
// cost.
func claimBoundedAtSmallCost(run *results.Run) results.Claim {
	cl := results.Claim{ID: "b", Text: "With back-pressure, memory stays bounded at a throughput cost of at most 20 %."}
	var good, costly, unbounded []string
	for _, ct := range run.Contenders {
		f, ok := worst(measured(run, ct.Name, SlowOn))
		if !ok {
			continue
		}
		cost, why, costKnown := costOf(run, ct.Name)
		switch {
		case !f.Bounded():
			unbounded = append(unbounded, fmt.Sprintf("%s (%s)", ct.Name, f))
		case costKnown && cost > maxCost:
			costly = append(costly, fmt.Sprintf("%s (%s)", ct.Name, why))
		default:
			entry := fmt.Sprintf("%s (%s", ct.Name, f)
			if costKnown {
				entry += "; " + why
			}
			good = append(good, entry+")")
		}
	}
	return judged(cl, SlowOn, []outcomeGroup{{"bounded at ≤ 20 % cost", good}, {"bounded but costing more than 20 %", costly}, {"not bounded", unbounded}})
}
