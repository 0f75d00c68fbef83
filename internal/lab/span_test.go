package lab

import (
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

// Responses per second count over the drive for a closed loop, over the schedule for a paced
// load, and over the measured loop's own span (its drain included) for a steady one.
func TestThroughputSpan(t *testing.T) {
	elapsed := 40 * time.Second
	closed := load.Description{Duration: 10 * time.Second}
	paced := load.Description{Duration: 10 * time.Second, Paced: true}
	steady := load.SteadyFigures{MeasuredS: 14.5}
	for _, c := range []struct {
		name string
		d    load.Description
		figs results.Figures
		want time.Duration
	}{
		{"closed loop", closed, nil, elapsed},
		{"open loop", paced, nil, 10 * time.Second},
		{"steady, measured with its drain", paced, steady, 14500 * time.Millisecond},
		{"steady that never ran its measurement", paced, load.SteadyFigures{}, 10 * time.Second},
	} {
		if got := throughputSpan(c.d, c.figs, elapsed); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
