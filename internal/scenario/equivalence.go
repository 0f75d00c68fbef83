package scenario

import (
	"fmt"
	"math"
	"slices"

	"github.com/arena-lab/arena/internal/results"
)

// IntervalLevel is the coverage a sameness or magnitude claim's interval aims at: 90 %, two
// one-sided tests at 5 % each (TOST), the usual level of an equivalence test.
const IntervalLevel = 0.90

// Ratio is the ratio a/b of two figures from their repeats: the Hodges-Lehmann estimate
// (the median of all n·m pairwise ratios, taken on their logarithms) and its distribution-
// free confidence interval (Moses: the k-th smallest and k-th largest pairwise ratio, k from
// the exact distribution of the Mann-Whitney U). Deterministic: the same repeats give the
// same bytes.
type Ratio struct {
	Est, Lo, Hi float64
	// Coverage is the interval's achieved coverage, at least IntervalLevel when Enough.
	Coverage float64
	N, M     int
	// Enough: the repeats allow an interval at IntervalLevel (3 against 3 do: [min, max] of
	// the 9 pairwise ratios, 1 − 2/20 = 90 %).
	Enough bool
}

// RatioOf is a/b's Ratio; false when either side has no repeat or a value at or below 0 (a
// ratio of such is no figure).
func RatioOf(a, b []float64) (Ratio, bool) {
	r := Ratio{N: len(a), M: len(b)}
	if len(a) == 0 || len(b) == 0 || slices.Min(a) <= 0 || slices.Min(b) <= 0 {
		return r, false
	}
	logs := make([]float64, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			logs = append(logs, math.Log(x/y))
		}
	}
	slices.Sort(logs)
	r.Est = math.Exp((logs[(len(logs)-1)/2] + logs[len(logs)/2]) / 2) // the median, unrounded
	k, tail := mosesRank(len(a), len(b))
	r.Enough = k > 0
	k = max(k, 1) // too few for the level: [min, max] and the coverage they give, said
	r.Lo, r.Hi = math.Exp(logs[k-1]), math.Exp(logs[len(logs)-k])
	r.Coverage = 1 - 2*tail
	return r, true
}

// mosesRank is the largest k whose interval [k-th smallest, k-th largest pairwise ratio]
// covers at least IntervalLevel, with its one-sided tail P(U ≤ k−1) under no difference; k
// is 0 when even [min, max] covers less (then tail is P(U = 0), for the coverage said).
func mosesRank(n, m int) (k int, tail float64) {
	dist := uDistribution(n, m)
	alpha := (1 - IntervalLevel) / 2
	cum := 0.0
	tail = dist[0]
	for u := 0; u < len(dist)/2; u++ {
		cum += dist[u]
		if cum > alpha+1e-12 {
			break
		}
		k, tail = u+1, cum
	}
	return k, tail
}

// uDistribution is the exact distribution of the Mann-Whitney U of n against m values with
// no ties and no difference: P(U = u) for u = 0…n·m, by the recurrence
// N(n, m, u) = N(n−1, m, u−m) + N(n, m−1, u) over the C(n+m, n) equally likely rankings.
func uDistribution(n, m int) []float64 {
	// ways[i][j]: counts of U for i against j values, built up from 0 against j.
	ways := make([][][]float64, n+1)
	for i := range ways {
		ways[i] = make([][]float64, m+1)
		for j := range ways[i] {
			counts := make([]float64, i*j+1)
			switch {
			case i == 0 || j == 0:
				counts[0] = 1
			default:
				for u, w := range ways[i-1][j] { // the largest value is one of the i: it beats all j
					counts[u+j] += w
				}
				for u, w := range ways[i][j-1] { // the largest is one of the j: it beats none
					counts[u] += w
				}
			}
			ways[i][j] = counts
		}
	}
	all := ways[n][m]
	total := 0.0
	for _, w := range all {
		total += w
	}
	out := make([]float64, len(all))
	for u, w := range all {
		out[u] = w / total
	}
	return out
}

// Band is the range of ratios a tolerance accepts: Want·(1 ± Frac); for a sameness (Want 1)
// 1/(1+Frac) to 1+Frac, so that which side is over which does not move it.
func (t Tolerance) Band() (lo, hi float64) {
	if t.Want == 1 {
		return 1 / (1 + t.Frac), 1 + t.Frac
	}
	return t.Want * (1 - t.Frac), t.Want * (1 + t.Frac)
}

// Alike judges a sameness or magnitude claim on a/b, each a figure's value per repeat, by an
// equivalence test: the ratio's interval (RatioOf) at IntervalLevel against tol's Band. It
// holds when the interval lies inside the band (both one-sided tests reject a ratio outside
// it), fails when it lies wholly outside, and is not shown otherwise: an interval that
// straddles the band's edge, or repeats too few for an interval at the level. A tie is no
// evidence of sameness, nor a median inside the band. Untested when either side has no figure
// (every repeat failed, client-bound or unmeasured).
func Alike(a, b []float64, tol Tolerance) (verdict, why string) {
	r, ok := RatioOf(a, b)
	if !ok {
		return results.ClaimUntested, fmt.Sprintf("no figure to compare (%d and %d repeats measured)", len(a), len(b))
	}
	lo, hi := tol.Band()
	band := fmt.Sprintf("%s (%s)", tol.Says(), tol.Source)
	if !r.Enough {
		return results.ClaimNotShown, fmt.Sprintf("%s; %d against %d repeats give no %.0f %% interval: not shown against %s", r, r.N, r.M, IntervalLevel*100, band)
	}
	switch {
	case r.Lo >= lo && r.Hi <= hi:
		return results.ClaimHolds, fmt.Sprintf("%s, inside %s", r, band)
	case r.Hi < lo || r.Lo > hi:
		return results.ClaimFails, fmt.Sprintf("%s, wholly outside %s", r, band)
	}
	return results.ClaimNotShown, fmt.Sprintf("%s, across the edge of %s: not shown", r, band)
}

// String says the ratio as a reader checks it: "ratio 1.01, 90 % interval 0.97–1.08 (3
// against 3 repeats)".
func (r Ratio) String() string {
	return fmt.Sprintf("ratio %.3g, %.0f %% interval %.3g–%.3g (%d against %d repeats)", r.Est, math.Floor(r.Coverage*100+1e-9), r.Lo, r.Hi, r.N, r.M)
}

// Says is the tolerance as a band a reader checks: "±10 % (0.909–1.1)" for a sameness,
// "2.5 ± 20 % (2–3)" for a magnitude.
func (t Tolerance) Says() string {
	lo, hi := t.Band()
	if t.Want == 1 {
		return fmt.Sprintf("±%.0f %% (%.3g–%.3g)", t.Frac*100, lo, hi)
	}
	return fmt.Sprintf("%.3g ± %.0f %% (%.3g–%.3g)", t.Want, t.Frac*100, lo, hi)
}

// AtLeast judges a claim that a is at least least times b ("much more", "a rise of at least
// the study's"), each a figure's value per repeat, on the same interval as Alike: it holds
// when the whole interval is at or above least, fails when the whole interval is below it,
// and is not shown otherwise; source says where least comes from.
func AtLeast(a, b []float64, least float64, source string) (verdict, why string) {
	r, ok := RatioOf(a, b)
	if !ok {
		return results.ClaimUntested, fmt.Sprintf("no figure to compare (%d and %d repeats measured)", len(a), len(b))
	}
	line := fmt.Sprintf("×%.3g (%s)", least, source)
	switch {
	case !r.Enough:
		return results.ClaimNotShown, fmt.Sprintf("%s; %d against %d repeats give no %.0f %% interval: not shown against %s", r, r.N, r.M, IntervalLevel*100, line)
	case r.Lo >= least:
		return results.ClaimHolds, fmt.Sprintf("%s, at or above %s", r, line)
	case r.Hi < least:
		return results.ClaimFails, fmt.Sprintf("%s, wholly below %s", r, line)
	}
	return results.ClaimNotShown, fmt.Sprintf("%s, across %s: not shown", r, line)
}

// PartAtConditions is AtConditions for one part of a claim: the part untested here when a
// condition is not met (its figures kept as context), with the conditions to record on the
// claim. A part that measured nothing stays untested.
func PartAtConditions(p Part, run *results.Run, conds ...Condition) (Part, []results.Condition) {
	c, _ := AtConditions(results.Claim{Verdict: p.Verdict, Why: p.Why}, run, conds...)
	if p.Verdict == results.ClaimUntested {
		return p, c.Conditions
	}
	return Part{Verdict: c.Verdict, Why: c.Why}, c.Conditions
}

// Median is a figure's median over its repeats with its distribution-free confidence
// interval: the k-th smallest and k-th largest repeat, k from the binomial count of repeats
// below the median (3 repeats give no 90 % interval, [min, max] covering 75 %; 5 give
// [min, max] at 1 − 2/32 ≈ 94 %).
type Median struct {
	Est, Lo, Hi float64
	Coverage    float64
	N           int
	Enough      bool // an interval at IntervalLevel
}

// MedianOf is v's Median; false with no value.
func MedianOf(v []float64) (Median, bool) {
	m := Median{N: len(v)}
	if len(v) == 0 {
		return m, false
	}
	s := slices.Sorted(slices.Values(v))
	m.Est = (s[(len(s)-1)/2] + s[len(s)/2]) / 2
	alpha := (1 - IntervalLevel) / 2
	k, tail := 0, math.Pow(0.5, float64(len(s)))
	cum, choose := 0.0, 1.0 // choose: C(n, j)
	for j := 0; j < len(s)/2; j++ {
		if j > 0 {
			choose = choose * float64(len(s)-j+1) / float64(j)
		}
		cum += choose * math.Pow(0.5, float64(len(s)))
		if cum > alpha+1e-12 {
			break
		}
		k, tail = j+1, cum
	}
	m.Enough = k > 0
	k = max(k, 1)
	m.Lo, m.Hi, m.Coverage = s[k-1], s[len(s)-k], 1-2*tail
	return m, true
}

// Near judges a figure a claim puts at a value ("about 101 ms", "stays at 10 s"), one value
// per repeat, by an equivalence test on its median's interval against tol's Band: holds
// inside, fails wholly outside, not shown across its edge or with repeats too few for an
// interval at IntervalLevel; unit is how the figure reads ("ms"). Untested with no value.
func Near(v []float64, tol Tolerance, unit string) (verdict, why string) {
	m, ok := MedianOf(v)
	if !ok {
		return results.ClaimUntested, "no figure measured"
	}
	lo, hi := tol.Band()
	said := fmt.Sprintf("median %.4g %s, %.0f %% interval %.4g–%.4g (%d repeats)", m.Est, unit, math.Floor(m.Coverage*100+1e-9), m.Lo, m.Hi, m.N)
	band := fmt.Sprintf("%s (%s)", tol.Says(), tol.Source)
	switch {
	case !m.Enough:
		return results.ClaimNotShown, fmt.Sprintf("%s; %d repeats give no %.0f %% interval for the median (5 do): not shown against %s", said, m.N, IntervalLevel*100, band)
	case m.Lo >= lo && m.Hi <= hi:
		return results.ClaimHolds, fmt.Sprintf("%s, inside %s", said, band)
	case m.Hi < lo || m.Lo > hi:
		return results.ClaimFails, fmt.Sprintf("%s, wholly outside %s", said, band)
	}
	return results.ClaimNotShown, fmt.Sprintf("%s, across the edge of %s: not shown", said, band)
}
