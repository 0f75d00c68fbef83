package report

import (
	"cmp"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

var (
	//go:embed matrix.html
	matrixTemplate string
	//go:embed matrix_parts.html
	matrixParts string
)

var matrixPage = parsePage("matrix", matrixTemplate, matrixParts)

// matrixView is every contender (rows) against every scenario and preset (columns), each
// cell the scenario's headline figure and verdict for that contender, from the latest run
// of that column that measured it.
type matrixView struct {
	Columns    []matrixColumn
	Rows       []matrixRow
	Claims     []matrixClaim
	Charts     []matrixChart
	Runs       []matrixRun // every run a cell comes from, newest first
	Machines   int         // distinct hosts among the runs: more than one makes rows incomparable
	Contenders []string
	Stale      bool // some cell is of an older build than the contender's current one
	assets
}

// Title is the page's title.
func (v *matrixView) Title() string {
	return fmt.Sprintf("arena matrix · %d contenders × %d scenarios", len(v.Contenders), len(v.Columns))
}

// MatrixOptions say what the matrix knows beside the runs.
type MatrixOptions struct {
	// Reports links each run (by id) to its report, relative to the page; none when absent.
	Reports map[string]string
	// Builds are each contender's current build hash: a cell measured on another is stale.
	// Nil marks none.
	Builds map[string]string
	// Claims judges a column's merged run again (its contenders from several runs): the
	// study's claims over every contender the column has. Nil keeps the newest run's.
	Claims func(*results.Run) []results.Claim
}

type matrixColumn struct {
	Scenario, Preset, Title string
	Runs                    int    // runs of this column that some cell comes from
	Headline                string // what the cells show, e.g. "/instant p99 (merged) and verdict"
	merged                  *results.Run
}

type matrixRow struct {
	Contender string
	Model     string // how it waits (its manifest's model), so that a claim about models reads down the rows
	Cells     []matrixCell
}

// matrixCell is one contender in one column: from the latest run of it that measured it.
type matrixCell struct {
	NotRun   bool
	Why      string // why it was not run, when the run says
	Figures  []matrixFigure
	Verdicts []results.Verdict
	Problems []string // cells whose outcome was not ok, or that had to be killed: said in red
	// Faults are the levels whose deliveries had integrity faults: said in red, their
	// figures not ranked.
	Faults []string
	From   *matrixRun
	Stale  bool // measured on an older build than the contender's current one
}

type matrixFigure struct {
	Label   string // e.g. "sleep 100 ms", "self"; "" for the scenario's one figure
	Text    string
	Verdict *results.Verdict // the verdict of the same group or level, when there is one
	// Errors is the error rate of the requests the figure is read from, e.g. "0.2 % errors"
	// ("" for a figure that is no latency or requests/s); Failing: more of them failed than
	// a judged cell may, so the figure is the speed of failing.
	Errors  string
	Failing bool
}

type matrixClaim struct {
	Scenario string
	Preset   string
	results.Claim
}

type matrixChart struct {
	Scenario string
	Title    string
	Bars     int
}

// matrixRun is a run a cell comes from: its date and a link to its report.
type matrixRun struct {
	Run    *results.Run
	Report string
}

// RenderMatrix writes the matrix of runs to w, with chartLib (echarts.min.js) inlined: one
// column per scenario and preset, each contender's cell from the latest run of it that
// measured that contender.
func RenderMatrix(runs []*results.Run, o MatrixOptions, chartLib []byte, w io.Writer) error {
	v, bars, err := buildMatrix(runs, o)
	if err != nil {
		return err
	}
	if v.assets, err = newAssets(chartLib, chartData{Levels: []levelData{}, Curves: []curveData{}, Bars: bars}); err != nil {
		return err
	}
	return execute(matrixPage, v, w)
}

// buildMatrix is the matrix of runs and its headline charts' data.
func buildMatrix(runs []*results.Run, o MatrixOptions) (*matrixView, []barsData, error) {
	cols := matrixColumnsOf(runs)
	if len(cols) == 0 {
		return nil, nil, errors.New("report: no run to put in the matrix")
	}
	v := &matrixView{}
	var bars []barsData
	hosts := map[string]bool{}
	from := map[string]*matrixRun{}
	pickedBy := make([]map[string]*results.Run, len(cols))
	for i, col := range cols {
		pick, names := latestPerContender(col)
		pickedBy[i] = pick
		for _, name := range names {
			v.Contenders = appendNew(v.Contenders, name)
			r := pick[name]
			hosts[r.Env.Host] = true
			if from[r.ID] == nil {
				from[r.ID] = &matrixRun{Run: r, Report: o.Reports[r.ID]}
				v.Runs = append(v.Runs, *from[r.ID])
			}
		}
		merged := results.Merge(pick, names)
		newest := col[0]
		hs := headlinesOf(newest)
		claims := newest.Claims
		if o.Claims != nil {
			claims = o.Claims(merged)
		}
		c := matrixColumn{Scenario: newest.Scenario.Name, Preset: newest.Scenario.Preset, Title: newest.Scenario.Title,
			Headline: describeHeadlines(hs), merged: merged}
		for _, r := range col {
			if slices.ContainsFunc(names, func(n string) bool { return pick[n] == r }) {
				c.Runs++
			}
		}
		v.Columns = append(v.Columns, c)
		if b, ok := headlineChart(merged, hs[0]); ok {
			bars = append(bars, b)
			v.Charts = append(v.Charts, matrixChart{Scenario: c.Scenario + " · " + c.Preset, Title: chartTitle(hs[0]), Bars: len(bars) - 1})
		}
		for _, cl := range claims {
			v.Claims = append(v.Claims, matrixClaim{Scenario: c.Scenario, Preset: c.Preset, Claim: cl})
		}
	}
	v.Machines = len(hosts)
	slices.Sort(v.Contenders)
	slices.SortFunc(v.Runs, func(a, b matrixRun) int {
		return cmp.Or(b.Run.Started.Compare(a.Run.Started), cmp.Compare(b.Run.ID, a.Run.ID))
	})
	for _, name := range v.Contenders {
		row := matrixRow{Contender: name, Model: modelOf(runs, name)}
		for i, col := range v.Columns {
			cell := matrixCellOf(col.merged, headlinesOf(cols[i][0]), name)
			if r := pickedBy[i][name]; r != nil {
				cell.From = from[r.ID]
				cell.Stale = staleBuild(r, name, o.Builds)
				v.Stale = v.Stale || cell.Stale
			}
			row.Cells = append(row.Cells, cell)
		}
		v.Rows = append(v.Rows, row)
	}
	if bars == nil {
		bars = []barsData{}
	}
	return v, bars, nil
}

// modelOf is a contender's model as the runs record it; "" when none does.
func modelOf(runs []*results.Run, name string) string {
	for _, r := range runs {
		for _, c := range r.Contenders {
			if c.Name == name && c.Model != "" {
				return c.Model
			}
		}
	}
	return ""
}

// WriteMatrix renders the matrix of runs to outPath, replacing it only once complete.
func WriteMatrix(runs []*results.Run, o MatrixOptions, chartLibPath, outPath string) error {
	return writeAtomic(chartLibPath, outPath, func(lib []byte, w io.Writer) error { return RenderMatrix(runs, o, lib, w) })
}

// matrixColumnsOf groups runs by scenario and preset, each group newest first (by start,
// then id), the groups ordered by scenario and preset. A run against a target (arena run
// --target) is left out: the matrix is of the lab's own contenders, built and started alike.
func matrixColumnsOf(runs []*results.Run) [][]*results.Run {
	by := map[[2]string][]*results.Run{}
	for _, r := range runs {
		if r != nil && (r.Spec == nil || r.Spec.Target == nil) {
			k := [2]string{r.Scenario.Name, r.Scenario.Preset}
			by[k] = append(by[k], r)
		}
	}
	keys := slices.SortedFunc(maps.Keys(by), func(a, b [2]string) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	var out [][]*results.Run
	for _, k := range keys {
		col := by[k]
		slices.SortFunc(col, func(a, b *results.Run) int { return cmp.Or(b.Started.Compare(a.Started), cmp.Compare(b.ID, a.ID)) })
		out = append(out, col)
	}
	return out
}

// latestPerContender picks for each contender the newest run of col that measured it (ran a
// cell of it, or summarised one); a contender no run measured comes from the newest run that
// lists it, which says why. It returns the picks and the contenders in first-seen order.
func latestPerContender(col []*results.Run) (map[string]*results.Run, []string) {
	pick := map[string]*results.Run{}
	var names []string
	for _, r := range col { // newest first: the first run to measure a contender wins
		for _, name := range contenderOrder(r) {
			if pick[name] == nil && measuredIn(r, name) {
				pick[name] = r
			}
			names = appendNew(names, name)
		}
	}
	for _, name := range names {
		if pick[name] == nil {
			for _, r := range col {
				if slices.Contains(contenderOrder(r), name) {
					pick[name] = r
					break
				}
			}
		}
	}
	return pick, names
}

func measuredIn(r *results.Run, contender string) bool {
	return slices.ContainsFunc(r.Cells, func(c results.Cell) bool { return c.Contender == contender }) ||
		slices.ContainsFunc(r.Summary, func(s results.CellSummary) bool { return s.Contender == contender })
}

// staleBuild says whether run measured contender on another build than its current one.
func staleBuild(run *results.Run, contender string, builds map[string]string) bool {
	now, ok := builds[contender]
	if !ok || now == "" {
		return false
	}
	for _, c := range run.Contenders {
		if c.Name == contender && c.BuildHash != "" {
			return c.BuildHash != now
		}
	}
	return false
}

// headlinesOf is what a run is summed up by: the headline its scenario named, or, for a run
// written before scenarios named one, its first tag's p99 at the first level measured.
func headlinesOf(run *results.Run) []results.Headline {
	if len(run.Scenario.Headline) > 0 {
		return run.Scenario.Headline
	}
	return []results.Headline{{Figure: "p99", Per: results.PerFirst, Label: "p99 of the first tag", Unit: "ms"}}
}

func describeHeadlines(hs []results.Headline) string {
	var parts []string
	for _, h := range hs {
		parts = append(parts, h.Label+map[string]string{results.PerLevel: " per level", results.PerCurve: " per group", results.PerFirst: ""}[h.Per])
	}
	return strings.Join(parts, ", ") + " (median over repeats), and the verdict"
}

func chartTitle(h results.Headline) string { return h.Label + ", " + h.Unit }

// summaryOf is a contender's summary at a level, if it has one.
func summaryOf(run *results.Run, contender, level string) (results.CellSummary, bool) {
	for _, s := range run.Summary {
		if s.Contender == contender && s.Level == level {
			return s, true
		}
	}
	return results.CellSummary{}, false
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

// figureAt reads a headline's figure from a contender's summary at a level (results.FigureOf),
// the level's first tag when the headline names none.
func figureAt(h results.Headline, l results.Level, s results.CellSummary) (results.Spread, bool) {
	return results.FigureOf(s, h.Figure, cmp.Or(h.Tag, firstTag(l, s)))
}

// errorsAt is the error rate beside a headline's latency or requests/s (of the tag it is
// read from), and whether the cell is failing: more of its requests failed than
// scenario.MaxFailedPct. "" for a figure of no requests (CPU, memory, deliveries).
func errorsAt(h results.Headline, l results.Level, s results.CellSummary) (string, bool) {
	failing := false
	if pct, _ := s.FailedPct(); pct > scenario.MaxFailedPct {
		failing = true
	}
	if !slices.Contains([]string{"p50", "p90", "p99", "p999", "mean", "rps"}, h.Figure) {
		return "", failing
	}
	tag := cmp.Or(h.Tag, firstTag(l, s))
	for _, t := range s.Tags {
		if t.Tag == tag {
			return results.FormatPct(t.ErrorPct) + " errors", failing
		}
	}
	return "", failing
}

// place is where a headline is read for a contender: a level, or a group's largest X.
type place struct {
	label string // the level or group, "" where the scenario has one place
	level results.Level
	x     float64
	xName string
}

// placesOf lists where headline h is read for a contender, in plan order, each with the level
// it is read at: every level it was measured at (PerLevel), each group's largest X it was
// measured at (PerCurve), or the first level it was measured at (PerFirst).
func placesOf(run *results.Run, h results.Headline, contender string) []place {
	levels := levelOrder(run)
	measured := func(l results.Level) bool {
		s, ok := summaryOf(run, contender, l.Name)
		if !ok {
			return false
		}
		_, ok = figureAt(h, l, s)
		return ok
	}
	var out []place
	switch h.Per {
	case results.PerLevel:
		for _, l := range levels {
			if measured(l) {
				out = append(out, place{label: l.Name, level: l})
			}
		}
		if len(levels) == 1 && len(out) == 1 {
			out[0].label = ""
		}
	case results.PerCurve:
		index := map[string]int{}
		for _, l := range levels {
			if !onCurve(l) || !measured(l) {
				continue
			}
			i, seen := index[l.Group]
			if !seen {
				index[l.Group] = len(out)
				out = append(out, place{label: l.Group, level: l, x: l.X, xName: l.XName})
				continue
			}
			if l.X > out[i].x {
				out[i].level, out[i].x = l, l.X
			}
		}
	default:
		for _, l := range levels {
			if measured(l) {
				return []place{{level: l}}
			}
		}
	}
	return out
}

// formatFigure writes a headline's value in its unit.
func formatFigure(v float64, unit string) string {
	switch unit {
	case "ms":
		return fmtMs(v)
	case "MB":
		return fmt.Sprintf("%.0f MB", v)
	case "%":
		return fmt.Sprintf("%.0f %%", v)
	}
	return fmtRate(v) + " " + unit
}

// matrixCellOf is one contender's cell of the matrix for this run: its problems, its
// headline figures with the verdict of the same level or group beside each, and the rest
// of its verdicts.
func matrixCellOf(run *results.Run, hs []results.Headline, contender string) matrixCell {
	problems, measured := cellProblems(run, contender)
	cell := matrixCell{Problems: problems}
	for _, s := range run.Summary {
		if s.Contender == contender && s.Faulty() {
			cell.Faults = append(cell.Faults, fmt.Sprintf("%s: %s", s.Level, results.FormatFaults(s.Faults)))
		}
	}
	var verified string
	for _, c := range run.Contenders {
		if c.Name == contender {
			verified = c.Verified
		}
	}
	if !measured && !slices.ContainsFunc(run.Summary, func(s results.CellSummary) bool { return s.Contender == contender }) {
		switch {
		case strings.HasPrefix(verified, results.VerifyFailed):
			cell.Problems = append(cell.Problems, "verify "+verified)
		default:
			cell.NotRun = true
			if verified != "" && run.Status != results.RunComplete {
				cell.Why = "the run " + run.Status + " before it"
			}
		}
		return cell
	}
	for _, vd := range run.Verdicts {
		if vd.Contender == contender {
			cell.Verdicts = append(cell.Verdicts, vd)
		}
	}
	cell.Figures = headlineFigures(run, hs, contender)
	if len(cell.Figures)+len(cell.Verdicts)+len(cell.Problems)+len(cell.Faults) == 0 {
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

// cellProblems are the contender's cells that did not end well, by status (killed after
// SIGTERM among them), and whether any cell of it was measured at all.
func cellProblems(run *results.Run, contender string) (out []string, measured bool) {
	problems := map[string][]string{}
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
		if c.Outcome.Killed {
			statuses = appendNew(statuses, killedAfterTerm)
			problems[killedAfterTerm] = append(problems[killedAfterTerm], fmt.Sprintf("%s r%d", c.Level, c.Repeat))
		}
	}
	for _, st := range statuses {
		out = append(out, st+": "+strings.Join(problems[st], ", "))
	}
	return out, measured
}

// headlineFigures are the contender's headline figures: the first headline decides the
// places; the others join its text at each.
func headlineFigures(run *results.Run, hs []results.Headline, contender string) []matrixFigure {
	var figures []matrixFigure
	for _, p := range placesOf(run, hs[0], contender) {
		s, _ := summaryOf(run, contender, p.level.Name)
		var parts []string
		for i, h := range hs {
			v, ok := figureAt(h, p.level, s)
			if !ok {
				continue
			}
			text := formatFigure(v.Median, h.Unit)
			switch {
			case i > 0:
				text = h.Label + " " + text
			case h.Per == results.PerFirst:
				text = h.Label + " " + text
			case h.Per == results.PerCurve && slices.Contains([]string{"p50", "p99", "mean"}, h.Figure):
				text = fmt.Sprintf("%s %s at %s %s", h.Figure, text, trimFloat(p.x), p.xName)
			case h.Per == results.PerCurve:
				text = fmt.Sprintf("%s at %s %s", text, trimFloat(p.x), p.xName)
			}
			parts = append(parts, text)
		}
		f := matrixFigure{Label: p.label, Text: strings.Join(parts, ", ")}
		f.Errors, f.Failing = errorsAt(hs[0], p.level, s)
		figures = append(figures, f)
	}
	return figures
}

// killedAfterTerm is how the report names a contender that had to be killed after SIGTERM.
const killedAfterTerm = "killed after SIGTERM"

// headlineChart is the run's first headline as bars per contender measured: one series
// (PerFirst), a series per level with the repeats' range as whiskers (PerLevel), or a
// series per group at the largest X anyone reached, so that bars compare (PerCurve).
func headlineChart(run *results.Run, h results.Headline) (barsData, bool) {
	var contenders []string
	for _, name := range contenderOrder(run) {
		if len(placesOf(run, h, name)) > 0 {
			contenders = append(contenders, name)
		}
	}
	if len(contenders) == 0 {
		return barsData{}, false
	}
	b := barsData{Unit: h.Unit, Format: "num", Categories: contenders, Series: []barSeries{}}
	if h.Unit == "ms" {
		b.Format = "ms"
	}
	series := func(name string, at func(contender string) (results.Level, bool)) barSeries {
		s := barSeries{Name: name, Values: []any{}, Lo: []any{}, Hi: []any{}}
		for ci, c := range contenders {
			var v results.Spread
			ok := false
			if l, found := at(c); found {
				if sum, has := summaryOf(run, c, l.Name); has {
					v, ok = figureAt(h, l, sum)
					if why := unranked(sum); why != "" {
						b.leaveOut(ci, l.Name, why)
						ok = false
					}
				}
			}
			switch {
			case !ok:
				s.Values, s.Lo, s.Hi = append(s.Values, nil), append(s.Lo, nil), append(s.Hi, nil)
			case b.Format == "ms":
				s.Values, s.Lo, s.Hi = append(s.Values, positive(v.Median)), append(s.Lo, nil), append(s.Hi, nil)
			default:
				s.Values, s.Lo, s.Hi = append(s.Values, finite(v.Median)), append(s.Lo, finite(v.Min)), append(s.Hi, finite(v.Max))
			}
		}
		return s
	}
	switch h.Per {
	case results.PerLevel:
		for _, l := range levelOrder(run) {
			b.Series = append(b.Series, series(l.Name, func(string) (results.Level, bool) { return l, true }))
		}
	case results.PerCurve:
		var groups []string
		largest := map[string]results.Level{}
		for _, c := range contenders {
			for _, p := range placesOf(run, h, c) {
				groups = appendNew(groups, p.label)
				if cur, ok := largest[p.label]; !ok || p.x > cur.X {
					largest[p.label] = p.level
				}
			}
		}
		for _, g := range groups {
			l := largest[g]
			b.Series = append(b.Series, series(strings.TrimSpace(fmt.Sprintf("%s, %s %s", g, trimFloat(l.X), l.XName)),
				func(string) (results.Level, bool) { return l, true }))
		}
	default:
		b.ByCategory = true
		b.Series = append(b.Series, series(h.Label, func(c string) (results.Level, bool) {
			ps := placesOf(run, h, c)
			if len(ps) == 0 {
				return results.Level{}, false
			}
			return ps[0].level, true
		}))
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

// Date is a run's day, for a cell: when its figure was measured.
func (c matrixCell) Date() string {
	if c.From == nil || c.From.Run.Started.IsZero() {
		return ""
	}
	return c.From.Run.Started.Format("2006-01-02")
}
