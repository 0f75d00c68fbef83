package results

import "slices"

// Merge combines runs of one scenario into one, taking each contender's cells, summaries,
// verdicts and record from the run pick names for it: the matrix's cell of a contender comes
// from the latest run that measured it, and a reproduction's claims are judged again over its
// study and matrix runs together. The merged run has the first picked run's identity and the
// levels of all, in order; its claims are left for the scenario to judge again.
func Merge(pick map[string]*Run, order []string) *Run {
	var out *Run
	for _, name := range order {
		r := pick[name]
		if r == nil {
			continue
		}
		if out == nil {
			base := *r
			base.Contenders, base.Cells, base.Summary, base.Verdicts, base.Claims = nil, nil, nil, nil, nil
			base.Scenario.Levels = nil
			out = &base
		}
		for _, l := range r.Scenario.Levels {
			if !slices.ContainsFunc(out.Scenario.Levels, func(m Level) bool { return m.Name == l.Name }) {
				out.Scenario.Levels = append(out.Scenario.Levels, l)
			}
		}
		out.Contenders = appendOf(out.Contenders, r.Contenders, name, func(c Contender) string { return c.Name })
		out.Cells = appendOf(out.Cells, r.Cells, name, func(c Cell) string { return c.Contender })
		out.Summary = appendOf(out.Summary, r.Summary, name, func(s CellSummary) string { return s.Contender })
		out.Verdicts = appendOf(out.Verdicts, r.Verdicts, name, func(v Verdict) string { return v.Contender })
	}
	return out
}

// appendOf appends to out the records of from that are contender's.
func appendOf[T any](out, from []T, contender string, of func(T) string) []T {
	for _, x := range from {
		if of(x) == contender {
			out = append(out, x)
		}
	}
	return out
}
