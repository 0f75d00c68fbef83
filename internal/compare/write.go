package compare

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/arena-lab/arena/internal/results"
)

// Write prints the comparison as benchstat does: per contender, level, tag and figure, A and
// B with their repeats' spread, the change, and the test; "~" where the change is not
// significant.
func Write(w io.Writer, c *Comparison) error {
	fmt.Fprintf(w, "A: %s (%s, %d repeat(s))\nB: %s (%s, %d repeat(s))\n", c.A.ID, day(c.A), c.A.Scenario.Repeat, c.B.ID, day(c.B), c.B.Scenario.Repeat)
	fmt.Fprintf(w, "%s, preset %s%s; significant: a Mann-Whitney U test over the repeats, p < %g\n", c.A.Scenario.Name, c.A.Scenario.Preset, quick(c.A), c.Alpha)
	for _, d := range c.Differs {
		fmt.Fprintf(w, "differs: %s\n", d)
	}
	for _, o := range slices.Concat(c.OnlyIn, c.LeftOut) {
		fmt.Fprintf(w, "%s\n", o)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CONTENDER\tLEVEL\tTAG\tFIGURE\tA\tA ERRORS\tB\tB ERRORS\tCHANGE\tTEST")
	for _, r := range c.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Contender, r.Level, r.Tag, r.Figure,
			Sample(r.Figure, r.A), results.FormatPct(r.ErrA), Sample(r.Figure, r.B), results.FormatPct(r.ErrB), c.ChangeOf(r), TestText(r.Test))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if note := c.TooFew(); note != "" {
		fmt.Fprintf(w, "\n%s\n", note)
	}
	return nil
}

// TooFew says when the repeats are too few for any change to be significant at alpha.
func (c *Comparison) TooFew() string {
	for _, r := range c.Rows {
		if least := LeastP(len(r.A), len(r.B)); least >= c.Alpha {
			return fmt.Sprintf("note: with %d and %d repeats the least P a U test can give is %.3f, not below %g: no change can show as significant; run with --repeat 4 or more.",
				len(r.A), len(r.B), least, c.Alpha)
		}
	}
	return ""
}

// Sample writes a figure's median and the spread of its repeats, "1,985 ±1%".
func Sample(figure string, v []float64) string {
	sp := results.SpreadOf(v)
	text := fmt.Sprintf("%.0f", sp.Median)
	if figure != "requests/s" {
		text = results.FormatMs(sp.Median)
	}
	if len(v) > 1 {
		text += fmt.Sprintf(" ±%.0f%%", sp.Pct/2)
	}
	return text
}

// ChangeText is the change in per cent, or "~" when it is not significant.
func ChangeText(r Row, alpha float64) string {
	if !r.Significant(alpha) {
		return "~"
	}
	return fmt.Sprintf("%+.2f%%", r.Change()*100)
}

// ChangeOf is the row's change as the table shows it: "failing: B" where a side failed more
// of its requests than MaxFailedPct (its speed is the speed of failing: no change is read
// from it), else ChangeText.
func (c *Comparison) ChangeOf(r Row) string {
	if side := c.Failing(r); side != "" {
		return "failing: " + side
	}
	return ChangeText(r, c.Alpha)
}

// TestText is the test's P and its samples, as benchstat writes it: "p=0.008 n=5+5".
func TestText(t UTest) string { return fmt.Sprintf("p=%.3f n=%d+%d", t.P, t.N1, t.N2) }

func day(r *results.Run) string { return r.Started.UTC().Format("2006-01-02 15:04 MST") }

func quick(r *results.Run) string {
	if r.Scenario.Quick {
		return ", quick"
	}
	return ""
}
