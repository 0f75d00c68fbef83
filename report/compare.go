package report

import (
	_ "embed"
	"fmt"
	"io"

	"github.com/arena-lab/arena/internal/compare"
	"github.com/arena-lab/arena/internal/results"
)

//go:embed compare.html
var compareTemplate string

var comparePage = parsePage("compare", compareTemplate)

// compareView is run B against run A: a row per contender, level, tag and figure.
type compareView struct {
	*compare.Comparison
	Rows []compareRow
	assets
}

// compareRow is one row as the page shows it: the change's tone says whether B is better.
type compareRow struct {
	compare.Row
	A, B, Change, Test string
	ErrA, ErrB         string // each side's error rate, beside its figure
	Tone               results.Tone
}

// Title is the page's title.
func (v *compareView) Title() string {
	return fmt.Sprintf("arena compare · %s against %s", v.B.ID, v.A.ID)
}

// RenderCompare writes the comparison's page to w, with chartLib (echarts.min.js) inlined:
// the table of changes, and the requests/s of both runs as bars with their repeats' range.
func RenderCompare(c *compare.Comparison, chartLib []byte, w io.Writer) error {
	v := &compareView{Comparison: c}
	bars := barsData{Unit: "requests/s", Format: "num", Categories: []string{}, Series: []barSeries{
		{Name: "A " + c.A.ID, Values: []any{}, Lo: []any{}, Hi: []any{}}, {Name: "B " + c.B.ID, Values: []any{}, Lo: []any{}, Hi: []any{}}}}
	for _, r := range c.Rows {
		row := compareRow{Row: r, A: compare.Sample(r.Figure, r.A), B: compare.Sample(r.Figure, r.B),
			ErrA: results.FormatPct(r.ErrA), ErrB: results.FormatPct(r.ErrB),
			Change: c.ChangeOf(r), Test: compare.TestText(r.Test), Tone: results.Neutral}
		switch {
		case c.Failing(r) != "":
			row.Tone = results.Bad // a failing side: never read as better
		case r.Significant(c.Alpha):
			row.Tone = results.Bad
			if r.Better() {
				row.Tone = results.Good
			}
		}
		v.Rows = append(v.Rows, row)
		if r.Figure == "requests/s" {
			bars.Categories = append(bars.Categories, r.Contender+" · "+r.Level+" · "+r.Tag)
			for i, sample := range [][]float64{r.A, r.B} {
				sp := results.SpreadOf(sample)
				s := &bars.Series[i]
				s.Values, s.Lo, s.Hi = append(s.Values, finite(sp.Median)), append(s.Lo, finite(sp.Min)), append(s.Hi, finite(sp.Max))
			}
		}
	}
	var err error
	if v.assets, err = newAssets(chartLib, chartData{Levels: []levelData{}, Curves: []curveData{}, Bars: []barsData{bars}}); err != nil {
		return err
	}
	return execute(comparePage, v, w)
}

// WriteCompare renders the comparison to outPath, replacing it only once complete.
func WriteCompare(c *compare.Comparison, chartLibPath, outPath string) error {
	return writeAtomic(chartLibPath, outPath, func(lib []byte, w io.Writer) error { return RenderCompare(c, lib, w) })
}
