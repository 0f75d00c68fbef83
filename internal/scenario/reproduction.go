package scenario

import (
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// Reproduction is how `arena reproduce` runs a scenario: the study's own form on the
// contenders that stand for the stacks the study compared (and forms beside it, such as the
// steady state), then every other contender in the largest form the lab's time budget allows.
type Reproduction struct {
	// Stacks stand for the stacks the study compared, in the study's order; Beyond are those
	// the lab's claims beyond the study need in the same form (e.g. virtual threads).
	Stacks, Beyond []string
	// Study are the forms run on Stacks and Beyond: the study's own first, then any beside it.
	Study []Form
	// Matrix is the form every other contender runs in.
	Matrix Form
	// Notes say what of the study cannot run here, and what runs instead.
	Notes []string
	// Setup is how the study ran, as its text says; Published its own figures, each beside
	// ours on the same axes in the findings.
	Setup     Setup
	Published []Published
}

// Setup is how a study ran, each line as its text says it, with the seed's line.
type Setup struct {
	Machine  string // e.g. "a GCE instance, 4 vCPUs, 3.6 GB (seeds/002 line 61)"
	Software string // the stacks' versions
	Method   string // the load tool and how it was used
}

// Published is one figure a study gave: what, as the study put it, where it says so, and
// where ours is read to set beside it.
type Published struct {
	Claim  string // the claim it bears on
	What   string // e.g. "Vert.x, requests/s"
	Theirs string // the figure as the study gives it, e.g. "6,654.65 requests/s"
	Source string // the seed and line, e.g. "seeds/002 line 228 (ab, Requests per second)"
	// Ours is where our figure is read; with Per, ours is Ours / Per, a ratio as the study's.
	Ours Read
	Per  *Read
	// Value is Theirs as a number in Ours' unit, so that the findings can tell when ours is
	// more than 2× away (0: the study gives no number to set beside ours).
	Value float64
	// Differs says why ours (in Ours' unit) is where it is, derived from what run recorded
	// (its conditions, and a model where one exists: N threads waiting W each serve at most
	// N/W requests/s; a core's CPU is at most 100 %), or why the study's own figure cannot
	// follow from its published setup. The findings show it wherever ours and Value are more
	// than 2× apart; nil where no such reason can be derived, which the findings say.
	Differs func(run *results.Run, ours float64) string
}

// Read names one of our figures: a contender's at a level, as results.FigureOf reads it.
type Read struct {
	Contender, Level string
	Figure, Tag      string
	Unit             string // how it reads: ms, requests/s, MB, ×
}

// Form is one way to run a scenario: a preset, quick or not, some of its levels (all when
// none), the measured load's length (0: the preset's), and why this form.
type Form struct {
	Preset   string
	Quick    bool
	Levels   []string
	Duration time.Duration
	Why      string
}

// Reproducible is a scenario that says how a reproduction runs it.
type Reproducible interface {
	Reproduction() Reproduction
}

// StudyContenders are the contenders the study's forms run on: Stacks, then Beyond.
func (r Reproduction) StudyContenders() []string {
	return append(append([]string(nil), r.Stacks...), r.Beyond...)
}
