package scenario

import (
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// Summaries indexes a run's summaries by contender and level.
type Summaries map[string]map[string]results.CellSummary

// Index builds Summaries from a run.
func Index(run *results.Run) Summaries {
	s := Summaries{}
	for _, cs := range run.Summary {
		if s[cs.Contender] == nil {
			s[cs.Contender] = map[string]results.CellSummary{}
		}
		s[cs.Contender][cs.Level] = cs
	}
	return s
}

// Tag returns contender's figures for tag at level, and false when it has none usable: not
// run, no repeat that ended ok, or figures that are no verdict on the server (Unjudged:
// client-bound, or with delivery faults), which no claim counts and no ranking places.
func (s Summaries) Tag(contender, level, tag string) (results.TagSummary, bool) {
	cs, ok := s[contender][level]
	if !ok || !slices.Contains(cs.Outcomes, results.OutcomeOK) {
		return results.TagSummary{}, false
	}
	if _, _, unjudged := Unjudged(cs); unjudged {
		return results.TagSummary{}, false
	}
	for _, t := range cs.Tags {
		if t.Tag == tag && t.Merged.Count > 0 {
			return t, true
		}
	}
	return results.TagSummary{}, false
}

// FirstPresent returns the first of names that the run measured, for claims about a stack
// that more than one contender can stand for.
func (s Summaries) FirstPresent(names ...string) (string, bool) {
	for _, n := range names {
		if _, ok := s[n]; ok {
			return n, true
		}
	}
	return "", false
}

// Within reports whether got is within frac of want (e.g. 0.25 for ±25 %).
func Within(got, want, frac float64) bool {
	return want > 0 && got >= want*(1-frac) && got <= want*(1+frac)
}

// Part is one part of a claim, judged on its own: a verdict (one of the results.Claim*
// words) and why.
type Part struct{ Verdict, Why string }

// Combine gives a claim of several parts its verdict, the one rule every claim is judged by.
// Each part is shown (holds, or partly over its places), shown otherwise (fails), not shown
// (measured, but the repeats cannot decide), or untested (not run, or not at its conditions).
// A part not shown or untested is neither evidence for the claim nor against it:
//   - holds when every part holds;
//   - holds where tested when every decided part holds and the rest are not shown or untested;
//   - fails when every decided part fails (the rest not shown or untested);
//   - partly when decided parts disagree, or one holds partly;
//   - not shown when no part was decided and at least one was measured;
//   - untested (untested here, when a part's conditions were not given) when none was measured.
func Combine(c results.Claim, parts ...Part) results.Claim {
	var held, failed, partly, notShown, untested int
	untestedWord := results.ClaimUntested
	var why []string
	for _, p := range parts {
		switch p.Verdict {
		case results.ClaimUntested, results.ClaimUntestedHere:
			if p.Verdict == results.ClaimUntestedHere {
				untestedWord = results.ClaimUntestedHere
			}
			untested++
			why = append(why, p.Verdict+": "+p.Why)
			continue
		case results.ClaimNotShown:
			notShown++
			why = append(why, p.Verdict+": "+p.Why)
			continue
		case results.ClaimHolds:
			held++
		case results.ClaimHoldsWhereTested: // held, and not all of it: the rest undecided
			held++
			notShown++
		case results.ClaimFails:
			failed++
		default:
			partly++
		}
		why = append(why, p.Why)
	}
	c.Verdict = verdictOf(held, failed, partly, notShown, untested, untestedWord)
	if len(parts) > 0 && !slices.ContainsFunc(parts, func(p Part) bool { return p.Verdict != c.Verdict }) {
		// every part reads the claim's own word: the claim says it once
		why = why[:0]
		for _, p := range parts {
			why = append(why, p.Why)
		}
	}
	c.Why = strings.Join(why, "; ")
	return c
}

// verdictOf is Combine's rule over counts of parts: held, failed, partly (any other decided
// word), not shown and untested.
func verdictOf(held, failed, partly, notShown, untested int, untestedWord string) string {
	decided := held + failed + partly
	switch {
	case decided == 0 && notShown == 0:
		return untestedWord
	case decided == 0:
		return results.ClaimNotShown
	case held == decided && notShown == 0 && untested == 0:
		return results.ClaimHolds
	case held == decided:
		return results.ClaimHoldsWhereTested
	case failed == decided:
		return results.ClaimFails
	}
	return results.ClaimPartly
}

// Count is the verdict of a part that holds where a test passes, over places that were all
// decided: holds at all, fails at none, partly between, untested with none. It is Combine's
// rule over such places.
func Count(passed, of int) string {
	return Tally(passed, of-passed, 0, 0)
}

// Counts are a part's places by how each was shown, for Tally.
type Counts struct{ Held, Failed, NotShown int }

// Add counts one place's verdict: shown the claim's way (holds), the other way (fails), or
// measured but undecided (any other word).
func (c *Counts) Add(verdict string) {
	switch verdict {
	case results.ClaimHolds:
		c.Held++
	case results.ClaimFails:
		c.Failed++
	default:
		c.NotShown++
	}
}

// Of is how many places were counted.
func (c Counts) Of() int { return c.Held + c.Failed + c.NotShown }

// Verdict is Tally's over the counts, none untested.
func (c Counts) Verdict() string { return Tally(c.Held, c.Failed, c.NotShown, 0) }

// Tally is Combine's rule over a part's places: held shown the claim's way, failed shown the
// other way, notShown measured but undecided, untested not measured.
func Tally(held, failed, notShown, untested int) string {
	return verdictOf(held, failed, 0, notShown, untested, results.ClaimUntested)
}
