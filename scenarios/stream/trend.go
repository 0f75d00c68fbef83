package stream

import (
	"fmt"
	"math"

	"github.com/arena-lab/arena/internal/results"
)

// horizon is how many times the load's length a server's memory may take to reach its cap,
// on its trend, and still count as growing until it fails: arena's choice. A run ends when
// its load does, not when the server would have died: growth is read off its rate, not off
// whether the run lasted long enough (issue 21).
const horizon = 10

// Trend is a least-squares line through a cell's server RSS over the last two thirds of
// its load (the first third is buffers and queues filling, which a bounded server does
// once), and where that line meets the level's memory cap.
type Trend struct {
	Known     bool
	MBPerS    float64 // the line's slope
	EndMB     float64 // the line at the load's end
	Seconds   float64 // of load
	CapMB     float64
	CapAfterS float64 // from the load's end until the line meets the cap; +Inf when it never does
}

// TrendOf fits the cell's server samples from a third of the load to its end; unknown with
// fewer than three samples there.
func TrendOf(c results.Cell) Trend {
	tr := Trend{Seconds: c.Seconds, CapAfterS: math.Inf(1)}
	if c.Memory != nil {
		tr.CapMB = c.Memory.CapMB
	}
	var xs, ys []float64
	for _, s := range c.Server.Timeline {
		if s.T >= c.Seconds/3 && s.T <= c.Seconds {
			xs, ys = append(xs, s.T), append(ys, s.RSSMB)
		}
	}
	slope, intercept, ok := leastSquares(xs, ys)
	if !ok {
		return tr
	}
	tr.Known, tr.MBPerS, tr.EndMB = true, slope, intercept+slope*c.Seconds
	if slope > 0 && tr.CapMB > 0 {
		tr.CapAfterS = max(0, (tr.CapMB-tr.EndMB)/slope)
	}
	return tr
}

// leastSquares is the line y = slope·x + intercept nearest the points; false with fewer
// than three, or all at one x.
func leastSquares(xs, ys []float64) (slope, intercept float64, ok bool) {
	n := float64(len(xs))
	if len(xs) < 3 {
		return 0, 0, false
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0, 0, false
	}
	slope = (n*sxy - sx*sy) / d
	return slope, (sy - slope*sx) / n, true
}

// TowardsCap says whether memory grows steadily enough to reach the cap within horizon
// times the load's length, counted from the load's start.
func (t Trend) TowardsCap() bool {
	return t.Known && t.MBPerS > 0 && t.CapMB > 0 && t.Seconds+t.CapAfterS <= horizon*t.Seconds
}

func (t Trend) String() string {
	switch {
	case !t.Known:
		return "too few samples for a trend"
	case t.MBPerS <= 0 || t.CapMB <= 0:
		return fmt.Sprintf("%+.1f MB/s over the last two thirds: no way to the cap", t.MBPerS)
	}
	return fmt.Sprintf("%+.1f MB/s over the last two thirds: the %.0f MB cap %.0f s after the load's end (%.1f× its %.0f s)",
		t.MBPerS, t.CapMB, t.CapAfterS, (t.Seconds+t.CapAfterS)/t.Seconds, t.Seconds)
}
