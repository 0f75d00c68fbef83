package gate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/arena-lab/arena/internal/compare"
	"github.com/arena-lab/arena/internal/results"
)

// DefaultRegression is how far B may be worse than A, in per cent, significantly, before
// --fail-on-regression fails: 10 %, the spread past which the lab calls repeats noisy
// (results.NoisySpread) and an order on one repeat holds. Two runs of one setting minutes
// apart have differed significantly by 5 % in requests/s (README), and by 12 % in p99 (not
// significantly, 4 + 4 repeats): drift, not a regression.
const DefaultRegression = 10.0

// KindRegression is the word a change that failed --fail-on-regression fails on.
const KindRegression = "regression"

// ParsePercent reads --threshold of arena compare: a per cent, "5%" or "5".
func ParsePercent(v string) (float64, error) {
	n, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "%")), 64)
	if err != nil || n < 0 || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("--threshold %q: give the change allowed in per cent, e.g. 5%%", v)
	}
	return n, nil
}

// Testable says whether some row of c has repeats enough for its U test to reach c.Alpha:
// with fewer, no change can be significant and --fail-on-regression could never fail.
func Testable(c *compare.Comparison) bool {
	for _, r := range c.Rows {
		if compare.LeastP(len(r.A), len(r.B)) < c.Alpha {
			return true
		}
	}
	return false
}

// Regressions judges every row of c: failed where B is worse than A significantly (the U
// test's P below c.Alpha) and by more than threshold (in per cent of A's median), or where B
// fails more of its requests than c.MaxFailedPct and A does not (its speed is the speed of
// failing); skipped where A fails, both do, or the repeats are too few to tell. Where fail
// is false (not asked to fail on a regression) a regression is skipped, never passed.
func Regressions(c *compare.Comparison, threshold float64, fail bool) []Check {
	var out []Check
	for _, r := range c.Rows {
		ch := Check{Kind: KindChange, Name: fmt.Sprintf("%s/%s %s %s", r.Contender, r.Level, r.Tag, r.Figure),
			Contender: r.Contender, Level: r.Level, Unit: "%", Limit: ptr(threshold),
			Value: ptr(r.Change() * 100), ErrorPct: ptr(r.ErrB)}
		figures := fmt.Sprintf("%s %s → %s (%s), %s; errors %s → %s", r.Tag, compare.Sample(r.Figure, r.A), compare.Sample(r.Figure, r.B),
			r.Figure, compare.TestText(r.Test), results.FormatPct(r.ErrA), results.FormatPct(r.ErrB))
		where := r.Contender + " at " + r.Level + ": "
		switch side := c.Failing(r); {
		case side == "B":
			ch.Status, ch.FailedOn = Failed, []string{KindRegression}
			ch.Message = where + "B fails its requests (" + results.FormatPct(r.FailedB) + "), A does not: " + figures
		case side != "":
			ch.Status, ch.Message = Skipped, where+side+" failing its requests: no change is read from the speed of failing; "+figures
		case compare.LeastP(len(r.A), len(r.B)) >= c.Alpha:
			ch.Status = Skipped
			ch.Message = fmt.Sprintf("%swith %d and %d repeats no change can be significant at p < %g; %s", where, len(r.A), len(r.B), c.Alpha, figures)
		case !r.Significant(c.Alpha):
			ch.Status, ch.Message = Passed, where+"no significant change (~): "+figures
		case r.Better():
			ch.Status, ch.Message = Passed, fmt.Sprintf("%sbetter by %.2f %%: %s", where, math.Abs(r.Change())*100, figures)
		case math.Abs(r.Change())*100 <= threshold:
			ch.Status, ch.Message = Passed, fmt.Sprintf("%sworse by %.2f %%, within %g %%: %s", where, math.Abs(r.Change())*100, threshold, figures)
		default:
			ch.Status, ch.FailedOn = Failed, []string{KindRegression}
			ch.Message = fmt.Sprintf("%sworse by %.2f %%, past %g %%: %s", where, math.Abs(r.Change())*100, threshold, figures)
		}
		if ch.Status == Failed && !fail {
			ch.Status, ch.FailedOn = Skipped, nil
		}
		out = append(out, ch)
	}
	return out
}
