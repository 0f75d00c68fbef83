// Package compare tells two runs of one scenario apart, as benchstat tells two sets of
// benchmarks apart: per contender, level and tag, throughput and latency percentiles of each,
// the change, and whether it is significant given the repeats' spread (a Mann-Whitney U test
// over the repeats; "~" where it is not).
package compare

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// DefaultAlpha is the P under which a change counts as significant, as benchstat's.
const DefaultAlpha = 0.05

// Comparison is run B against run A.
type Comparison struct {
	A, B  *results.Run
	Alpha float64
	Rows  []Row
	// Differs says what else differs between the runs: contract variables, builds, settings.
	Differs []string
	// OnlyIn are the contenders and levels one run has and the other not.
	OnlyIn []string
	// LeftOut are repeats that ended ok but whose figures are not the server's plain measure
	// (integrity faults, or a client that may have set the pace): not compared.
	LeftOut []string
	// MaxFailedPct is the most a side's requests may fail (results.TagSummary.FailedPct) and
	// its change still read as better or worse: the caller sets scenario.MaxFailedPct (this
	// package is below scenario). 0 marks no side failing.
	MaxFailedPct float64
}

// Row is one figure of one contender's tag at one level, in A and in B.
type Row struct {
	Contender, Level, Tag string
	Figure                string // one of Figures
	A, B                  []float64
	Test                  UTest
	// ErrA and ErrB are each side's error rate over the repeats compared (errors per sent, %),
	// shown beside its figure; FailedA and FailedB the part of it that is no slow answer but a
	// wrong one or none (results.TagSummary.FailedPct).
	ErrA, ErrB       float64
	FailedA, FailedB float64
}

// Failing names the sides of r that failed more of their requests than c.MaxFailedPct
// ("A", "B" or "A and B"): such a side's figures are the speed of failing, and the change is
// neither better nor worse. "" when neither did, or no threshold is set.
func (c *Comparison) Failing(r Row) string {
	if c.MaxFailedPct <= 0 {
		return ""
	}
	var sides []string
	for _, s := range []struct {
		name   string
		failed float64
	}{{"A", r.FailedA}, {"B", r.FailedB}} {
		if s.failed > c.MaxFailedPct {
			sides = append(sides, s.name)
		}
	}
	return strings.Join(sides, " and ")
}

// The figures a comparison reads from each repeat, and which way is better.
var Figures = []struct {
	Name       string
	HigherBest bool
}{{"requests/s", true}, {"p50", false}, {"p99", false}, {"p99.9", false}}

// Of reads the figure from one repeat's tag.
func Of(figure string, t results.Tag) float64 {
	switch figure {
	case "requests/s":
		return t.RPS
	case "p50":
		return t.Response.P50
	case "p99":
		return t.Response.P99
	}
	return t.Response.P999
}

// Runs compares b against a; runs of different scenarios, presets, forms or loads are refused:
// their figures measure different things.
func Runs(a, b *results.Run, alpha float64) (*Comparison, error) {
	if err := comparable(a, b); err != nil {
		return nil, err
	}
	c := &Comparison{A: a, B: b, Alpha: alpha}
	for _, k := range keysOf(a, b) {
		sa, sb := samples(a, k), samples(b, k)
		ea, eb := errorsOf(a, k), errorsOf(b, k)
		for _, f := range Figures {
			ra, rb := sa[f.Name], sb[f.Name]
			if len(ra) == 0 || len(rb) == 0 {
				continue
			}
			c.Rows = append(c.Rows, Row{Contender: k.contender, Level: k.level, Tag: k.tag, Figure: f.Name, A: ra, B: rb, Test: MannWhitney(ra, rb),
				ErrA: ea.ErrorPct, ErrB: eb.ErrorPct, FailedA: ea.FailedPct(), FailedB: eb.FailedPct()})
		}
	}
	if len(c.Rows) == 0 {
		return nil, fmt.Errorf("runs %s and %s share no contender at a level that ended ok in both: nothing to compare", a.ID, b.ID)
	}
	c.Differs = differs(a, b)
	c.OnlyIn = onlyIn(a, b)
	c.LeftOut = append(leftOut(a, "A"), leftOut(b, "B")...)
	return c, nil
}

// usable says whether an ok repeat's figures are the server's to compare: not when its
// deliveries had integrity faults (it did other work), nor when its client may have set
// the pace.
func usable(c results.Cell) (bool, string) {
	switch {
	case c.Outcome.Status != results.OutcomeOK:
		return false, ""
	case len(c.Faults) > 0:
		return false, "integrity faults: " + results.FormatFaults(c.Faults)
	case c.ClientBound:
		return false, "client-bound: " + c.ClientBoundWhy
	}
	return true, ""
}

// leftOut lists the run's ok repeats that usable keeps out, and why.
func leftOut(r *results.Run, which string) []string {
	var out []string
	for _, c := range r.Cells {
		if ok, why := usable(c); !ok && why != "" {
			out = append(out, fmt.Sprintf("%s: %s %s repeat %d left out (%s)", which, c.Contender, c.Level, c.Repeat, why))
		}
	}
	return out
}

// comparable refuses runs whose figures do not measure the same thing.
func comparable(a, b *results.Run) error {
	sa, sb := a.Scenario, b.Scenario
	switch {
	case sa.Name != sb.Name:
		return fmt.Errorf("%s is a run of %s and %s of %s: compare two runs of one scenario", a.ID, sa.Name, b.ID, sb.Name)
	case sa.Preset != sb.Preset:
		return fmt.Errorf("%s ran preset %s and %s preset %s: compare two runs of one preset", a.ID, sa.Preset, b.ID, sb.Preset)
	case sa.Quick != sb.Quick:
		return fmt.Errorf("%s ran the %s form and %s the %s: compare two runs of one form", a.ID, form(sa.Quick), b.ID, form(sb.Quick))
	}
	for _, la := range sa.Levels {
		for _, lb := range sb.Levels {
			if la.Name == lb.Name && la.Load != lb.Load {
				return fmt.Errorf("level %s ran different loads: %s in %s, %s in %s: compare two runs of one load", la.Name, la.Load, a.ID, lb.Load, b.ID)
			}
		}
	}
	return nil
}

func form(quick bool) string {
	if quick {
		return "quick"
	}
	return "full"
}

type key struct{ contender, level, tag string }

// keysOf are the contender, level and tag of every ok cell of a that b has too, in a's order.
func keysOf(a, b *results.Run) []key {
	var keys []key
	for _, c := range a.Cells {
		if ok, _ := usable(c); !ok {
			continue
		}
		for _, t := range c.Tags {
			k := key{c.Contender, c.Level, t.Tag}
			if !slices.Contains(keys, k) && len(samples(b, k)) > 0 {
				keys = append(keys, k)
			}
		}
	}
	return keys
}

// samples are each figure of k over the run's usable repeats.
func samples(r *results.Run, k key) map[string][]float64 {
	out := map[string][]float64{}
	for _, c := range r.Cells {
		if ok, _ := usable(c); !ok || c.Contender != k.contender || c.Level != k.level {
			continue
		}
		for _, t := range c.Tags {
			if t.Tag == k.tag && t.Completed > 0 {
				for _, f := range Figures {
					out[f.Name] = append(out[f.Name], Of(f.Name, t))
				}
			}
		}
	}
	return out
}

// errorsOf sums k's attempts and errors over the run's usable repeats, the ones compared,
// with their error rate.
func errorsOf(r *results.Run, k key) results.TagSummary {
	ts := results.TagSummary{Tag: k.tag, ErrKinds: map[string]int64{}}
	for _, c := range r.Cells {
		if ok, _ := usable(c); !ok || c.Contender != k.contender || c.Level != k.level {
			continue
		}
		for _, t := range c.Tags {
			if t.Tag != k.tag {
				continue
			}
			ts.Sent += t.Sent
			for kind, n := range t.Errors {
				ts.Errors += n
				ts.ErrKinds[kind] += n
			}
		}
	}
	if ts.Sent > 0 {
		ts.ErrorPct = float64(ts.Errors) / float64(ts.Sent) * 100
	}
	return ts
}

// differs says what differs between the runs besides the figures: the contract variables a
// contender was started with, its build, and the settings every contender shared.
func differs(a, b *results.Run) []string {
	var out []string
	envOf := func(r *results.Run) map[string]map[string]string {
		m := map[string]map[string]string{}
		for _, c := range r.Cells {
			if m[c.Contender] == nil {
				m[c.Contender] = map[string]string{}
			}
			maps.Copy(m[c.Contender], c.Env)
		}
		return m
	}
	ea, eb := envOf(a), envOf(b)
	for _, name := range slices.Sorted(maps.Keys(ea)) {
		vb, ok := eb[name]
		if !ok {
			continue
		}
		va := ea[name]
		vars := slices.Sorted(maps.Keys(union(va, vb)))
		for _, v := range vars {
			if va[v] != vb[v] {
				out = append(out, fmt.Sprintf("%s: %s %s → %s", name, v, orUnset(va[v]), orUnset(vb[v])))
			}
		}
	}
	builds := map[string]string{}
	for _, c := range a.Contenders {
		builds[c.Name] = c.BuildHash
	}
	for _, c := range b.Contenders {
		if was, ok := builds[c.Name]; ok && was != c.BuildHash {
			out = append(out, fmt.Sprintf("%s: build %s → %s", c.Name, orUnset(was), orUnset(c.BuildHash)))
		}
	}
	for _, s := range []struct{ what, a, b string }{
		{"heap", fmt.Sprintf("%d MiB", a.Env.HeapMB), fmt.Sprintf("%d MiB", b.Env.HeapMB)},
		{"JVM flags", a.Env.JavaOpts, b.Env.JavaOpts},
		{"Java", a.Env.JavaVersion, b.Env.JavaVersion},
		{"Node.js", a.Env.NodeVersion, b.Env.NodeVersion},
		{"server CPUs", a.Env.ServerCPUs, b.Env.ServerCPUs},
		{"client CPUs", a.Env.ClientCPUs, b.Env.ClientCPUs},
		{"host", a.Env.Host, b.Env.Host},
		{"repeats", fmt.Sprint(a.Scenario.Repeat), fmt.Sprint(b.Scenario.Repeat)},
	} {
		if s.a != s.b {
			out = append(out, fmt.Sprintf("%s: %s → %s", s.what, orUnset(s.a), orUnset(s.b)))
		}
	}
	return out
}

func union(a, b map[string]string) map[string]string {
	u := maps.Clone(a)
	maps.Copy(u, b)
	return u
}

func orUnset(s string) string {
	if s == "" {
		return "unset"
	}
	return s
}

// onlyIn names the contenders at a level one run measured and the other did not.
func onlyIn(a, b *results.Run) []string {
	var out []string
	for _, pair := range []struct {
		run, other *results.Run
	}{{a, b}, {b, a}} {
		var only []string
		for _, s := range pair.run.Summary {
			if !slices.ContainsFunc(pair.other.Summary, func(o results.CellSummary) bool { return o.Contender == s.Contender && o.Level == s.Level }) {
				only = append(only, s.Contender+" at "+s.Level)
			}
		}
		if len(only) > 0 {
			out = append(out, fmt.Sprintf("only in %s: %s", pair.run.ID, strings.Join(only, ", ")))
		}
	}
	return out
}

// Median is the middle of a sample (results.SpreadOf's).
func Median(v []float64) float64 { return results.SpreadOf(v).Median }

// Change is B's median against A's, as a fraction (+0.10: 10 % more).
func (r Row) Change() float64 {
	a := Median(r.A)
	if a == 0 {
		return 0
	}
	return (Median(r.B) - a) / a
}

// Significant says whether the change is more than the repeats' spread explains, at alpha.
func (r Row) Significant(alpha float64) bool { return r.Test.P < alpha }

// Better says whether B is better than A on this figure (more requests/s, less latency); a
// failing side (Comparison.Failing) is neither, whatever this says.
func (r Row) Better() bool {
	for _, f := range Figures {
		if f.Name == r.Figure {
			return (r.Change() > 0) == f.HigherBest
		}
	}
	return false
}

// LeastP is the least two-sided P a U test can give for samples of n and m: 2 / C(n+m, n).
func LeastP(n, m int) float64 {
	c := 1.0
	for i := 1; i <= n; i++ {
		c = c * float64(m+i) / float64(i)
	}
	return min(1, 2/c)
}
