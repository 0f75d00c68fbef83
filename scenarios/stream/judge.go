package stream

import (
	"fmt"
	"math"
	"strings"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	streamload "github.com/arena-lab/arena/internal/stream"
)

// Fate is how one cell's server came through: whether it failed, how, and its memory.
type Fate struct {
	Failed   string  // "" or out-of-memory | crashed | unresponsive
	PeakMB   float64 // the server's highest RSS
	GrowthMB float64 // what the last third of the load added to the middle third's peak
	CapMB    float64
	Seconds  float64 // of load: up to the failure, if it failed
	// SilentFor seconds from SilentFrom the server left /stream/stats unanswered, when that
	// made it unresponsive.
	SilentFrom, SilentFor float64
	// Faults are what its clients caught it at (lost, duplicated, …): a server with any is
	// judged faults, never bounded.
	Faults map[string]int64
	// Trend is its memory's growth over the load, and where it meets the cap.
	Trend Trend
}

// FateOf reads a measured cell.
func FateOf(c results.Cell) Fate {
	f := Fate{PeakMB: c.Server.Summary.RSSMBMax, Seconds: c.Seconds, Faults: c.Faults, Trend: TrendOf(c)}
	if c.Memory != nil {
		f.CapMB = c.Memory.CapMB
	}
	sf, measured := streamload.FiguresOf(c)
	switch {
	case c.Outcome.Status == results.OutcomeOutOfMemory || c.Outcome.Status == results.OutcomeCrashed || c.Outcome.Status == results.OutcomeUnresponsive:
		f.Failed = c.Outcome.Status
	case measured && sf.Unresponsive():
		// a server stuck collecting garbage at its heap limit answers nothing, yet may
		// recover once its clients are gone: an outage during the load is a failure too,
		// by the lab's one rule for unresponsive (results.SilenceLimit)
		f.Failed = results.OutcomeUnresponsive
		f.SilentFrom, f.SilentFor = sf.Silence()
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

// Bounded is memory that held: no failure, no delivery fault, under the cap, and no growth
// worth the name in the last third.
func (f Fate) Bounded() bool {
	return f.Failed == "" && len(f.Faults) == 0 && (f.CapMB == 0 || f.PeakMB < f.CapMB) && f.GrowthMB <= growthShare*max(f.CapMB, 512)
}

func (f Fate) String() string {
	mem := fmt.Sprintf("RSS peak %.0f MB", f.PeakMB)
	if f.CapMB > 0 {
		mem += fmt.Sprintf(" of a %.0f MB cap", f.CapMB)
	}
	if f.GrowthMB > 0 {
		mem += fmt.Sprintf(", +%.0f MB in the last third", f.GrowthMB)
	}
	if f.Trend.Known {
		mem += "; " + f.Trend.String()
	}
	if f.SilentFor > 0 {
		mem += fmt.Sprintf(", /stream/stats unanswered for %.1f s from %.1f s", f.SilentFor, f.SilentFrom)
	}
	if len(f.Faults) > 0 {
		mem += ", delivery faults: " + results.FormatFaults(f.Faults)
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
		if _, ok := streamload.FiguresOf(c); ok && c.Contender == contender && c.Level == level {
			out = append(out, c)
		}
	}
	return out
}

// rate is a contender's delivered messages/s at a throughput level: the median over its
// repeats (from the run's summary) when every repeat lasted the load with figures that are
// the server's; else none, and why. A rate is compared with another only then: a baseline
// that died, froze or was excluded gives no comparison (a dead server's rate is over the
// seconds it lasted, and any cost against it passes).
type rate struct {
	perS float64
	ok   bool
	note string // why there is no rate to compare
}

func delivered(run *results.Run, contender, level string) rate {
	cells := measured(run, contender, level)
	if len(cells) == 0 {
		return rate{}
	}
	for _, c := range cells {
		if note, excluded := excludedRate(c); excluded {
			return rate{note: note}
		}
	}
	var r rate
	for _, cs := range run.Summary {
		if cs.Contender == contender && cs.Level == level {
			sp, ok := cs.Numbers[streamload.NumberDelivered]
			r.perS, r.ok = sp.Median, ok
		}
	}
	return r
}

// excludedRate says why a cell's rate cannot be compared, if it cannot.
func excludedRate(c results.Cell) (string, bool) {
	f := FateOf(c)
	sf, _ := streamload.FiguresOf(c)
	switch {
	case len(f.Faults) > 0:
		return "delivery faults (" + results.FormatFaults(f.Faults) + "): not ranked", true
	case c.ClientBound:
		return "client-bound: not the server's rate", true
	case c.SharedCPU:
		return "shared CPU: not the server's rate", true
	case f.Failed != "" && sf.Seconds > 0 && sf.PerSecond > 0:
		return fmt.Sprintf("it died (%s) %.1f s in, after %.0f msg/s over those seconds: a rate that did not last the load is no baseline", f.Failed, sf.Seconds, sf.PerSecond), true
	case f.Failed != "":
		return fmt.Sprintf("it did not last the load (%s): no rate to compare", f.Failed), true
	}
	return "", false
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

// The verdicts on memory under slow consumers with back-pressure, and on its cost.
var (
	Bounded       = scenario.Word{Text: "bounded", Tone: results.Good}
	BoundedCostly = scenario.Word{Text: "bounded, costly", Tone: results.Mixed}
	Unbounded     = scenario.Word{Text: "unbounded", Tone: results.Bad}
	// NotShown: its repeats disagree on its memory's shape.
	NotShown = scenario.Word{Text: "not shown (repeats disagree)", Tone: results.Neutral}
	// Faults: gaps beyond what it counted as dropped, copies, corrupt or reordered messages,
	// or drops when told to drop nothing, at any level: never bounded.
	Faults = scenario.Faults
)

// faultsOf lists a contender's levels with delivery faults, in plan order.
func faultsOf(run *results.Run, name string) []string {
	var out []string
	for _, level := range []string{ThroughputOn, ThroughputOff, SlowOn, SlowOff} {
		faults := map[string]int64{}
		for _, c := range measured(run, name, level) {
			for k, n := range c.Faults {
				faults[k] += n
			}
		}
		if len(faults) > 0 {
			out = append(out, level+": "+results.FormatFaults(faults))
		}
	}
	return out
}

// disturbed says whether something other than the server set the figures of some cell of a
// contender at level (its client, or other work on its CPUs), and the word for it.
func disturbed(run *results.Run, name, level string) (scenario.Word, bool) {
	var cs results.CellSummary
	for _, c := range measured(run, name, level) {
		cs.ClientBnd, cs.SharedCPU = cs.ClientBnd || c.ClientBound, cs.SharedCPU || c.SharedCPU
	}
	return scenario.Disturbed(cs)
}

func judge(run *results.Run, name string) (results.Verdict, bool) {
	if faults := faultsOf(run, name); len(faults) > 0 {
		return Faults.Verdict(name, SlowOn, "delivery faults, "+strings.Join(faults, "; ")), true
	}
	var parts []string
	verdict := scenario.NotMeasured
	if on, ok := memoryOf(measured(run, name, SlowOn)); ok {
		parts = append(parts, "slow consumers with back-pressure: "+on.String())
		if w, ok := disturbed(run, name, SlowOn); ok {
			verdict = w
		} else {
			verdict = map[bool]scenario.Word{true: Bounded, false: Unbounded}[bounded(on) == results.ClaimHolds]
			if bounded(on) == results.ClaimNotShown {
				verdict = NotShown
			}
		}
	}
	if off, ok := memoryOf(measured(run, name, SlowOff)); ok {
		parts = append(parts, "without: "+off.String())
	}
	if cost, why, ok := costOf(run, name); ok {
		parts = append(parts, why)
		if verdict == Bounded && cost > maxCost {
			verdict = BoundedCostly
		}
	} else if why != "" {
		parts = append(parts, why)
	}
	if len(parts) == 0 {
		return results.Verdict{}, false
	}
	return verdict.Verdict(name, SlowOn, strings.Join(parts, "; ")), true
}

// costLevels are the two levels back-pressure's cost is measured between: the paced ones
// where the run has them (a generator rate a server without back-pressure can carry, so
// that both sides live), else the preset's own throughput levels (seed: the study's fixed
// generator rate). At rate 0 the baseline is outrun by its own generator and dies.
func costLevels(run *results.Run) (on, off string) {
	for _, l := range run.Scenario.Levels {
		if l.Name == PacedOn || l.Name == PacedOff {
			return PacedOn, PacedOff
		}
	}
	for _, c := range run.Cells {
		if c.Level == PacedOn || c.Level == PacedOff {
			return PacedOn, PacedOff
		}
	}
	return ThroughputOn, ThroughputOff
}

// costOf is what back-pressure cost a contender in delivered messages/s, between the
// costLevels, where both lasted the load; without a cost, why says what kept it from one
// (a side that died, froze or was excluded), or is "" when a level was not run.
func costOf(run *results.Run, name string) (cost float64, why string, ok bool) {
	onLevel, offLevel := costLevels(run)
	on, off := delivered(run, name, onLevel), delivered(run, name, offLevel)
	var notes []string
	for _, r := range []struct {
		level string
		rate  rate
	}{{onLevel, on}, {offLevel, off}} {
		if r.rate.note != "" {
			notes = append(notes, r.level+": "+r.rate.note)
		}
	}
	if len(notes) > 0 {
		return 0, "no throughput cost: " + strings.Join(notes, "; "), false
	}
	if !on.ok || !off.ok || off.perS <= 0 {
		return 0, "", false
	}
	cost = 1 - on.perS/off.perS
	return cost, fmt.Sprintf("%s %.0f msg/s with back-pressure, %s %.0f without: %s", onLevel, on.perS, offLevel, off.perS, costWords(cost)), true
}

// costWords says a cost as a reader checks it: a cost "cost +4 %", a negative one as what it
// is, a gain.
func costWords(cost float64) string {
	pct := math.Round(cost * 100)
	switch {
	case pct > 0:
		return fmt.Sprintf("cost +%.0f %%", pct)
	case pct < 0:
		return fmt.Sprintf("a gain of %.0f %%, no cost", -pct)
	}
	return "cost +0 %" // a cost that rounds to nothing reads +0, never -0
}

// claimGrowsUntilFails: (a) without back-pressure, slow clients grow server memory until it
// fails (seeds/003 line 28), by the one growth rule over the repeats (memoryOf): it holds
// where the server failed, or where every repeat's trend reaches the cap within horizon× the
// load's length (the interval of the projected crossing inside the horizon the page states);
// a plateau fails it; repeats that disagree do not show it either way.
func claimGrowsUntilFails(run *results.Run) results.Claim {
	cl := results.Claim{ID: "a", Text: "Without back-pressure, slow clients grow the server's memory until it fails."}
	var failed, grew, held, undecided, uncounted []string
	for _, ct := range run.Contenders {
		m, ok := memoryOf(measured(run, ct.Name, SlowOff))
		if !ok || notCounted(run, ct.Name, SlowOff, &uncounted) {
			continue
		}
		said := fmt.Sprintf("%s (%s)", ct.Name, m)
		switch m.Shape {
		case Failed:
			failed = append(failed, said)
		case Grows:
			grew = append(grew, said)
		case Plateau:
			held = append(held, said)
		case NoTrend:
			uncounted = append(uncounted, fmt.Sprintf("%s (no trend to judge: %s)", ct.Name, m))
		default:
			undecided = append(undecided, said)
		}
	}
	groups := []outcomeGroup{{"failed", failed}, {fmt.Sprintf("grew towards the cap, to reach it within %d× the load's length", horizon), grew}, {"held its memory", held}, {"not shown", undecided}}
	return scenario.Combine(cl, partOf(SlowOff, len(failed)+len(grew), len(held), groups, uncounted))
}

// bounded is claim (b)'s memory verdict on one contender, by the one growth rule: a plateau
// holds, a failure or a growth towards the cap fails, repeats that disagree are not shown;
// without a trend, every repeat bounded by its peak and last third.
func bounded(m Memory) string {
	switch m.Shape {
	case Plateau:
		return results.ClaimHolds
	case Failed, Grows:
		return results.ClaimFails
	case NoTrend:
		if m.BoundedWithoutTrend() {
			return results.ClaimHolds
		}
		return results.ClaimFails
	}
	return results.ClaimNotShown
}

// notCounted says whether a claim leaves a contender out at level, its figures being no
// verdict on the server (client-bound, or delivery faults at any level), and notes why.
func notCounted(run *results.Run, name, level string, why *[]string) bool {
	if faults := faultsOf(run, name); len(faults) > 0 {
		*why = append(*why, fmt.Sprintf("%s (delivery faults, %s)", name, strings.Join(faults, "; ")))
		return true
	}
	if w, ok := disturbed(run, name, level); ok {
		*why = append(*why, name+" ("+w.Cause()+" at "+level+")")
		return true
	}
	return false
}

// outcomeGroup is the contenders that came out one way under a claim, in the claim's terms.
type outcomeGroup struct {
	what string
	list []string
}

// partOf is one part judged over contenders by the kit's rule (scenario.Tally): held and
// failed of those in groups, the rest not shown; it says who is in which group, and who was
// not counted.
func partOf(level string, held, failed int, groups []outcomeGroup, uncounted []string) scenario.Part {
	n := 0
	var why []string
	for _, g := range groups {
		n += len(g.list)
		if len(g.list) > 0 {
			why = append(why, g.what+": "+strings.Join(g.list, ", "))
		}
	}
	if len(uncounted) > 0 {
		why = append(why, "not counted: "+strings.Join(uncounted, ", "))
	}
	if n == 0 && len(why) == 0 {
		why = append(why, "no contender ran "+level)
	}
	return scenario.Part{Verdict: scenario.Tally(held, failed, n-held-failed, 0), Why: strings.Join(why, "; ")}
}

// claimBoundedAtSmallCost: (b) with back-pressure memory stays bounded (seeds/003 lines
// 54–55) at a throughput cost of at most 20 % (line 59: "reduces throughput up to 20%").
// Two parts: memory, over every contender measured with slow readers, by the growth rule of
// claim (a) (bounded); the cost, over those bounded, by costPart.
func claimBoundedAtSmallCost(run *results.Run) results.Claim {
	cl := results.Claim{ID: "b", Text: "With back-pressure, memory stays bounded at a throughput cost of at most 20 %."}
	var held, notBounded, undecided, uncounted, costed []string
	for _, ct := range run.Contenders {
		m, ok := memoryOf(measured(run, ct.Name, SlowOn))
		if !ok || notCounted(run, ct.Name, SlowOn, &uncounted) {
			continue
		}
		said := fmt.Sprintf("%s (%s)", ct.Name, m)
		switch bounded(m) {
		case results.ClaimHolds:
			held = append(held, said)
			costed = append(costed, ct.Name)
		case results.ClaimFails:
			notBounded = append(notBounded, said)
		default:
			undecided = append(undecided, said)
		}
	}
	if len(held)+len(notBounded)+len(undecided) == 0 {
		return scenario.Combine(cl, partOf(SlowOn, 0, 0, nil, uncounted))
	}
	memory := partOf(SlowOn, len(held), len(notBounded), []outcomeGroup{{"bounded", held}, {"not bounded", notBounded}, {"not shown", undecided}}, uncounted)
	cl = scenario.Combine(cl, memory, costPart(run, costed))
	if on, _ := costLevels(run); on == PacedOn {
		cl.Conditions = append(cl.Conditions, atCapacity)
	}
	return cl
}

// atCapacity is the condition of (b)'s cost: measured where it can fail, at the most each
// side delivers (the study's generator at full rate, seeds/003 lines 25, 59), not at a paced
// rate both sides keep up with by construction.
var atCapacity = results.Condition{Name: "cost measured at capacity", Needs: 1, Given: 0, Met: false,
	Source: "seeds/003 lines 25, 59: throughput at the generator's full rate"}

// costPart is (b)'s cost over the bounded contenders names. At the paced levels both sides
// keep up with the generator by construction, so the ratio is about 1 whatever back-pressure
// costs: a test that cannot fail, untested here with that reason (the figure kept as
// context). At the throughput levels each contender's delivered messages/s with over without
// back-pressure, over the repeats, must be at least 0.8 (scenario.AtLeast: the ratio's
// interval at or above it holds, wholly below fails, else not shown); a gain reads as a gain.
func costPart(run *results.Run, names []string) scenario.Part {
	onLevel, offLevel := costLevels(run)
	var measuredWhy, untested []string
	var n scenario.Counts
	for _, name := range names {
		_, why, ok := costOf(run, name)
		switch {
		case !ok && why == "":
			untested = append(untested, name+" (no throughput levels run)")
			continue
		case !ok:
			untested = append(untested, fmt.Sprintf("%s (%s)", name, why))
			continue
		}
		if onLevel == PacedOn {
			measuredWhy = append(measuredWhy, fmt.Sprintf("%s (%s)", name, why))
			continue
		}
		verdict, interval := scenario.AtLeast(scenario.Samples(run, name, onLevel, "", streamload.NumberDelivered), scenario.Samples(run, name, offLevel, "", streamload.NumberDelivered),
			1-maxCost, "seeds/003 line 59: a cost of at most 20 %")
		n.Add(verdict)
		measuredWhy = append(measuredWhy, fmt.Sprintf("%s (%s; with over without: %s)", name, why, interval))
	}
	what := "the cost of back-pressure"
	switch {
	case onLevel == PacedOn && len(measuredWhy) > 0:
		return scenario.Part{Verdict: results.ClaimUntestedHere, Why: fmt.Sprintf("%s: measured at a paced rate both sides keep up with by construction (%s, %s), where the ratio is about 1 whatever back-pressure costs: a test that cannot fail; measured here, as context only: %s",
			what, onLevel, offLevel, strings.Join(measuredWhy, ", "))}
	case n.Of() == 0:
		why := what + ": no contender bounded with a cost measured between runs that both lasted the load"
		if len(untested) > 0 {
			why += ": " + strings.Join(untested, ", ")
		}
		return scenario.Part{Verdict: results.ClaimUntested, Why: why}
	}
	why := fmt.Sprintf("%s at most 20 %% in %d of %d, more in %d, not shown in %d: %s", what, n.Held, n.Of(), n.Failed, n.NotShown, strings.Join(measuredWhy, ", "))
	if len(untested) > 0 {
		why += "; cost not measured: " + strings.Join(untested, ", ")
	}
	return scenario.Part{Verdict: n.Verdict(), Why: why}
}
