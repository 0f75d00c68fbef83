package scenario

import (
	"slices"

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
// run, or no repeat that ended ok.
func (s Summaries) Tag(contender, level, tag string) (results.TagSummary, bool) {
	cs, ok := s[contender][level]
	if !ok || !slices.Contains(cs.Outcomes, results.OutcomeOK) {
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
