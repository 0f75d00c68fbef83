package report

import (
	"bytes"
	"cmp"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

//go:embed matrix.html
var matrixTemplate string

var matrixPage = template.Must(template.New("matrix").Funcs(funcs).Parse(matrixTemplate))

// matrixView is every contender (rows) against every scenario (columns), each cell the
// scenario's headline figure and verdict for that contender, from the latest run of each.
type matrixView struct {
	Columns    []matrixColumn
	Rows       []matrixRow
	Claims     []matrixClaim
	Charts     []matrixChart
	Machines   int // distinct hosts among the runs: more than one makes rows incomparable
	Contenders []string
	CSS        template.CSS
	App        template.JS
	ChartLib   template.JS
	Data       template.JS
}

type matrixColumn struct {
	Run      *results.Run
	Headline string // what the cells show, e.g. "/instant p99 (merged) and verdict"
}

type matrixRow struct {
	Contender string
	Cells     []matrixCell
}

// matrixCell is one contender in one scenario's latest run.
type matrixCell struct {
	NotRun   bool
	Why      string // why it was not run, when the run says
	Figures  []matrixFigure
	Verdicts []results.Verdict
	Problems []string // cells whose outcome was not ok: said in red
}

type matrixFigure struct {
	Label   string // e.g. "sleep 100 ms", "self"; "" for the scenario's one figure
	Text    string
	Verdict *results.Verdict // the verdict of the same group or level, when there is one
}

type matrixClaim struct {
	Scenario string
	RunID    string
	results.Claim
}

type matrixChart struct {
	Scenario string
	Title    string
	Bars     int
}

// RenderMatrix writes the matrix of runs to w, with chartLib (echarts.min.js) inlined: of
// several runs of one scenario, only the most recent counts.
func RenderMatrix(runs []*results.Run, chartLib []byte, w io.Writer) error {
	latest := latestRuns(runs)
	if len(latest) == 0 {
		return errors.New("report: no run to put in the matrix")
	}
	v := &matrixView{}
	var bars []barsData
	hosts := map[string]bool{}
	for _, run := range latest {
		hosts[run.Env.Host] = true
		for _, name := range contenderOrder(run) {
			v.Contenders = appendNew(v.Contenders, name)
		}
	}
	v.Machines = len(hosts)
	slices.Sort(v.Contenders)
	for _, run := range latest {
		h := headlineOf(run)
		v.Columns = append(v.Columns, matrixColumn{Run: run, Headline: h.what})
		if b, ok := h.chart(run); ok {
			bars = append(bars, b)
			v.Charts = append(v.Charts, matrixChart{Scenario: run.Scenario.Name, Title: h.chartTitle, Bars: len(bars) - 1})
		}
		for _, c := range run.Claims {
			v.Claims = append(v.Claims, matrixClaim{Scenario: run.Scenario.Name, RunID: run.ID, Claim: c})
		}
	}
	for _, name := range v.Contenders {
		row := matrixRow{Contender: name}
		for _, run := range latest {
			row.Cells = append(row.Cells, headlineOf(run).cell(run, name))
		}
		v.Rows = append(v.Rows, row)
	}
	if bars == nil {
		bars = []barsData{}
	}
	data, err := json.Marshal(chartData{Levels: []levelData{}, Curves: []curveData{}, Bars: bars})
	if err != nil {
		return fmt.Errorf("report: chart data: %w", err)
	}
	v.CSS = template.CSS(styleCSS)
	v.App = template.JS(appJS)
	v.Data = template.JS(data)
	v.ChartLib = template.JS(scriptEnd.ReplaceAll(chartLib, []byte(`<\/$1`)))
	var buf bytes.Buffer
	if err := matrixPage.Execute(&buf, v); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err = w.Write(buf.Bytes())
	return err
}

// WriteMatrix renders the matrix of runs to outPath, replacing it only once complete.
func WriteMatrix(runs []*results.Run, chartLibPath, outPath string) error {
	return writeAtomic(chartLibPath, outPath, func(lib []byte, w io.Writer) error { return RenderMatrix(runs, lib, w) })
}

// latestRuns keeps the most recent run of each scenario (by start, then id), ordered by
// scenario name.
func latestRuns(runs []*results.Run) []*results.Run {
	by := map[string]*results.Run{}
	for _, r := range runs {
		if r == nil {
			continue
		}
		cur := by[r.Scenario.Name]
		if cur == nil || r.Started.After(cur.Started) || (r.Started.Equal(cur.Started) && r.ID > cur.ID) {
			by[r.Scenario.Name] = r
		}
	}
	var out []*results.Run
	for _, r := range by {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b *results.Run) int { return cmp.Compare(a.Scenario.Name, b.Scenario.Name) })
	return out
}

// headline is how a scenario is summed up in one cell, chosen from the run's own shape:
// isolation by its /instant p99; levels on a curve by the verdict per group and the mean
// latency at the largest X; closed loops by requests/s per level; anything else by the
// first tag's p99.
type headline struct {
	kind       string // instant | curve | closed | push | first
	what       string
	chartTitle string
}

func headlineOf(run *results.Run) headline {
	levels := levelOrder(run)
	switch {
	case slices.ContainsFunc(run.Cells, func(c results.Cell) bool { return c.Stream != nil }):
		return headline{kind: "push", what: "delivered messages/s and the server's peak RSS per level (median over repeats), and the verdict", chartTitle: "delivered messages/s"}
	case run.Scenario.Name == "isolation" && hasTag(run, "instant"):
		return headline{kind: "instant", what: "/instant p99 (merged), and the verdict", chartTitle: "/instant p99, ms"}
	case slices.ContainsFunc(levels, onCurve):
		return headline{kind: "curve", what: "the verdict per group, and the mean latency at the largest X measured", chartTitle: "mean latency at the largest X, ms"}
	case slices.ContainsFunc(levels, closedLoop):
		return headline{kind: "closed", what: "requests/s per closed-loop level (median over repeats), and the verdicts", chartTitle: "requests/s"}
	default:
		return headline{kind: "first", what: "the first tag's p99 (merged), and the first verdict", chartTitle: "p99 of the first tag, ms"}
	}
}

func hasTag(run *results.Run, tag string) bool {
	for _, s := range run.Summary {
		for _, t := range s.Tags {
			if t.Tag == tag {
				return true
			}
		}
	}
	return false
}

// summaryOf is a contender's summary at a level, if it has one.
func summaryOf(run *results.Run, contender, level string) (results.CellSummary, bool) {
	for _, s := range run.Summary {
		if s.Contender == contender && s.Level == level {
			return s, true
		}
	}
	return results.CellSummary{}, false
}

func tagOf(s results.CellSummary, tag string) (results.TagSummary, bool) {
	for _, t := range s.Tags {
		if t.Tag == tag && t.Merged.Count > 0 {
			return t, true
		}
	}
	return results.TagSummary{}, false
}

// firstTag is the level's first tag: the plan's first stream, else the summary's first.
func firstTag(l results.Level, s results.CellSummary) string {
	if len(l.Streams) > 0 {
		return l.Streams[0].Tag
	}
	if len(s.Tags) > 0 {
		return s.Tags[0].Tag
	}
	return ""
}

// curvePoint is a contender's headline tag at the largest X of a group it was measured at.
type curvePoint struct {
	group string
	x     float64
	xName string
	tag   results.TagSummary
	ok    bool
}

// curveEnds gives, per group of the run's curve levels (in plan order), the contender's
// figures at the largest X it has any at.
func curveEnds(run *results.Run, contender string) []curvePoint {
	var ends []curvePoint
	index := map[string]int{}
	for _, l := range levelOrder(run) {
		if !onCurve(l) {
			continue
		}
		i, ok := index[l.Group]
		if !ok {
			i = len(ends)
			index[l.Group] = i
			ends = append(ends, curvePoint{group: l.Group, xName: l.XName})
		}
		s, has := summaryOf(run, contender, l.Name)
		if !has {
			continue
		}
		t, has := tagOf(s, firstTag(l, s))
		if has && (!ends[i].ok || l.X > ends[i].x) {
			ends[i].x, ends[i].tag, ends[i].ok = l.X, t, true
		}
	}
	return ends
}

// cell is one contender's cell of the matrix for this run.
func (h headline) cell(run *results.Run, contender string) matrixCell {
	var cell matrixCell
	measured := false
	var problems = map[string][]string{}
	var statuses []string
	for _, c := range run.Cells {
		if c.Contender != contender {
			continue
		}
		measured = true
		if c.Outcome.Status != results.OutcomeOK {
			statuses = appendNew(statuses, c.Outcome.Status)
			problems[c.Outcome.Status] = append(problems[c.Outcome.Status], fmt.Sprintf("%s r%d", c.Level, c.Repeat))
		}
	}
	for _, st := range statuses {
		cell.Problems = append(cell.Problems, st+": "+strings.Join(problems[st], ", "))
	}
	var verified string
	for _, c := range run.Contenders {
		if c.Name == contender {
			verified = c.Verified
		}
	}
	if !measured {
		if _, ok := firstSummary(run, contender); !ok {
			switch {
			case strings.HasPrefix(verified, "failed"):
				cell.Problems = append(cell.Problems, "verify "+verified)
			default:
				cell.NotRun = true
				if verified != "" && run.Status != "complete" {
					cell.Why = "the run " + run.Status + " before it"
				}
			}
			return cell
		}
	}
	for _, vd := range run.Verdicts {
		if vd.Contender == contender {
			cell.Verdicts = append(cell.Verdicts, vd)
		}
	}
	switch h.kind {
	case "instant":
		if t, ok := instantOf(run, contender); ok {
			cell.Figures = append(cell.Figures, matrixFigure{Text: "/instant p99 " + fmtMs(t.Merged.P99)})
		}
	case "curve":
		for _, e := range curveEnds(run, contender) {
			f := matrixFigure{Label: e.group}
			if e.ok {
				f.Text = fmt.Sprintf("mean %s at %s %s", fmtMs(e.tag.Merged.Mean), trimFloat(e.x), e.xName)
			} else {
				f.Text = "no figures"
			}
			cell.Figures = append(cell.Figures, f)
		}
	case "push":
		for _, l := range levelOrder(run) {
			if rate, rss, ok := pushOf(run, contender, l.Name); ok {
				cell.Figures = append(cell.Figures, matrixFigure{Label: l.Name, Text: fmt.Sprintf("%s msg/s, RSS %s MB", fmtRate(rate), trimFloat(float64(int(rss))))})
			}
		}
	case "closed":
		for _, l := range levelOrder(run) {
			if !closedLoop(l) || onCurve(l) {
				continue
			}
			if rps, ok := summaryRPS(run, contender, l); ok {
				cell.Figures = append(cell.Figures, matrixFigure{Label: l.Name, Text: fmtRate(rps.Median) + " requests/s"})
			}
		}
	default:
		if s, ok := firstSummary(run, contender); ok {
			l := levelNamed(run, s.Level)
			tag := firstTag(l, s)
			if t, ok := tagOf(s, tag); ok {
				label := ""
				if len(run.Scenario.Levels) > 1 {
					label = s.Level
				}
				cell.Figures = append(cell.Figures, matrixFigure{Label: label, Text: tag + " p99 " + fmtMs(t.Merged.P99)})
			}
		}
		if len(cell.Verdicts) > 1 {
			cell.Verdicts = cell.Verdicts[:1]
		}
	}
	if len(cell.Figures)+len(cell.Verdicts)+len(cell.Problems) == 0 {
		cell.Figures = []matrixFigure{{Text: "no figures"}}
	}
	// A figure of a group or level takes that group's or level's verdict beside it.
	for i := range cell.Figures {
		f := &cell.Figures[i]
		if f.Label == "" {
			continue
		}
		if k := slices.IndexFunc(cell.Verdicts, func(v results.Verdict) bool { return v.Level == f.Label }); k >= 0 {
			vd := cell.Verdicts[k]
			f.Verdict = &vd
			cell.Verdicts = slices.Delete(cell.Verdicts, k, k+1)
		}
	}
	// The level of a one-level scenario's verdict says nothing.
	if len(levelOrder(run)) == 1 {
		for i := range cell.Verdicts {
			cell.Verdicts[i].Level = ""
		}
	}
	return cell
}

// instantOf is the contender's /instant at the first level it was measured at.
func instantOf(run *results.Run, contender string) (results.TagSummary, bool) {
	for _, l := range levelOrder(run) {
		if s, ok := summaryOf(run, contender, l.Name); ok {
			if t, ok := tagOf(s, "instant"); ok {
				return t, true
			}
		}
	}
	return results.TagSummary{}, false
}

// summaryRPS is the contender's requests/s at a closed-loop level.
func summaryRPS(run *results.Run, contender string, l results.Level) (results.Spread, bool) {
	s, ok := summaryOf(run, contender, l.Name)
	if !ok {
		return results.Spread{}, false
	}
	r := contenderRows{Summary: s}
	for _, t := range s.Tags {
		r.Tags = append(r.Tags, tagRow{TagSummary: t, Measured: t.Merged.Count > 0})
	}
	return levelRPS(&r, closedTags(l))
}

// firstSummary is the contender's summary at the first level, in plan order, it has one at.
func firstSummary(run *results.Run, contender string) (results.CellSummary, bool) {
	for _, l := range levelOrder(run) {
		if s, ok := summaryOf(run, contender, l.Name); ok {
			return s, true
		}
	}
	return results.CellSummary{}, false
}

func levelNamed(run *results.Run, name string) results.Level {
	for _, l := range run.Scenario.Levels {
		if l.Name == name {
			return l
		}
	}
	return results.Level{Name: name}
}

// chart is the scenario's headline figure as bars, per contender measured.
func (h headline) chart(run *results.Run) (barsData, bool) {
	var contenders []string
	for _, name := range contenderOrder(run) {
		if _, ok := firstSummary(run, name); ok {
			contenders = append(contenders, name)
		}
	}
	if len(contenders) == 0 {
		return barsData{}, false
	}
	b := barsData{Unit: "ms", Format: "ms", Categories: contenders, Series: []barSeries{}}
	values := func(f func(name string) (float64, bool)) []any {
		out := []any{}
		for _, name := range contenders {
			if v, ok := f(name); ok {
				out = append(out, positive(v))
			} else {
				out = append(out, nil)
			}
		}
		return out
	}
	switch h.kind {
	case "instant":
		b.ByCategory = true
		b.Series = append(b.Series, barSeries{Name: "/instant p99", Values: values(func(c string) (float64, bool) {
			t, ok := instantOf(run, c)
			return t.Merged.P99, ok
		})})
	case "first":
		b.ByCategory = true
		b.Series = append(b.Series, barSeries{Name: "p99", Values: values(func(c string) (float64, bool) {
			s, ok := firstSummary(run, c)
			if !ok {
				return 0, false
			}
			t, ok := tagOf(s, firstTag(levelNamed(run, s.Level), s))
			return t.Merged.P99, ok
		})})
	case "curve":
		// Every contender at the group's largest X anyone reached, so that bars compare.
		var groups []string
		largest := map[string]float64{}
		xName := map[string]string{}
		for _, c := range contenders {
			for _, e := range curveEnds(run, c) {
				groups = appendNew(groups, e.group)
				xName[e.group] = e.xName
				if e.ok && e.x > largest[e.group] {
					largest[e.group] = e.x
				}
			}
		}
		for _, g := range groups {
			x := largest[g]
			label := strings.TrimSpace(fmt.Sprintf("%s, %s %s", g, trimFloat(x), xName[g]))
			b.Series = append(b.Series, barSeries{Name: label, Values: values(func(c string) (float64, bool) {
				for _, l := range levelOrder(run) {
					if onCurve(l) && l.Group == g && l.X == x {
						if s, ok := summaryOf(run, c, l.Name); ok {
							t, ok := tagOf(s, firstTag(l, s))
							return t.Merged.Mean, ok
						}
					}
				}
				return 0, false
			})})
		}
	case "push":
		b.Unit, b.Format = "messages/s", "num"
		for _, l := range levelOrder(run) {
			b.Series = append(b.Series, barSeries{Name: l.Name, Values: values(func(c string) (float64, bool) {
				rate, _, ok := pushOf(run, c, l.Name)
				return rate, ok
			})})
		}
	case "closed":
		b.Unit, b.Format = "requests/s", "num"
		for _, l := range levelOrder(run) {
			if !closedLoop(l) || onCurve(l) {
				continue
			}
			s := barSeries{Name: l.Name, Values: []any{}, Lo: []any{}, Hi: []any{}}
			for _, c := range contenders {
				rps, ok := summaryRPS(run, c, l)
				if !ok {
					s.Values, s.Lo, s.Hi = append(s.Values, nil), append(s.Lo, nil), append(s.Hi, nil)
					continue
				}
				s.Values = append(s.Values, finite(rps.Median))
				s.Lo, s.Hi = append(s.Lo, finite(rps.Min)), append(s.Hi, finite(rps.Max))
			}
			b.Series = append(b.Series, s)
		}
	}
	for _, s := range b.Series {
		for _, v := range s.Values {
			if v != nil {
				return b, true
			}
		}
	}
	return b, false
}

// Started formats a run's start for the matrix's table of runs.
func (v *matrixView) Started(run *results.Run) string { return stamp(run.Started) }

// pushOf is a contender's delivered messages/s and peak server RSS at a /stream level, the
// medians over its repeats.
func pushOf(run *results.Run, contender, level string) (rate, rssMB float64, ok bool) {
	var rates, rss []float64
	for _, c := range run.Cells {
		if c.Contender == contender && c.Level == level && c.Stream != nil {
			rates = append(rates, c.Stream.PerSecond)
			rss = append(rss, c.Server.Summary.RSSMBMax)
		}
	}
	if len(rates) == 0 {
		return 0, 0, false
	}
	slices.Sort(rates)
	slices.Sort(rss)
	return rates[len(rates)/2], rss[len(rss)/2], true
}
