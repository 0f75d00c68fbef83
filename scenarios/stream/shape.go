package stream

import (
	"fmt"
	"math"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// Shape is how a server's memory came through a level, by the one growth rule claims (a)
// and (b) and the verdicts share, with or without back-pressure: a plateau is bounded, a
// growth that reaches the cap within the horizon grows, a failure failed.
type Shape int

const (
	Undecided Shape = iota // the repeats disagree, or a growth neither flat nor reaching the cap in time
	Failed                 // a repeat died, froze or ran out of memory
	Grows                  // memory on its way to the cap within horizon× the load's length
	Plateau                // memory that held: no growth worth the name, the cap out of reach
	NoTrend                // too few samples for a trend, or no cap
)

func (s Shape) String() string {
	return [...]string{"undecided", "failed", "grows towards the cap", "a plateau", "no trend"}[s]
}

// shapeOfRepeat is one repeat's shape.
func shapeOfRepeat(f Fate) Shape {
	switch {
	case f.Failed != "":
		return Failed
	case !f.Trend.Known || f.CapMB <= 0:
		return NoTrend
	case f.Trend.TowardsCap():
		return Grows
	case f.Bounded():
		return Plateau
	}
	return Undecided
}

// Grew is one repeat that failed or grew towards the cap, by the growth rule.
func (f Fate) Grew() bool {
	s := shapeOfRepeat(f)
	return s == Failed || s == Grows
}

// Memory is a contender's memory at a level over all its repeats (no worst of them): failed
// where any repeat failed (a failure is shown, whatever the others did), else grows or a
// plateau where every repeat with a trend agrees, else undecided.
type Memory struct {
	Shape Shape
	Fates []Fate
	// Crossing is where the repeats' trends reach the cap, in multiples of the load's length
	// from its start: the least and the most over the repeats that grow (their range, the
	// interval the verdict rests on, against horizon).
	CrossLo, CrossHi float64
	failed           int
}

// memoryOf reads a contender's cells at a level; false when none ran.
func memoryOf(cells []results.Cell) (Memory, bool) {
	if len(cells) == 0 {
		return Memory{}, false
	}
	m := Memory{CrossLo: math.Inf(1)}
	count := map[Shape]int{}
	for _, c := range cells {
		f := FateOf(c)
		m.Fates = append(m.Fates, f)
		s := shapeOfRepeat(f)
		count[s]++
		if f.Trend.Known && f.Trend.MBPerS > 0 && f.CapMB > 0 && f.Seconds > 0 {
			x := (f.Seconds + f.Trend.CapAfterS) / f.Seconds
			m.CrossLo, m.CrossHi = min(m.CrossLo, x), max(m.CrossHi, x)
		}
	}
	known := len(cells) - count[NoTrend]
	switch {
	case count[Failed] > 0:
		m.Shape, m.failed = Failed, count[Failed]
	case known == 0:
		m.Shape = NoTrend
	case count[Grows] == known:
		m.Shape = Grows
	case count[Plateau] == known:
		m.Shape = Plateau
	}
	return m, true
}

// BoundedWithoutTrend is the memory rule where no repeat has a trend: every repeat bounded by
// its peak and its last third (Fate.Bounded).
func (m Memory) BoundedWithoutTrend() bool {
	for _, f := range m.Fates {
		if !f.Bounded() {
			return false
		}
	}
	return len(m.Fates) > 0
}

func (m Memory) String() string {
	n := len(m.Fates)
	var head string
	switch m.Shape {
	case Failed:
		head = fmt.Sprintf("failed in %d of %d repeats", m.failed, n)
	case Undecided:
		var each []string
		for _, f := range m.Fates {
			each = append(each, shapeOfRepeat(f).String())
		}
		head = fmt.Sprintf("the %d repeats disagree (%s): not shown", n, strings.Join(each, ", "))
	default:
		head = fmt.Sprintf("%s in %d of %d repeats", m.Shape, n, n)
	}
	if !math.IsInf(m.CrossLo, 1) {
		head += fmt.Sprintf(", the cap projected at %.1f–%.1f× the load's length (horizon %d×, arena's choice)", m.CrossLo, m.CrossHi, horizon)
	}
	if n == 0 {
		return head
	}
	return head + "; repeat 1: " + m.Fates[0].String()
}
