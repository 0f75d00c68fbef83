package scenario

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// Options shape a plan from the command line.
type Options struct {
	Preset   string        // "" for the scenario's default
	Quick    bool          // a shorter form, for a first look and for CI
	Duration time.Duration // 0: the preset's
	Timeout  time.Duration // 0: the preset's
}

// Resolved is Options checked against a scenario, with its defaults filled in: what k6's
// BaseConfig is to its executors, one place for what every Plan shares.
type Resolved struct {
	Preset string
	Quick  bool
	opts   Options
}

// Resolve checks the preset against the scenario's (the first is the default); an unknown
// one is an error that lists them.
func (o Options) Resolve(s Scenario) (Resolved, error) {
	presets := s.Presets()
	r := Resolved{Preset: o.Preset, Quick: o.Quick, opts: o}
	if r.Preset == "" {
		r.Preset = presets[0]
	}
	if !slices.Contains(presets, r.Preset) {
		return r, fmt.Errorf("%s has no preset %q (presets: %s)", s.Name(), r.Preset, strings.Join(presets, ", "))
	}
	return r, nil
}

// Duration is --duration when given, else the preset's d.
func (r Resolved) Duration(d time.Duration) time.Duration {
	if r.opts.Duration > 0 {
		return r.opts.Duration
	}
	return d
}

// Timeout is --timeout when given, else the preset's d.
func (r Resolved) Timeout(d time.Duration) time.Duration {
	if r.opts.Timeout > 0 {
		return r.opts.Timeout
	}
	return d
}

// Overridden says whether --duration or --timeout changed the preset's.
func (r Resolved) Overridden() bool { return r.opts.Duration > 0 || r.opts.Timeout > 0 }

// Word is one of a scenario's verdict words with the tone it reads in.
type Word struct {
	Text string
	Tone results.Tone
}

// Verdict words every scenario may give a contender.
var (
	// NotMeasured: the contender lacked what the load needs, or no repeat ended ok.
	NotMeasured = Word{"n/a", results.Neutral}
	// Unsupported: the contender lacks the feature the scenario needs (see its README).
	Unsupported = Word{results.OutcomeUnsupported, results.Neutral}
	// Inconclusive: the client, not the server, may have set the pace, so the figures are no
	// verdict on the server, and no claim counts them.
	Inconclusive = Word{"inconclusive (client-bound)", results.Neutral}
	// InconclusiveShared: other work took a share of the server's CPUs, so the figures are a
	// shared core's, no verdict on the server, and no claim counts them.
	InconclusiveShared = Word{"inconclusive (shared CPU)", results.Neutral}
	// Faults: the server got deliveries wrong (lost, duplicated, out of order, leaked,
	// malformed): whatever its figures, they are not ranked beside honest ones.
	Faults = Word{"faults", results.Bad}
)

// Unjudged is the verdict for a summary whose figures are no verdict on the server's speed or
// memory, with why: delivery faults first (a duplicated or leaked message is the server's
// fault at any pace), then failed requests over MaxFailedPct (a fast wrong answer is no
// fast answer), then figures something else set (its client, or other work on its
// CPUs); false when its figures can be judged.
func Unjudged(cs results.CellSummary) (Word, string, bool) {
	if cs.Faulty() {
		return Faults, "delivery faults: " + results.FormatFaults(cs.Faults), true
	}
	if why, ok := failing(cs); ok {
		return Failing, why, true
	}
	if w, ok := Disturbed(cs); ok {
		return w, map[string]string{
			Inconclusive.Text:       "the client was busy or late (see client-bound): not the server's figures",
			InconclusiveShared.Text: "other work shared the server's CPUs (see shared CPU): not the server's figures",
		}[w.Text], true
	}
	return Word{}, "", false
}

// FastEndpoints splits the tags of cs that must stay fast beside slow work (tags: /instant
// and the probes) into those that did not, each said with why (no correct answer, a p99 at or
// past below, or any failed request: a fast endpoint that failed is not fast), and those that
// did, each with its p99. Study 004 and the database study judge isolation by it.
func FastEndpoints(cs results.CellSummary, tags []string, below time.Duration) (slow, fine []string) {
	for _, t := range cs.Tags {
		if !slices.Contains(tags, t.Tag) {
			continue
		}
		desc := fmt.Sprintf("%s p99 %s", t.Tag, results.FormatMs(t.Merged.P99))
		if t.Merged.Count == 0 || t.Merged.P99 >= float64(below)/float64(time.Millisecond) || t.Errors > 0 {
			if t.Errors > 0 {
				desc += fmt.Sprintf(" (%d errors)", t.Errors)
			}
			slow = append(slow, desc)
		} else {
			fine = append(fine, desc)
		}
	}
	return slow, fine
}

// Disturbed says whether something other than the server set a summary's figures (its
// client, or other work on its CPUs), and the word that says which.
func Disturbed(cs results.CellSummary) (Word, bool) {
	switch {
	case cs.ClientBnd:
		return Inconclusive, true
	case cs.SharedCPU:
		return InconclusiveShared, true
	}
	return Word{}, false
}

// Outcome is the word for a cell that did not end ok, e.g. "crashed".
func Outcome(status string) Word { return Word{status, results.ToneOf(status)} }

// Cause is what a qualified word names in its brackets ("client-bound" of "inconclusive
// (client-bound)"), else the word itself.
func (w Word) Cause() string {
	if i := strings.Index(w.Text, "("); i >= 0 && strings.HasSuffix(w.Text, ")") {
		return w.Text[i+1 : len(w.Text)-1]
	}
	return w.Text
}

// Verdict is w given to a contender (at a level, or "" for the contender as a whole).
func (w Word) Verdict(contender, level, why string) results.Verdict {
	return results.Verdict{Contender: contender, Level: level, Verdict: w.Text, Tone: w.Tone, Why: why}
}
