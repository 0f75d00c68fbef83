package gate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// Judge checks a run against the gate: one check per cell (contender and level, its
// repeats summarised), one per claim, and one per threshold at every cell whose level
// measures its stream, in that order. Every figure is the summary's (results.Summarise):
// percentiles of the merged histograms, never averages of percentiles.
func (g Gate) Judge(run *results.Run) []Check {
	verdicts := map[string]results.Verdict{}
	for _, v := range run.Verdicts {
		verdicts[v.Contender+"/"+v.Level] = v
	}
	var out []Check
	for _, cs := range run.Summary {
		v, ok := verdicts[cs.Contender+"/"+cs.Level]
		if !ok {
			v = verdicts[cs.Contender+"/"] // a verdict on the contender as a whole
		}
		out = append(out, g.cell(run, cs, v))
	}
	for _, cl := range run.Claims {
		out = append(out, g.claim(cl))
	}
	for _, th := range g.Thresholds {
		for _, cs := range run.Summary {
			if c, ok := g.threshold(th, run, cs); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// statusOf is a check's status given the words that describe it: failed on those the gate
// names, skipped when some other word describes it (a bad thing not asked about, never
// shown as passed) or there was nothing to judge, passed otherwise.
func (g Gate) statusOf(words []string, judged bool) (string, []string) {
	var on []string
	for _, w := range words {
		if g.Fails(w) {
			on = append(on, w)
		}
	}
	switch {
	case len(on) > 0:
		return Failed, on
	case len(words) > 0 || !judged:
		return Skipped, nil
	}
	return Passed, nil
}

// cell is the check of one contender at one level.
func (g Gate) cell(run *results.Run, cs results.CellSummary, v results.Verdict) Check {
	c := Check{Kind: KindCell, Name: cs.Contender + "/" + cs.Level, Contender: cs.Contender, Level: cs.Level,
		Verdict: v.Verdict, Words: cellWords(cs, v), Streams: streamsOf(cs), Seconds: secondsOf(run, cs)}
	c.Status, c.FailedOn = g.statusOf(c.Words, ranAny(cs.Outcomes))
	c.Message = cellMessage(cs, v)
	return c
}

// cellWords are the --fail-on words that describe a cell, in Words' order.
func cellWords(cs results.CellSummary, v results.Verdict) []string {
	has := map[string]bool{}
	for _, o := range cs.Outcomes {
		switch o {
		case results.OutcomeCrashed, results.OutcomeOutOfMemory, results.OutcomeUnready:
			has[FailCrashed] = true
		case results.OutcomeUnresponsive:
			has[FailUnresponsive] = true
		case results.OutcomeError:
			has[FailInconclusive] = true // the lab could not run it: no figure at all
		}
	}
	if cs.Faulty() {
		has[FailFaults] = true
	}
	if pct, _ := cs.FailedPct(); pct > scenario.MaxFailedPct {
		has[FailErrors] = true
	}
	if _, disturbed := scenario.Disturbed(cs); disturbed {
		has[FailInconclusive] = true
	}
	if v.Verdict != "" && verdictTone(v) == results.Bad {
		has[FailFails] = true
	}
	var out []string
	for _, w := range Words {
		if has[w] {
			out = append(out, w)
		}
	}
	return out
}

// cellMessage is a cell's verdict and figures in a line.
func cellMessage(cs results.CellSummary, v results.Verdict) string {
	head := cs.Contender + " at " + cs.Level + ": "
	switch {
	case v.Verdict == "":
		head += "no verdict"
	case v.Why == "":
		head += v.Verdict
	default:
		head += v.Verdict + " (" + v.Why + ")"
	}
	parts := []string{head}
	if odd := notOK(cs.Outcomes); len(odd) > 0 {
		parts = append(parts, "repeats ended "+strings.Join(cs.Outcomes, ", "))
	}
	for _, t := range cs.Tags {
		parts = append(parts, streamText(t))
	}
	if cs.Faulty() {
		parts = append(parts, "faults: "+results.FormatFaults(cs.Faults))
	}
	for _, flag := range []struct {
		on   bool
		text string
	}{{cs.ClientBnd, "client-bound"}, {cs.SharedCPU, "shared CPU"}, {cs.Noisy, "noisy: " + strings.Join(cs.NoisyWhy, ", ")}} {
		if flag.on {
			parts = append(parts, flag.text)
		}
	}
	return strings.Join(parts, "; ")
}

// streamText is one tag's figures: the merged percentiles, the rate and the errors.
func streamText(t results.TagSummary) string {
	if t.Merged.Count == 0 {
		return fmt.Sprintf("%s: no answer measured, errors %s", t.Tag, errorsText(t.Errors, t.Sent, t.ErrKinds))
	}
	return fmt.Sprintf("%s p50 %s, p99 %s, %s requests/s, errors %s", t.Tag, results.FormatMs(t.Merged.P50),
		results.FormatMs(t.Merged.P99), formatRPS(t.RPS.Median), errorsText(t.Errors, t.Sent, t.ErrKinds))
}

// errorsText is an error rate with its counts and kinds: "16.7 % (167 of 1000: 167 timeout)".
func errorsText(errs, sent int64, kinds map[string]int64) string {
	if sent == 0 {
		return "none sent"
	}
	text := results.FormatPct(float64(errs) / float64(sent) * 100)
	if errs == 0 {
		return text
	}
	text += fmt.Sprintf(" (%d of %d", errs, sent)
	if k := results.FormatFaults(kinds); k != "" {
		text += ": " + k
	}
	return text + ")"
}

// claim is the check of one of the study's claims.
func (g Gate) claim(cl results.Claim) Check {
	c := Check{Kind: KindClaim, Name: "(" + cl.ID + ") " + cl.Text, Verdict: cl.Verdict, Message: cl.Verdict + ": " + cl.Why}
	switch {
	case cl.Verdict == results.ClaimFails:
		c.Words = []string{FailFails}
	case cl.Verdict == results.ClaimPartly:
		c.Words = []string{FailPartly}
	case results.Untested(cl.Verdict):
		c.Words = []string{FailUntested}
	}
	c.Status, c.FailedOn = g.statusOf(c.Words, true)
	return c
}

// streamsOf are a cell's figures per tag.
func streamsOf(cs results.CellSummary) []Stream {
	var out []Stream
	for _, t := range cs.Tags {
		out = append(out, Stream{Tag: t.Tag, P50: t.Merged.P50, P99: t.Merged.P99, P999: t.Merged.P999,
			RPS: t.RPS.Median, Sent: t.Sent, Errors: t.Errors, ErrorPct: t.ErrorPct})
	}
	return out
}

// secondsOf is the load's length over a cell's repeats.
func secondsOf(run *results.Run, cs results.CellSummary) float64 {
	var s float64
	for _, c := range run.Cells {
		if c.Contender == cs.Contender && c.Level == cs.Level {
			s += c.Seconds
		}
	}
	return s
}

// ranAny says whether the load ran in some repeat (results.Ran).
func ranAny(outcomes []string) bool { return slices.ContainsFunc(outcomes, results.Ran) }

// notOK are the outcomes other than ok, each once.
func notOK(outcomes []string) []string {
	var out []string
	for _, o := range outcomes {
		if o != results.OutcomeOK && !slices.Contains(out, o) {
			out = append(out, o)
		}
	}
	return out
}

// tagOf is the summary's tag named tag.
func tagOf(cs results.CellSummary, tag string) (results.TagSummary, bool) {
	for _, t := range cs.Tags {
		if t.Tag == tag {
			return t, true
		}
	}
	return results.TagSummary{}, false
}

// planned says whether the run's plan of level measures the stream tag.
func planned(run *results.Run, level, tag string) bool {
	for _, l := range run.Scenario.Levels {
		if l.Name == level && slices.ContainsFunc(l.Streams, func(s results.StreamPlan) bool { return s.Tag == tag }) {
			return true
		}
	}
	return false
}

// withoutTimeouts are error kinds but the timeouts, which the latency holds.
func withoutTimeouts(kinds map[string]int64) map[string]int64 {
	out := maps.Clone(kinds)
	delete(out, results.ErrKindTimeout)
	return out
}
