package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// onCurve says a level is a point of a curve: the scenario placed it on an X.
func onCurve(l results.Level) bool { return l.XName != "" || l.X != 0 }

// closedLoop says every stream of the level is a closed loop: N connections, each sending
// its next request when the last one is answered, so requests/s is what the server sustained.
func closedLoop(l results.Level) bool {
	if len(l.Streams) == 0 {
		return false
	}
	for _, s := range l.Streams {
		if s.Mode != "closed" {
			return false
		}
	}
	return true
}

// closedTags are the tags of a level's closed-loop streams, in plan order.
func closedTags(l results.Level) []string {
	var tags []string
	for _, s := range l.Streams {
		if s.Mode == "closed" {
			tags = appendNew(tags, s.Tag)
		}
	}
	return tags
}

// helperFigures are a helper of the lab's (its downstream, its database) over a contender's
// ok repeats at one level: its mean CPU and peak RSS, as spreads.
type helperFigures struct {
	CPU     results.Spread
	RSS     results.Spread
	Repeats int
}

func helperOf(rs []*results.Resources) *helperFigures {
	if len(rs) == 0 {
		return nil
	}
	var cpu, rss []float64
	for _, r := range rs {
		cpu = append(cpu, r.Summary.CPUPctMean)
		rss = append(rss, r.Summary.RSSMBMax)
	}
	return &helperFigures{CPU: results.SpreadOf(cpu), RSS: results.SpreadOf(rss), Repeats: len(rs)}
}

// downstreamCPUs is where the lab's downstream ran: as its cells recorded it, else the
// client's CPUs (the lab starts it there); "" when no cell measured a downstream.
func downstreamCPUs(run *results.Run) string {
	for _, c := range run.Cells {
		if c.Downstream != nil {
			switch {
			case c.Downstream.CPUs != "":
				return "CPUs " + c.Downstream.CPUs
			case run.Env.ClientCPUs != "":
				return "CPUs " + run.Env.ClientCPUs
			default:
				return "the client's CPUs"
			}
		}
	}
	return ""
}

// curveView is one group of levels on a curve: every figure against X, per contender.
type curveView struct {
	Index      int // into chartData.Curves
	Group      string
	XName      string
	Tags       []string // the tag each level's figures come from (its first)
	Downstream bool     // some level of the group had the lab's downstream serve it
	DelayMs    float64  // the downstream's delay, if it had one
	Levels     []*levelView
	Rows       []curveRow // contender by contender, X ascending
}

// curveRow is one contender at one level of a curve.
type curveRow struct {
	Contender string
	First     bool // first row of its contender: the table names it, spanning Span rows
	Span      int
	X         float64
	Level     *levelView
	Row       *contenderRows // nil when it has no figures at this level
	Tag       tagRow
	Problems  []string
}

func buildCurves(levels []levelView) []curveView {
	var curves []curveView
	index := map[string]int{}
	for i := range levels {
		lv := &levels[i]
		if !lv.OnCurve {
			continue
		}
		g, ok := index[lv.Level.Group]
		if !ok {
			g = len(curves)
			index[lv.Level.Group] = g
			curves = append(curves, curveView{Index: g, Group: lv.Level.Group, XName: lv.Level.XName})
		}
		c := &curves[g]
		c.Levels = append(c.Levels, lv)
		if c.XName == "" {
			c.XName = lv.Level.XName
		}
		if len(lv.Tags) > 0 {
			c.Tags = appendNew(c.Tags, lv.Tags[0].Tag)
		}
		if lv.Level.Downstream || lv.Downstream {
			c.Downstream = true
			c.DelayMs = max(c.DelayMs, lv.Level.DownstreamDelayMs)
		}
	}
	for i := range curves {
		c := &curves[i]
		if c.XName == "" {
			c.XName = "x"
		}
		if c.Group == "" {
			c.Group = "by " + c.XName
		}
		slices.SortStableFunc(c.Levels, func(a, b *levelView) int { return cmp.Compare(a.Level.X, b.Level.X) })
		var contenders []string
		for _, lv := range c.Levels {
			for _, name := range lv.Contenders {
				contenders = appendNew(contenders, name)
			}
		}
		for _, name := range contenders {
			first := len(c.Rows)
			for _, lv := range c.Levels {
				r := curveRow{Contender: name, X: lv.Level.X, Level: lv, Problems: lv.Problems[name]}
				for k := range lv.Rows {
					if lv.Rows[k].Contender == name {
						r.Row = &lv.Rows[k]
						if len(r.Row.Tags) > 0 {
							r.Tag = r.Row.Tags[0]
						}
					}
				}
				if r.Row == nil && len(r.Problems) == 0 {
					continue // not measured at this level at all
				}
				c.Rows = append(c.Rows, r)
			}
			if first < len(c.Rows) {
				c.Rows[first].First, c.Rows[first].Span = true, len(c.Rows)-first
			}
		}
	}
	return curves
}

// curveData is what app.js draws of one curve: per contender, lines against X.
type curveData struct {
	XName   string `json:"x_name"`
	Latency []line `json:"latency"` // mean solid, p99 dashed
	RPS     []line `json:"rps"`
	CPU     []line `json:"cpu"` // the contender's solid, its downstream's dotted
	RSS     []line `json:"rss"`
	Threads []line `json:"threads"`
}

func buildCurveData(c curveView, contenders []string) curveData {
	d := curveData{XName: c.XName, Latency: []line{}, RPS: []line{}, CPU: []line{}, RSS: []line{}, Threads: []line{}}
	for ci, name := range contenders {
		mean := line{Name: name + " mean", Colour: ci, Points: [][2]any{}}
		p99 := line{Name: name + " p99", Colour: ci, Dash: "dashed", Points: [][2]any{}}
		rps := line{Name: name, Colour: ci, Points: [][2]any{}}
		cpu := line{Name: name, Colour: ci, Points: [][2]any{}}
		dsCPU := line{Name: name + " downstream", Colour: ci, Dash: "dotted", Points: [][2]any{}}
		rss := line{Name: name, Colour: ci, Points: [][2]any{}}
		dsRSS := line{Name: name + " downstream", Colour: ci, Dash: "dotted", Points: [][2]any{}}
		threads := line{Name: name, Colour: ci, Points: [][2]any{}}
		seen := false
		for _, r := range c.Rows {
			if r.Contender != name || r.Row == nil {
				continue
			}
			seen = true
			x := finite(r.X)
			if r.Tag.Measured && r.Tag.Merged.Count > 0 {
				mean.Points = append(mean.Points, [2]any{x, positive(r.Tag.Merged.Mean)})
				p99.Points = append(p99.Points, [2]any{x, positive(r.Tag.Merged.P99)})
				rps.Points = append(rps.Points, [2]any{x, finite(r.Tag.RPS.Median)})
			}
			s := r.Row.Summary
			cpu.Points = append(cpu.Points, [2]any{x, finite(s.CPUPct.Median)})
			rss.Points = append(rss.Points, [2]any{x, finite(s.RSSMB.Median)})
			threads.Points = append(threads.Points, [2]any{x, finite(s.Threads.Median)})
			if ds := r.Row.Downstream; ds != nil {
				dsCPU.Points = append(dsCPU.Points, [2]any{x, finite(ds.CPU.Median)})
				dsRSS.Points = append(dsRSS.Points, [2]any{x, finite(ds.RSS.Median)})
			}
		}
		if !seen {
			continue // a contender without figures on this curve stays out of its legend
		}
		d.Latency = append(d.Latency, mean, p99)
		d.RPS = append(d.RPS, rps)
		d.CPU = append(d.CPU, cpu)
		d.RSS = append(d.RSS, rss)
		if len(dsCPU.Points) > 0 {
			d.CPU = append(d.CPU, dsCPU)
			d.RSS = append(d.RSS, dsRSS)
		}
		d.Threads = append(d.Threads, threads)
	}
	return d
}

// throughputView is the closed-loop levels without an X side by side: requests/s per
// contender per level, the headline of a closed loop.
type throughputView struct {
	Bars   int
	Levels []*levelView
	Rows   []throughputRow
}

type throughputRow struct {
	Contender string
	Cells     []throughputCell // one per level
}

type throughputCell struct {
	Unranked string // why its figure is left out of the chart, when it is
	RPS      results.Spread
	P99      float64
	ErrorPct float64 // the most of any of its closed-loop tags, beside its requests/s
	Repeats  int
	Measured bool
	Problems []string
}

func buildThroughput(v *pageView) *throughputView {
	t := &throughputView{}
	var contenders []string
	for i := range v.Levels {
		if lv := &v.Levels[i]; lv.Closed && !lv.OnCurve {
			t.Levels = append(t.Levels, lv)
			for _, name := range lv.Contenders {
				// Those measured at no repeat of it (verify failed, say) stay out.
				if rowOf(lv, name) != nil || len(lv.Problems[name]) > 0 {
					contenders = appendNew(contenders, name)
				}
			}
		}
	}
	if len(t.Levels) == 0 {
		return nil
	}
	bars := barsData{Unit: "requests/s", Format: "num", Categories: contenders, Series: []barSeries{}}
	for _, name := range contenders {
		row := throughputRow{Contender: name}
		for _, lv := range t.Levels {
			cell := throughputCell{Problems: lv.Problems[name]}
			if r := rowOf(lv, name); r != nil {
				cell.RPS, cell.Measured = levelRPS(r, closedTags(lv.Level))
				cell.ErrorPct = levelErrorPct(r, closedTags(lv.Level))
				if len(r.Tags) > 0 {
					cell.P99 = r.Tags[0].Merged.P99
				}
				cell.Repeats = r.Summary.Repeats
				cell.Unranked = unranked(r.Summary)
			}
			row.Cells = append(row.Cells, cell)
		}
		t.Rows = append(t.Rows, row)
	}
	for li, lv := range t.Levels {
		s := barSeries{Name: lv.Level.Name, Values: []any{}, Lo: []any{}, Hi: []any{}}
		for ri, row := range t.Rows {
			c := row.Cells[li]
			if c.Unranked != "" {
				bars.leaveOut(ri, lv.Level.Name, c.Unranked)
			}
			if !c.Measured || c.Unranked != "" {
				s.Values, s.Lo, s.Hi = append(s.Values, nil), append(s.Lo, nil), append(s.Hi, nil)
				continue
			}
			s.Values = append(s.Values, finite(c.RPS.Median))
			s.Lo, s.Hi = append(s.Lo, finite(c.RPS.Min)), append(s.Hi, finite(c.RPS.Max))
		}
		bars.Series = append(bars.Series, s)
	}
	t.Bars = v.addBars(bars)
	return t
}

// levelThroughput is one closed-loop level's requests/s, a bar per contender.
func levelThroughput(lv *levelView) barsData {
	b := barsData{Unit: "requests/s", Format: "num", Categories: lv.Contenders, ByCategory: true}
	s := barSeries{Name: "requests/s", Values: []any{}, Lo: []any{}, Hi: []any{}}
	tags := closedTags(lv.Level)
	for ci, name := range lv.Contenders {
		var rps results.Spread
		ok := false
		if r := rowOf(lv, name); r != nil {
			rps, ok = levelRPS(r, tags)
			if why := unranked(r.Summary); why != "" {
				b.leaveOut(ci, "", why)
				ok = false
			}
		}
		if !ok {
			s.Values, s.Lo, s.Hi = append(s.Values, nil), append(s.Lo, nil), append(s.Hi, nil)
			continue
		}
		s.Values = append(s.Values, finite(rps.Median))
		s.Lo, s.Hi = append(s.Lo, finite(rps.Min)), append(s.Hi, finite(rps.Max))
	}
	b.Series = []barSeries{s}
	return b
}

func rowOf(lv *levelView, contender string) *contenderRows {
	for i := range lv.Rows {
		if lv.Rows[i].Contender == contender {
			return &lv.Rows[i]
		}
	}
	return nil
}

// levelRPS is a contender's requests/s over the closed-loop tags of a level: the tag's
// spread, or with several tags the sum of their medians, minima and maxima.
func levelRPS(r *contenderRows, tags []string) (results.Spread, bool) {
	var sum results.Spread
	found := false
	for _, t := range r.Tags {
		if t.Measured && slices.Contains(tags, t.Tag) {
			sum.Median += t.RPS.Median
			sum.Min += t.RPS.Min
			sum.Max += t.RPS.Max
			found = true
		}
	}
	if sum.Median > 0 {
		sum.Pct = (sum.Max - sum.Min) / sum.Median * 100
	}
	return sum, found
}

// levelErrorPct is the error rate beside a level's requests/s: the most of its closed-loop
// tags', so that a failing tag is not hidden by a healthy one.
func levelErrorPct(r *contenderRows, tags []string) float64 {
	var most float64
	for _, t := range r.Tags {
		if t.Measured && slices.Contains(tags, t.Tag) {
			most = max(most, t.ErrorPct)
		}
	}
	return most
}

// barsData is one bar chart: a bar per category (contender) per series, with whiskers
// from Lo to Hi where they are given.
type barsData struct {
	Unit       string      `json:"unit"`
	Format     string      `json:"format"` // "ms" (log axis) or "num"
	Categories []string    `json:"categories"`
	ByCategory bool        `json:"by_category"` // one series, each bar in its category's colour
	Series     []barSeries `json:"series"`
	// Unranked says, per category, why some of its bars are left out (delivery faults, failing):
	// such a figure is not placed beside honest ones; the label is marked instead.
	Unranked []string `json:"unranked,omitempty"`
}

// unranked says why a contender's figure at a level is not ranked beside the others: its
// deliveries had faults, or it failed more of its requests than a judged cell may
// (scenario.Failing: the speed of failing). "" when it is ranked.
func unranked(s results.CellSummary) string {
	var why []string
	if s.Faulty() {
		why = append(why, "delivery faults ("+results.FormatFaults(s.Faults)+")")
	}
	if pct, tag := s.FailedPct(); pct > scenario.MaxFailedPct {
		why = append(why, fmt.Sprintf("%s (%s: %.1f %% of requests failed)", scenario.Failing.Text, tag, pct))
	}
	return strings.Join(why, "; ")
}

// leaveOut marks category ci's bar of series as not ranked, and why, at level.
func (b *barsData) leaveOut(ci int, level, why string) {
	if b.Unranked == nil {
		b.Unranked = make([]string, len(b.Categories))
	}
	note := why
	if level != "" {
		note = level + ": " + why
	}
	if b.Unranked[ci] != "" {
		note = b.Unranked[ci] + "; " + note
	}
	b.Unranked[ci] = note + ", not ranked"
}

type barSeries struct {
	Name   string `json:"name"`
	Values []any  `json:"values"`
	Lo     []any  `json:"lo,omitempty"`
	Hi     []any  `json:"hi,omitempty"`
}

func (v *pageView) addBars(b barsData) int {
	v.bars = append(v.bars, b)
	return len(v.bars) - 1
}

// fmtRate prints requests per second: whole from 100 up.
func fmtRate(v float64) string {
	if v >= 100 {
		return fmt.Sprintf("%.0f", v)
	}
	return results.FormatSig3(v)
}
