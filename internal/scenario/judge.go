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

// Combine gives a claim of several parts its verdict, the one rule every claim is judged by:
// holds when every part was tested and holds; holds where tested when every tested part
// holds and the rest are untested (a part not run is no mark against the claim, nor
// evidence for it); fails when every tested part fails; untested (or untested here, when a
// part's conditions were not given) when none was tested; partly otherwise.
func Combine(c results.Claim, parts ...Part) results.Claim {
	var tested, held, failed int
	untested := results.ClaimUntested
	var why []string
	for _, p := range parts {
		switch p.Verdict {
		case results.ClaimUntested, results.ClaimUntestedHere:
			if p.Verdict == results.ClaimUntestedHere {
				untested = results.ClaimUntestedHere
			}
			why = append(why, p.Verdict+": "+p.Why)
			continue
		case results.ClaimHolds:
			held++
		case results.ClaimFails:
			failed++
		}
		tested++
		why = append(why, p.Why)
	}
	c.Verdict = verdictOf(tested, held, failed, len(parts), untested)
	c.Why = strings.Join(why, "; ")
	return c
}

func verdictOf(tested, held, failed, parts int, untested string) string {
	switch {
	case tested == 0:
		return untested
	case held == parts:
		return results.ClaimHolds
	case held == tested:
		return results.ClaimHoldsWhereTested
	case failed == tested:
		return results.ClaimFails
	}
	return results.ClaimPartly
}

// Count is the verdict of a part that holds where a test passes, over the places it was
// tested: holds at all, fails at none, partly between, untested with none. It is Combine's
// rule over places that were all tested.
func Count(passed, of int) string {
	return verdictOf(of, passed, of-passed, of, results.ClaimUntested)
}
