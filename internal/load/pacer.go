package load

import (
	"fmt"
	"time"
)

// A Pacer is the schedule of an open-loop stream: when each hit is *intended* to leave.
// Latency is measured from that intended time, so a client or server that falls behind
// cannot hide its stall by sending later (coordinated omission).
type Pacer interface {
	// Due returns the offset from the stream's start at which hit n (counting from 0)
	// is due, and false when the schedule has no hit n.
	Due(n int64) (time.Duration, bool)
	// Rate is the pacer's mean rate in hits per second, for reports.
	Rate() float64
	fmt.Stringer
}

// ConstantPacer sends Freq hits every Per: a constant arrival rate.
type ConstantPacer struct {
	Freq int
	Per  time.Duration
}

var _ Pacer = ConstantPacer{}

// PerSecond is a ConstantPacer of n hits per second.
func PerSecond(n int) ConstantPacer { return ConstantPacer{Freq: n, Per: time.Second} }

// Due spaces hits evenly, computed from n rather than accumulated, so rounding never drifts.
func (p ConstantPacer) Due(n int64) (time.Duration, bool) {
	if p.Freq <= 0 || p.Per <= 0 || n < 0 {
		return 0, false
	}
	return time.Duration(n * int64(p.Per) / int64(p.Freq)), true
}

func (p ConstantPacer) Rate() float64 {
	if p.Per <= 0 {
		return 0
	}
	return float64(p.Freq) / p.Per.Seconds()
}

func (p ConstantPacer) String() string {
	if p.Per == time.Second {
		return fmt.Sprintf("%d/s", p.Freq)
	}
	return fmt.Sprintf("%d/%s", p.Freq, p.Per)
}

// HitsWithin counts the hits a pacer schedules in [0, d).
func HitsWithin(p Pacer, d time.Duration) int64 {
	var n int64
	for {
		due, ok := p.Due(n)
		if !ok || due >= d {
			return n
		}
		n++
	}
}
