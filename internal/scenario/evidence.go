package scenario

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/arena-lab/arena/internal/compare"
	"github.com/arena-lab/arena/internal/results"
)

// MaxFailedPct is the most a cell's requests may fail (a wrong status or body, a refused or
// reset connection: results.TagSummary.FailedPct) and its figures still be judged: k6's
// customary `http_req_failed < 1 %`. Above it the cell is Failing, whatever its speed.
const MaxFailedPct = 1.0

// Failing: the server answered too many requests wrongly or not at all; its speed is the
// speed of failing, never ranked, never isolated, never fastest.
var Failing = Word{"failing (errors)", results.Bad}

// failing says whether a summary's figures are a failing server's, and why.
func failing(cs results.CellSummary) (string, bool) {
	pct, tag := cs.FailedPct()
	if pct <= MaxFailedPct {
		return "", false
	}
	for _, t := range cs.Tags {
		if t.Tag == tag {
			return fmt.Sprintf("%s: %.1f %% of %d requests failed (%s), over the %.0f %% a judged cell may fail",
				tag, pct, t.Sent, results.FormatFaults(t.ErrKinds), MaxFailedPct), true
		}
	}
	return "", false
}

// Condition is one thing a claim depends on, as the claim declares it: the least it needs
// and where that comes from (a seed line, the study's published code, or arena's choice).
type Condition struct {
	Name   string
	Needs  float64
	Source string
	// Of reads what the run gave; nil for server cores.
	Of func(*results.Run) float64
}

// ServerCores is the condition of a claim that rests on several server cores (a cluster
// spreading over them, one process against many threads).
func ServerCores(needs int, source string) Condition {
	return Condition{Name: "server cores", Needs: float64(needs), Source: source, Of: func(r *results.Run) float64 {
		return float64(CountCPUs(r.Env.ServerCPUs))
	}}
}

// CountCPUs counts a taskset-style list ("1", "0-3", "0,2-3"); 0 when it cannot be read.
func CountCPUs(list string) int {
	n := 0
	for _, part := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

// AtConditions records conds on c with what run gave. When one is not met, c is untested
// here, with the condition, its source and what was given as the reason (the measured
// figures stay in c.Why as context), and false is returned: such a claim is never failed on
// evidence taken at conditions it does not speak of.
func AtConditions(c results.Claim, run *results.Run, conds ...Condition) (results.Claim, bool) {
	var unmet []string
	for _, cond := range conds {
		given := cond.Of(run)
		met := given >= cond.Needs
		c.Conditions = append(c.Conditions, results.Condition{Name: cond.Name, Needs: cond.Needs, Source: cond.Source, Given: given, Met: met})
		if !met {
			unmet = append(unmet, fmt.Sprintf("needs ≥ %s %s (%s), this run gave %s", results.FormatFigure(cond.Needs), cond.Name, cond.Source, results.FormatFigure(given)))
		}
	}
	if len(unmet) == 0 {
		return c, true
	}
	why := strings.Join(unmet, "; ")
	if c.Why != "" {
		why += "; measured here, as context only: " + c.Why
	}
	c.Verdict, c.Why = results.ClaimUntestedHere, why
	return c, false
}

// Order is how one figure of two contenders compares, beyond the noise or not.
type Order int

const (
	Tie   Order = iota // inside the noise: neither is ahead
	Below              // a's figure is lower than b's
	Above              // a's figure is higher than b's
)

func (o Order) String() string { return [...]string{"tie", "lower", "higher"}[o] }

// SingleRunNoise is how far apart two single measurements must be, as a fraction of the
// lower, to be ordered: with one repeat a side nothing measures the noise, and repeats of
// one cell on this machine land up to ~10 % apart (results.NoisySpread flags more).
const SingleRunNoise = 0.10

// MinRepeats is the fewest repeats a side for an order by the U test rather than by
// SingleRunNoise.
const MinRepeats = 3

// Compare orders a against b, each a figure's value per repeat. With MinRepeats or more on
// both sides, by the Mann-Whitney U test `arena compare` uses: ordered when P is below
// compare.DefaultAlpha or at the least P the repeats allow (every repeat of one beyond every
// repeat of the other); else by the medians, ordered only when they are more than
// SingleRunNoise apart. why says which rule ordered them, and on what, in words a reader
// checks ("complete separation, 3 against 3: 1 in 20 by chance").
func Compare(a, b []float64) (order Order, why string) {
	if len(a) == 0 || len(b) == 0 {
		return Tie, "nothing to compare"
	}
	ma, mb := compare.Median(a), compare.Median(b)
	dir := Below
	if ma > mb {
		dir = Above
	}
	if len(a) >= MinRepeats && len(b) >= MinRepeats {
		t := compare.MannWhitney(a, b)
		least := compare.LeastP(len(a), len(b))
		separate := t.U == 0 || t.U == float64(len(a)*len(b))
		switch {
		case ma != mb && separate && t.P <= least*1.0001:
			return dir, fmt.Sprintf("%.4g vs %.4g, complete separation, %d against %d: 1 in %.0f by chance", ma, mb, len(a), len(b), 2/least)
		case ma != mb && t.P < compare.DefaultAlpha:
			return dir, fmt.Sprintf("%.4g vs %.4g, U test P = %.3f over %d against %d repeats (below %.2f)", ma, mb, t.P, len(a), len(b), compare.DefaultAlpha)
		}
		return Tie, fmt.Sprintf("%.4g vs %.4g, not separated: the repeats overlap (U test P = %.2f over %d against %d)", ma, mb, t.P, len(a), len(b))
	}
	lo := min(ma, mb)
	if lo > 0 && (max(ma, mb)-lo)/lo > SingleRunNoise {
		return dir, fmt.Sprintf("%.4g vs %.4g, more than %.0f %% apart (%d and %d repeats: no test of the noise)", ma, mb, SingleRunNoise*100, len(a), len(b))
	}
	if lo == 0 && ma != mb {
		return dir, fmt.Sprintf("%.4g vs %.4g", ma, mb)
	}
	return Tie, fmt.Sprintf("%.4g vs %.4g, not separated: within %.0f %% (%d and %d repeats)", ma, mb, SingleRunNoise*100, len(a), len(b))
}

// OrderVerdict is the one mapping of an order to a claim's verdict: the order the claim
// wants is shown (holds), the other order is shown otherwise (fails), a tie is not shown:
// repeats that do not separate two figures are no evidence that either is ahead, nor that
// neither is.
func OrderVerdict(got, want Order) string {
	switch got {
	case Tie:
		return results.ClaimNotShown
	case want:
		return results.ClaimHolds
	}
	return results.ClaimFails
}

// OrderPart is a Part of an order claim: a against b (each a figure's value per repeat) by
// Compare, judged by OrderVerdict; what names the claim's order, e.g. "vertx above webflux".
func OrderPart(a, b []float64, want Order, what string) Part {
	got, why := Compare(a, b)
	if got != Tie && got != want {
		why += "; the other way"
	}
	return Part{Verdict: OrderVerdict(got, want), Why: what + ": " + why}
}

// FalseOrder is the most often Compare orders, in one given direction, two sets of n and m
// repeats of one and the same figure: half its test's level, the U test's alpha or the least
// P the repeats allow, whichever is larger (with three a side only complete separation
// orders, which chance gives 1 time in 20). 0 with fewer than MinRepeats a side: the
// SingleRunNoise rule states no chance.
func FalseOrder(n, m int) float64 {
	if n < MinRepeats || m < MinRepeats {
		return 0
	}
	return max(compare.LeastP(n, m), compare.DefaultAlpha) / 2
}

// FalseRank is FalseOrder for an order against several rivals at once (ms: each rival's
// repeats). Where every comparison orders only on complete separation (the least P its
// repeats allow is at or above alpha), being beyond every rival at once is being beyond
// their pooled repeats, which chance gives 1 time in C(n+Σm, n); otherwise at most the
// first rival's FalseOrder. 0 when some side is too few for a test, or there is no rival.
func FalseRank(n int, ms []int) float64 {
	if len(ms) == 0 {
		return 0
	}
	pooled := 0
	for _, m := range ms {
		if FalseOrder(n, m) == 0 {
			return 0
		}
		if compare.LeastP(n, m) < compare.DefaultAlpha {
			return FalseOrder(n, ms[0])
		}
		pooled += m
	}
	return compare.LeastP(n, pooled) / 2
}

// OrdersByChance is how likely chance alone finds an order at passed or more of of places,
// each found falsely with probability at most chance (FalseOrder): the binomial tail. A part
// that holds at a few of many levels, no more than this makes likely (above
// compare.DefaultAlpha), rests on no order at all.
func OrdersByChance(passed, of int, chance float64) float64 {
	if passed <= 0 {
		return 1
	}
	tail, choose := 0.0, 1.0 // choose: C(of, i), built up from C(of, 0)
	for i := 0; i <= of; i++ {
		if i > 0 {
			choose = choose * float64(of-i+1) / float64(i)
		}
		if i >= passed {
			tail += choose * math.Pow(chance, float64(i)) * math.Pow(1-chance, float64(of-i))
		}
	}
	return min(tail, 1)
}

// CountOrders is the verdict of a part that holds at places where Compare found the order
// the claim wants: held places ordered the claim's way, reversed the other way, and the rest
// of of ties (not shown), each order found by chance alone at most chance (FalseOrder). Orders
// found no more often than chance makes likely (OrdersByChance above compare.DefaultAlpha)
// count as not shown, the claim's way or the other, and the note says so; the verdict is then
// Tally's over what is left.
func CountOrders(held, reversed, of int, chance float64) (verdict, note string) {
	var notes []string
	if chance > 0 {
		for _, n := range []*int{&held, &reversed} {
			if *n == 0 {
				continue
			}
			if p := OrdersByChance(*n, of, chance); p > compare.DefaultAlpha {
				notes = append(notes, fmt.Sprintf("%d of %d ordered %s is no more than chance gives (%.0f %% of the time, each level's order found falsely at most %.1f %%): not shown",
					*n, of, map[bool]string{true: "the claim's way", false: "the other way"}[n == &held], p*100, chance*100))
				*n = 0
			}
		}
	}
	return Tally(held, reversed, of-held-reversed, 0), strings.Join(notes, "; ")
}

// Samples are one figure of a contender at a level, one value per repeat that ended ok and
// whose figures are the server's: "requests/s", "p50", "p99", "p99.9" or "mean" of tag's
// response time, or "cpu_pct", "rss_mb", "threads" of the server, or one of the cell's
// numbers.
func Samples(run *results.Run, contender, level, tag, figure string) []float64 {
	var out []float64
	for _, c := range run.Cells {
		if c.Contender != contender || c.Level != level || c.Outcome.Status != results.OutcomeOK || c.ClientBound || c.SharedCPU || len(c.Faults) > 0 {
			continue
		}
		if c.Server.Unprobed != "" && (figure == "cpu_pct" || figure == "rss_mb" || figure == "threads") {
			continue // no server resources (a target without its pid): no figure, never a zero
		}
		switch figure {
		case "cpu_pct":
			out = append(out, c.Server.Summary.CPUPctMean)
			continue
		case "rss_mb":
			out = append(out, c.Server.Summary.RSSMBMax)
			continue
		case "threads":
			out = append(out, float64(c.Server.Summary.ThreadsMax))
			continue
		}
		if v, ok := c.Numbers[figure]; ok {
			out = append(out, v)
			continue
		}
		for _, t := range c.Tags {
			if t.Tag != tag || t.Completed == 0 {
				continue
			}
			if figure == "mean" {
				out = append(out, t.Response.Mean)
			} else {
				out = append(out, compare.Of(figure, t))
			}
		}
	}
	return out
}

// Tolerance is a magnitude a claim states, with how far from it still holds (Band), the
// study's words for it and where the band's width comes from: a seed line where the study
// gives one, else "arena's choice" and why, said so on the page.
type Tolerance struct {
	Want, Frac float64
	Words      string // the study's words and where, e.g. `2.54× (seeds/002 lines 228, 102)`
	Source     string // where ±Frac comes from, e.g. "arena's choice: repeats of one cell land ~10 % apart"
}

// Holds says whether got is within the tolerance, and a sentence saying so: for a single
// figure against the study's (one measurement, no interval).
func (t Tolerance) Holds(got float64) (bool, string) {
	ok := Within(got, t.Want, t.Frac)
	rel := "within"
	if !ok {
		rel = "outside"
	}
	return ok, fmt.Sprintf("%.3g is %s ±%.0f %% of %.3g (%s), the study's %s", got, rel, t.Frac*100, t.Want, t.Source, t.Words)
}

// CPUBusy is the share of its cores' capacity past which a server's CPU, not what the claim
// is about (its waiting, its model), sets its pace: 90 %, arena's choice (the lab's own mark
// for a busy client).
const CPUBusy = 0.90

// CPUHeadroomSource is where the CPU headroom condition comes from.
const CPUHeadroomSource = "arena's choice: a wait is measured only where the CPU is not what sets the pace"

// CPUHeadroom is the condition of a claim measured at level on names: each server's CPU (the
// median over repeats, % of one core) below CPUBusy of its cores, recorded as the least
// headroom left. busy says who was at saturation, empty when the condition is met. Sleep (c),
// arena-1, downstream (a) and database (a), (b) rest on it: at saturation they are untested
// here, the condition named.
func CPUHeadroom(run *results.Run, idx Summaries, level string, names ...string) (cond results.Condition, busy string) {
	cores := CountCPUs(run.Env.ServerCPUs)
	cond = results.Condition{Name: fmt.Sprintf("server CPU headroom at %s, %% of its cores", level), Needs: (1 - CPUBusy) * 100, Source: CPUHeadroomSource}
	if cores == 0 {
		return cond, "the run recorded no server cores"
	}
	cond.Given = 100
	var at []string
	for _, name := range names {
		cpu := idx[name][level].CPUPct.Median
		cond.Given = min(cond.Given, 100-cpu/float64(cores))
		if cpu >= CPUBusy*100*float64(cores) {
			at = append(at, fmt.Sprintf("%s at %.0f %% CPU of its %d core(s)", name, cpu, cores))
		}
	}
	cond.Met = len(at) == 0
	if !cond.Met {
		return cond, fmt.Sprintf("%s, at least %.0f %%: its CPU set the pace (at saturation)", strings.Join(at, ", "), CPUBusy*100)
	}
	return cond, ""
}

// AtHeadroom is CPUHeadroom applied to a claim: recorded on c, and c untested here at
// saturation, the condition and who was busy named and the measured figures kept as
// context; false then.
func AtHeadroom(c results.Claim, run *results.Run, idx Summaries, level string, names ...string) (results.Claim, bool) {
	cond, busy := CPUHeadroom(run, idx, level, names...)
	c.Conditions = append(c.Conditions, cond)
	if busy == "" || results.Untested(c.Verdict) {
		return c, busy == ""
	}
	why := fmt.Sprintf("needs ≥ %.0f %% CPU headroom at %s (%s): %s", cond.Needs, level, cond.Source, busy)
	if c.Why != "" {
		why += "; measured here, as context only: " + c.Why
	}
	c.Verdict, c.Why = results.ClaimUntestedHere, why
	return c, false
}
