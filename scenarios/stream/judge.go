package stream

import (
	"fmt"
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
}

// FateOf reads a measured cell.
func FateOf(c results.Cell) Fate {
	f := Fate{PeakMB: c.Server.Summary.RSSMBMax, Seconds: c.Seconds, Faults: c.Faults}
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

// rate is a contender's delivered messages/s at a throughput level: the median over its
// repeats (from the run's summary), or why there is none to compare, and what qualifies it.
type rate struct {
	perS float64
	ok   bool
	note string // how a repeat that died counts, or why there is no rate
}

func delivered(run *results.Run, contender, level string) rate {
	cells := measured(run, contender, level)
	if len(cells) == 0 {
		return rate{}
	}
	var r rate
	var notes []string
	for _, c := range cells {
		f := FateOf(c)
		sf, _ := streamload.FiguresOf(c)
		switch {
		case len(f.Faults) > 0:
			return rate{note: "delivery faults (" + results.FormatFaults(f.Faults) + "): not ranked"}
		case c.ClientBound:
			return rate{note: "client-bound: not the server's rate"}
		case f.Failed == results.OutcomeCrashed || f.Failed == results.OutcomeOutOfMemory:
			switch {
			case sf.Seconds > 0:
				notes = append(notes, fmt.Sprintf("it died (%s) %.1f s in: its rate is over those %.1f s", f.Failed, sf.Seconds, sf.Seconds))
			case sf.PerSecond > 0: // recorded before rates said what they were over
				notes = append(notes, fmt.Sprintf("it died (%s): its rate is over the time it lasted, as recorded then", f.Failed))
			default:
				notes = append(notes, fmt.Sprintf("it died (%s) within a second: no rate", f.Failed))
			}
		case f.Failed != "":
			notes = append(notes, "it was "+f.Failed+" during the run")
		}
	}
	r.note = strings.Join(notes, "; ")
	for _, cs := range run.Summary {
		if cs.Contender == contender && cs.Level == level {
			sp, ok := cs.Numbers[streamload.NumberDelivered]
			r.perS, r.ok = sp.Median, ok
		}
	}
	return r
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

func isDisturbed(run *results.Run, name, level string) bool {
	_, ok := disturbed(run, name, level)
	return ok
}

func judge(run *results.Run, name string) (results.Verdict, bool) {
	if faults := faultsOf(run, name); len(faults) > 0 {
		return Faults.Verdict(name, SlowOn, "delivery faults, "+strings.Join(faults, "; ")), true
	}
	var parts []string
	verdict := scenario.NotMeasured
	if on, ok := worst(measured(run, name, SlowOn)); ok {
		parts = append(parts, "slow consumers with back-pressure: "+on.String())
		switch {
		case isDisturbed(run, name, SlowOn):
			verdict, _ = disturbed(run, name, SlowOn)
		case on.Bounded():
			verdict = Bounded
		default:
			verdict = Unbounded
		}
	}
	if off, ok := worst(measured(run, name, SlowOff)); ok {
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

// costOf is what back-pressure cost a contender in delivered messages/s; without a cost, why
// says what kept it from one (a level without a rate), or is "" when a level was not run.
func costOf(run *results.Run, name string) (cost float64, why string, ok bool) {
	on, off := delivered(run, name, ThroughputOn), delivered(run, name, ThroughputOff)
	var notes []string
	for _, r := range []struct {
		with string
		rate rate
	}{{"with back-pressure", on}, {"without back-pressure", off}} {
		if r.rate.note != "" {
			notes = append(notes, "throughput "+r.with+": "+r.rate.note)
		}
	}
	if !on.ok || !off.ok || off.perS <= 0 {
		if len(notes) > 0 {
			return 0, "no throughput cost: " + strings.Join(notes, "; "), false
		}
		return 0, "", false
	}
	cost = 1 - on.perS/off.perS
	why = fmt.Sprintf("throughput %.0f msg/s with back-pressure, %.0f without (cost %+.0f %%)", on.perS, off.perS, cost*100)
	if len(notes) > 0 {
		why += "; " + strings.Join(notes, "; ")
	}
	return cost, why, true
}

// claimGrowsUntilFails: (a) without back-pressure, slow clients grow server memory until it
// fails.
func claimGrowsUntilFails(run *results.Run) results.Claim {
	cl := results.Claim{ID: "a", Text: "Without back-pressure, slow clients grow the server's memory until it fails."}
	var failed, grew, held, uncounted []string
	for _, ct := range run.Contenders {
		f, ok := worst(measured(run, ct.Name, SlowOff))
		switch {
		case !ok:
		case notCounted(run, ct.Name, SlowOff, &uncounted):
		case f.Failed != "":
			failed = append(failed, fmt.Sprintf("%s (%s)", ct.Name, f))
		case f.Grew():
			grew = append(grew, fmt.Sprintf("%s (%s)", ct.Name, f))
		default:
			held = append(held, fmt.Sprintf("%s (%s)", ct.Name, f))
		}
	}
	return judged(cl, SlowOff, []outcomeGroup{{"failed", failed}, {"grew but lasted the run", grew}, {"held its memory", held}}, uncounted)
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

// judged gives a claim its verdict from its groups, the first the claim's support and the last
// its refutation (holds: all in the first; fails: all in the last; partly otherwise), and says
// who is in which, and who was not counted.
func judged(cl results.Claim, level string, groups []outcomeGroup, uncounted []string) results.Claim {
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
	switch {
	case n == 0 && len(uncounted) > 0:
		cl.Verdict, cl.Why = results.ClaimUntested, strings.Join(why, "; ")
		return cl
	case n == 0:
		cl.Verdict, cl.Why = results.ClaimUntested, "no contender ran "+level
		return cl
	case len(groups[0].list) == n:
		cl.Verdict = results.ClaimHolds
	case len(groups[len(groups)-1].list) == n:
		cl.Verdict = results.ClaimFails
	default:
		cl.Verdict = results.ClaimPartly
	}
	cl.Why = strings.Join(why, "; ")
	return cl
}

// claimBoundedAtSmallCost: (b) with back-pressure memory stays bounded at ≤ 20 % throughput
// cost.
func claimBoundedAtSmallCost(run *results.Run) results.Claim {
	cl := results.Claim{ID: "b", Text: "With back-pressure, memory stays bounded at a throughput cost of at most 20 %."}
	var good, untested, costly, unbounded, uncounted []string
	for _, ct := range run.Contenders {
		f, ok := worst(measured(run, ct.Name, SlowOn))
		if !ok || notCounted(run, ct.Name, SlowOn, &uncounted) {
			continue
		}
		cost, why, costKnown := costOf(run, ct.Name)
		switch {
		case !f.Bounded():
			unbounded = append(unbounded, fmt.Sprintf("%s (%s)", ct.Name, f))
		case !costKnown: // bounded, but what it cost was not measured: that part is untested
			untested = append(untested, fmt.Sprintf("%s (%s)", ct.Name, f))
		case cost > maxCost:
			costly = append(costly, fmt.Sprintf("%s (%s)", ct.Name, why))
		default:
			good = append(good, fmt.Sprintf("%s (%s; %s)", ct.Name, f, why))
		}
	}
	return judged(cl, SlowOn, []outcomeGroup{{"bounded at ≤ 20 % cost", good}, {"bounded, its cost not measured (no throughput levels)", untested},
		{"bounded but costing more than 20 %", costly}, {"not bounded", unbounded}}, uncounted)
}
