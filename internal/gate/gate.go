// Package gate judges a finished run for CI: what --fail-on names (claim verdicts, cell
// outcomes) and the thresholds a user writes per stream, each judged into a Check with its
// figures; and a comparison's regressions (arena compare --fail-on-regression). It writes
// the checks as JUnit XML and as summary.json beside results.json. The command line parses
// its flags once into a Gate (Parse), judges with it and maps the result to an exit status.
package gate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// The words --fail-on takes: three of a claim's verdict, five of a cell's outcome.
const (
	// FailFails: a claim the run contradicts (results.ClaimFails), or a cell whose
	// scenario's verdict reads bad (its tone: isolation's starved, failing (errors), faults,
	// crashed, …).
	FailFails = "fails"
	// FailPartly: a claim that holds in part (results.ClaimPartly).
	FailPartly = "partly"
	// FailUntested: a claim with no evidence, untested or untested here (results.Untested).
	FailUntested = "untested"
	// FailCrashed: a repeat whose contender died (crashed, out-of-memory) or never became
	// ready.
	FailCrashed = "crashed"
	// FailUnresponsive: a repeat whose contender stopped answering the lab.
	FailUnresponsive = "unresponsive"
	// FailFaults: deliveries that were wrong (lost, duplicated, out of order, leaked, …).
	FailFaults = "faults"
	// FailErrors: a stream failing more requests than the scenario allows a judged cell
	// (scenario.MaxFailedPct: the verdict failing (errors)).
	FailErrors = "errors"
	// FailInconclusive: figures that are not the server's (client-bound, shared CPU) or that
	// the lab could not take (a cell it could not run).
	FailInconclusive = "inconclusive"
)

// Words are --fail-on's words, in the order help gives them.
var Words = []string{FailFails, FailPartly, FailUntested, FailCrashed, FailUnresponsive, FailFaults, FailErrors, FailInconclusive}

// Gate is what fails a run: the --fail-on words and the thresholds, parsed and checked once.
// The zero Gate fails nothing; it still judges (summary.json lists every check).
type Gate struct {
	FailOn     []string
	Thresholds []Threshold
}

// Parse reads --fail-on's words (each may be a comma-separated list) and --threshold's
// expressions; an unknown word or a malformed threshold is an error naming it.
func Parse(failOn, thresholds []string) (Gate, error) {
	var g Gate
	for _, list := range failOn {
		for _, w := range strings.Split(list, ",") {
			w = strings.ToLower(strings.TrimSpace(w))
			switch {
			case w == "":
				continue
			case !slices.Contains(Words, w):
				return Gate{}, fmt.Errorf("--fail-on %q: not a word it knows; give any of %s", w, strings.Join(Words, ", "))
			case !slices.Contains(g.FailOn, w):
				g.FailOn = append(g.FailOn, w)
			}
		}
	}
	for _, text := range thresholds {
		th, err := ParseThreshold(text)
		if err != nil {
			return Gate{}, err
		}
		g.Thresholds = append(g.Thresholds, th)
	}
	return g, nil
}

// Active says whether the gate can fail anything.
func (g Gate) Active() bool { return len(g.FailOn) > 0 || len(g.Thresholds) > 0 }

// Fails says whether word is one the gate fails on.
func (g Gate) Fails(word string) bool { return slices.Contains(g.FailOn, word) }

// CheckTags refuses a threshold on a stream none of tags is (the streams a scenario's plan
// measures), naming the ones there are; a threshold on every stream (errors) needs none.
func (g Gate) CheckTags(tags []string) error {
	for _, th := range g.Thresholds {
		if th.Tag != "" && !slices.Contains(tags, th.Tag) {
			return fmt.Errorf("--threshold %q: no stream %q in this run; its streams: %s", th.Text, th.Tag, strings.Join(tags, ", "))
		}
	}
	return nil
}

// Describe says the gate in one line, e.g. "--fail-on fails,crashed; --threshold instant:p99<50ms".
func (g Gate) Describe() string {
	var parts []string
	if len(g.FailOn) > 0 {
		parts = append(parts, "--fail-on "+strings.Join(g.FailOn, ","))
	}
	for _, th := range g.Thresholds {
		parts = append(parts, "--threshold "+th.Text)
	}
	if len(parts) == 0 {
		return "no --fail-on or --threshold: nothing fails the command"
	}
	return strings.Join(parts, "; ")
}

// Check statuses.
const (
	Passed = "passed"
	Failed = "failed"
	// Skipped: nothing to judge (a cell not measured), or something bad the gate was not
	// asked about (a starved cell without fails, an untested claim without untested): never
	// shown as passed.
	Skipped = "skipped"
)

// Kinds of check.
const (
	KindCell      = "cell"
	KindClaim     = "claim"
	KindThreshold = "threshold"
	KindChange    = "change" // a comparison's row (arena compare)
)

// Check is one thing judged: a cell, a claim, a threshold at a cell, or a comparison's row;
// its status under the gate, the words that failed it, and its figures.
type Check struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Contender string `json:"contender,omitempty"`
	Level     string `json:"level,omitempty"`
	Status    string `json:"status"`
	// FailedOn are the --fail-on words (or "threshold", "regression") that failed it.
	FailedOn []string `json:"failed_on,omitempty"`
	// Verdict is a cell's scenario verdict or a claim's; Words the --fail-on words that
	// describe the cell or claim, whether or not the gate fails on them.
	Verdict string   `json:"verdict,omitempty"`
	Words   []string `json:"words,omitempty"`
	Message string   `json:"message"` // the figures, in a line
	// Value and Limit are a threshold's measured figure and the bound it was held to (or a
	// change's, in %), Unit theirs; ErrorPct is the failed requests beside them.
	Value    *float64 `json:"value,omitempty"`
	Limit    *float64 `json:"limit,omitempty"`
	Unit     string   `json:"unit,omitempty"`
	ErrorPct *float64 `json:"error_pct,omitempty"`
	// Streams are a cell's figures per tag.
	Streams []Stream `json:"streams,omitempty"`
	Seconds float64  `json:"seconds,omitempty"` // of load, over its repeats
}

// Stream is a cell's figures for one tag, from the summary: percentiles of the merged
// histograms, requests/s as the median over repeats, errors over every repeat.
type Stream struct {
	Tag      string  `json:"tag"`
	P50      float64 `json:"p50_ms"`
	P99      float64 `json:"p99_ms"`
	P999     float64 `json:"p999_ms"`
	RPS      float64 `json:"rps"`
	Sent     int64   `json:"sent"`
	Errors   int64   `json:"errors"`
	ErrorPct float64 `json:"error_pct"`
}

// FailedChecks are the checks of cs that failed.
func FailedChecks(cs []Check) []Check {
	var out []Check
	for _, c := range cs {
		if c.Status == Failed {
			out = append(out, c)
		}
	}
	return out
}

// Count is how many of cs ended each way.
func Count(cs []Check) (passed, failed, skipped int) {
	for _, c := range cs {
		switch c.Status {
		case Passed:
			passed++
		case Failed:
			failed++
		default:
			skipped++
		}
	}
	return passed, failed, skipped
}

// verdictTone is a verdict's tone as recorded, or the lab's own word's where none was.
func verdictTone(v results.Verdict) results.Tone {
	if v.Tone != "" {
		return v.Tone
	}
	return results.ToneOf(v.Verdict)
}

func ptr(v float64) *float64 { return &v }
