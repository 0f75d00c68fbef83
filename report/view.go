package report

import (
	"cmp"
	"fmt"
	"html/template"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/findings"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// pageView is everything the template shows; the figures stay in the run's own types
// and are formatted by the template's functions.
type pageView struct {
	Run          *results.Run
	Command      string
	Started      string
	Finished     string
	Elapsed      string
	VerdictLevel bool // some verdict is for one level only, so the table names it
	Levels       []levelView
	Outcomes     []outcomeView
	EnvRows      [][2]string
	CPULayout    string
	// AgentCells are the cells whose load came from load agents: each agent's own figures.
	AgentCells []results.Cell
	// Curves are the levels that carry an X, one per group: drawn against X before the
	// per-level sections.
	Curves []curveView
	// Throughput is the closed-loop levels without an X, side by side: their headline.
	Throughput *throughputView
	// Stream is study 003's headline, when cells pushed /stream.
	Stream    *streamView
	streamRSS *streamRSSData
	// DownstreamCPUs is where the lab's downstream ran, when some cell measured it.
	DownstreamCPUs string
	// Integrity are the cells whose deliveries had faults: marked, and not ranked.
	Integrity []results.Cell
	// Uncapped says why a level's memory cap was only the heap's, when no cgroup could be made.
	Uncapped string
	bars     []barsData // chart data of the bar charts the views point into
	assets
}

// LoadLength is each cell's planned length of load, or its range over the levels ("" when
// no level plans one, e.g. closed loops bounded by a count of requests).
func (v *pageView) LoadLength() string {
	return secondsRange(v.Run.Scenario.Duration, v.Run.Scenario.Levels, func(l results.Level) float64 { return l.Duration })
}

// RequestTimeout is the levels' per-request timeout, or its range.
func (v *pageView) RequestTimeout() string {
	return secondsRange(v.Run.Scenario.Timeout, v.Run.Scenario.Levels, func(l results.Level) float64 { return l.Timeout })
}

// secondsRange writes shared seconds (when every level has them), else the range over the
// levels that have any, "15–30 s".
func secondsRange(shared float64, levels []results.Level, of func(results.Level) float64) string {
	if shared > 0 {
		return trimFloat(shared) + " s"
	}
	lo, hi := 0.0, 0.0
	for _, l := range levels {
		if v := of(l); v > 0 {
			if lo == 0 || v < lo {
				lo = v
			}
			hi = max(hi, v)
		}
	}
	switch {
	case hi == 0:
		return ""
	case lo == hi:
		return trimFloat(lo) + " s"
	}
	return trimFloat(lo) + "–" + trimFloat(hi) + " s, by level"
}

// Title is the page's title.
func (v *pageView) Title() string {
	return cmp.Or(v.Run.Scenario.Title, v.Run.Scenario.Name) + " · arena run " + v.Run.ID
}

type levelView struct {
	Index      int
	Level      results.Level
	Tags       []tagView
	Contenders []string
	Rows       []contenderRows
	NoSummary  []string // contenders measured at no repeat of this level
	Timelines  map[string]*results.Cell
	// Agents: some timeline's load came from load agents, whose own lines are drawn too.
	Agents bool
	// OnCurve: the level is a point of a curve (it has an X); its detail is collapsed.
	OnCurve bool
	// Closed: every stream is a closed loop, so throughput is what the server sustained.
	Closed bool
	// Bars is the index of its throughput chart in chartData.Bars (closed loops), or -1.
	Bars int
	// Downstream, Database: some contender's cells measured the lab's downstream, its database.
	Downstream bool
	Database   bool
	// Heap: some timeline is a JVM's with its heap after each collection, drawn beside its
	// RSS; HeapUnread says, per JVM timeline without one, why (no collection in the load).
	Heap       bool
	HeapUnread []string
	Problems   map[string][]string // per contender, its cells that did not end ok
	// Profiles are the contenders' CPU profiles at this level, repeats merged, when the run
	// took them (arena run --profile).
	Profiles []profileView
}

// heapsOf says whether a timeline has a JVM's heap after collection to draw, and why those
// of the JVMs without one have none.
func heapsOf(timelines map[string]*results.Cell, contenders []string) (drawn bool, unread []string) {
	for _, name := range contenders {
		if c := timelines[name]; c != nil && c.Heap != nil {
			if len(c.Heap.Timeline) > 0 {
				drawn = true
			} else if c.Heap.Unread != "" {
				unread = append(unread, seriesName(c, name)+": "+c.Heap.Unread)
			}
		}
	}
	return drawn, unread
}

// profileView is one contender's profile at a level: Flame indexes its flame graph in
// levelData.Flames, -1 when no repeat had samples (Error says why); ClientFlame the client's
// over the same loads, -1 when none.
type profileView struct {
	Flame, ClientFlame int
	Contender          string
	Tool               string
	Samples            int64
	Error              string
	ClientSamples      int64
	profile, client    *results.Profile
}

type tagView struct {
	Tag  string
	Plan string // how the stream was driven, e.g. "GET /instant · open 10/s"
}

type contenderRows struct {
	Contender      string
	Summary        results.CellSummary
	ClientBoundWhy string
	SharedCPUWhy   string
	Tags           []tagRow
	Downstream     *helperFigures // the lab's downstream beside this contender, if measured
	Database       *helperFigures // the lab's database beside this contender, if measured
}

type tagRow struct {
	results.TagSummary
	Measured bool
}

type outcomeView struct {
	results.Cell
	Exit    string
	LogTail string
}

func buildPage(run *results.Run) *pageView {
	v := &pageView{
		Run:      run,
		Command:  shellJoin(run.Command),
		Started:  stamp(run.Started),
		Finished: "—",
	}
	if run.Finished != nil {
		v.Finished = stamp(*run.Finished)
		v.Elapsed = run.Finished.Sub(run.Started).Round(time.Second).String()
	}
	for _, vd := range run.Verdicts {
		v.VerdictLevel = v.VerdictLevel || vd.Level != ""
	}
	contenders := contenderOrder(run)
	for i, lv := range levelOrder(run) {
		v.Levels = append(v.Levels, buildLevel(run, i, lv, contenders))
	}
	for i := range v.Levels {
		if lv := &v.Levels[i]; lv.Closed {
			lv.Bars = v.addBars(levelThroughput(lv))
		}
	}
	v.Curves = buildCurves(v.Levels)
	v.Throughput = buildThroughput(v)
	v.Stream, v.streamRSS = buildStream(v)
	v.DownstreamCPUs = downstreamCPUs(run)
	for _, c := range run.Cells {
		if c.Outcome.Status != results.OutcomeOK || c.Outcome.Killed {
			v.Outcomes = append(v.Outcomes, outcomeView{Cell: c, Exit: exitText(c.Outcome), LogTail: strings.Join(c.Outcome.LogTail, "\n")})
		}
		if len(c.Faults) > 0 {
			v.Integrity = append(v.Integrity, c)
		}
		if len(c.Agents) > 0 {
			v.AgentCells = append(v.AgentCells, c)
		}
		if c.Memory != nil && c.Memory.By == results.MemoryByHeap && v.Uncapped == "" {
			v.Uncapped = cmp.Or(c.Memory.Why, "no reason given")
		}
	}
	v.EnvRows, v.CPULayout = environment(run.Env)
	return v
}

// contenderOrder is the run's own list, then any contender only the cells name.
func contenderOrder(run *results.Run) []string {
	var names []string
	for _, c := range run.Contenders {
		names = appendNew(names, c.Name)
	}
	for _, c := range run.Cells {
		names = appendNew(names, c.Contender)
	}
	for _, s := range run.Summary {
		names = appendNew(names, s.Contender)
	}
	return names
}

// levelOrder is the scenario's plan, then any level only the cells name (a run whose
// plan changed under it should still show everything it measured).
func levelOrder(run *results.Run) []results.Level {
	levels := slices.Clone(run.Scenario.Levels)
	known := map[string]bool{}
	for _, l := range levels {
		known[l.Name] = true
	}
	for _, c := range run.Cells {
		if !known[c.Level] {
			known[c.Level] = true
			levels = append(levels, results.Level{Name: c.Level})
		}
	}
	return levels
}

// addHelpers files an ok cell's downstream and database resources under its contender.
func addHelpers(c *results.Cell, downstream, database map[string][]*results.Resources) {
	if c.Downstream != nil {
		downstream[c.Contender] = append(downstream[c.Contender], c.Downstream)
	}
	if c.Database != nil {
		database[c.Contender] = append(database[c.Contender], c.Database)
	}
}

func buildLevel(run *results.Run, index int, lv results.Level, contenders []string) levelView {
	v := levelView{Index: index, Level: lv, Contenders: contenders, Timelines: map[string]*results.Cell{},
		OnCurve: onCurve(lv), Closed: closedLoop(lv), Bars: -1, Problems: map[string][]string{}}
	downstream, database := map[string][]*results.Resources{}, map[string][]*results.Resources{}
	var tags []string
	for _, s := range lv.Streams {
		if !slices.Contains(tags, s.Tag) {
			tags = append(tags, s.Tag)
			v.Tags = append(v.Tags, tagView{Tag: s.Tag, Plan: streamPlan(s)})
		}
	}
	addTag := func(tag string) {
		if !slices.Contains(tags, tag) {
			tags = append(tags, tag)
			v.Tags = append(v.Tags, tagView{Tag: tag})
		}
	}
	summaries := map[string]results.CellSummary{}
	for _, s := range run.Summary {
		if s.Level == lv.Name {
			summaries[s.Contender] = s
			for _, t := range s.Tags {
				addTag(t.Tag)
			}
		}
	}
	why, shared := map[string]*reasons{}, map[string]*reasons{}
	note := func(m map[string]*reasons, contender, reason string, repeat int) {
		if reason == "" {
			return
		}
		if m[contender] == nil {
			m[contender] = &reasons{repeats: map[string][]string{}}
		}
		m[contender].add(reason, repeat)
	}
	for i := range run.Cells {
		c := &run.Cells[i]
		if c.Level != lv.Name {
			continue
		}
		for _, t := range c.Tags {
			addTag(t.Tag)
		}
		if c.Outcome.Status != results.OutcomeOK {
			v.Problems[c.Contender] = append(v.Problems[c.Contender], fmt.Sprintf("%s (repeat %d)", c.Outcome.Status, c.Repeat))
		} else {
			addHelpers(c, downstream, database)
		}
		note(why, c.Contender, c.ClientBoundWhy, c.Repeat)
		note(shared, c.Contender, c.SharedCPUWhy, c.Repeat)
		// Timelines show one repeat: the first, or the earliest that exists.
		if cur := v.Timelines[c.Contender]; cur == nil || c.Repeat < cur.Repeat {
			v.Timelines[c.Contender] = c
		}
		v.Agents = v.Agents || len(c.Agents) > 0
	}
	v.Heap, v.HeapUnread = heapsOf(v.Timelines, contenders)
	for _, name := range contenders {
		s, ok := summaries[name]
		if !ok {
			if v.Timelines[name] != nil {
				v.NoSummary = append(v.NoSummary, name)
			}
			continue
		}
		row := contenderRows{Contender: name, Summary: s, ClientBoundWhy: why[name].String(), SharedCPUWhy: shared[name].String(),
			Downstream: helperOf(downstream[name]), Database: helperOf(database[name])}
		v.Downstream = v.Downstream || row.Downstream != nil
		v.Database = v.Database || row.Database != nil
		for _, tag := range tags {
			i := slices.IndexFunc(s.Tags, func(t results.TagSummary) bool { return t.Tag == tag })
			if i < 0 {
				row.Tags = append(row.Tags, tagRow{TagSummary: results.TagSummary{Tag: tag}})
			} else {
				row.Tags = append(row.Tags, tagRow{TagSummary: s.Tags[i], Measured: true})
			}
		}
		v.Rows = append(v.Rows, row)
	}
	v.Profiles = profilesOf(run, lv.Name, v.Rows)
	return v
}

// profilesOf are the rows' merged profiles, numbered in the order of their flame graphs
// (the contender's, then the client's); a contender whose every repeat lacks one is listed
// with the first repeat's reason.
func profilesOf(run *results.Run, level string, rows []contenderRows) []profileView {
	var out []profileView
	flames := 0
	next := func() int { flames++; return flames - 1 }
	for _, row := range rows {
		p, client := row.Summary.Profile, row.Summary.ClientProfile
		pv := profileView{Flame: -1, ClientFlame: -1, Contender: row.Contender, profile: p, client: client}
		if p != nil {
			pv.Flame, pv.Tool, pv.Samples, pv.Error = next(), p.Tool, p.Samples, p.Error
		} else {
			i := slices.IndexFunc(run.Cells, func(c results.Cell) bool {
				return c.Level == level && c.Contender == row.Contender && c.Profile != nil
			})
			if i < 0 {
				continue
			}
			pv.Tool, pv.Error = run.Cells[i].Profile.Tool, cmp.Or(run.Cells[i].Profile.Error, "no samples")
		}
		if client != nil {
			pv.ClientFlame, pv.ClientSamples = next(), client.Samples
		}
		out = append(out, pv)
	}
	return out
}

// reasons gathers the cells' reasons for a mark (client-bound, shared CPU), each once with
// the repeats that gave it.
type reasons struct {
	reasons []string
	repeats map[string][]string
}

func (b *reasons) add(why string, repeat int) {
	b.reasons = appendNew(b.reasons, why)
	b.repeats[why] = append(b.repeats[why], fmt.Sprint(repeat))
}

func (b *reasons) String() string {
	if b == nil {
		return ""
	}
	var parts []string
	for _, why := range b.reasons {
		repeats := b.repeats[why]
		label := "repeat"
		if len(repeats) > 1 {
			label = "repeats"
		}
		parts = append(parts, fmt.Sprintf("%s (%s %s)", why, label, strings.Join(repeats, ", ")))
	}
	return strings.Join(parts, "; ")
}

func streamPlan(s results.StreamPlan) string {
	var load string
	switch s.Mode {
	case "open":
		load = "open loop " + trimFloat(s.Rate) + "/s"
	case "closed":
		load = fmt.Sprintf("closed loop, %d connections", s.Connections)
	default:
		load = s.Mode
	}
	if s.Requests > 0 {
		load += fmt.Sprintf(", %d requests", s.Requests)
	}
	return strings.TrimSpace("GET " + s.Path + " · " + load)
}

func exitText(o results.Outcome) string {
	var parts []string
	if o.ExitCode != nil {
		parts = append(parts, fmt.Sprintf("exit code %d", *o.ExitCode))
	}
	if o.Signal != "" {
		parts = append(parts, "signal "+o.Signal)
	}
	return strings.Join(parts, ", ")
}

func environment(e results.Environment) ([][2]string, string) {
	var rows [][2]string
	add := func(k, v string) {
		if v != "" && v != "0" {
			rows = append(rows, [2]string{k, v})
		}
	}
	add("Host", e.Host)
	add("OS", e.OS)
	add("Kernel", e.Kernel)
	add("CPU", e.CPUModel)
	add("Cores", fmt.Sprint(e.Cores))
	if e.MemoryGB > 0 {
		add("Memory", trimFloat(e.MemoryGB)+" GB")
	}
	add("Go", e.GoVersion)
	add("Java", e.JavaVersion)
	add("JAVA_HOME", e.JavaHome)
	add("Node", e.NodeVersion)
	if e.HeapMB > 0 {
		add("Heap", fmt.Sprintf("%d MB", e.HeapMB))
	}
	add("JAVA_OPTS", e.JavaOpts)
	add("arena revision", e.ArenaRev)

	server, client := e.ServerCPUs, e.ClientCPUs
	if server == "" {
		server = "no particular CPUs (not pinned)"
	} else {
		server = "CPUs " + server
	}
	if client == "" {
		client = "no particular CPUs (not pinned)"
	} else {
		client = "CPUs " + client
	}
	if t := e.Topology; t != nil {
		// A run whose load came from agents: which host ran what, on which CPUs.
		var agents []string
		for _, a := range t.Agents {
			agents = append(agents, fmt.Sprintf("%s on %s (%s, CPUs %s)", a.Name, a.Host, a.Addr, a.CPUs))
		}
		return rows, fmt.Sprintf("The contender ran on %s (%s), pinned to CPUs %s; the load came from %d agent(s) (%s): %s. Their histograms are added exactly; each agent's own figures are in results.json.",
			t.Server.Name, t.Server.Host, t.Server.CPUs, len(t.Agents), t.Launcher, strings.Join(agents, "; "))
	}
	return rows, fmt.Sprintf("Each contender was pinned to %s; the load client to %s.", server, client)
}

// funcs format figures for reading: latencies in ms to three significant digits,
// in seconds from 10 s up.
var funcs = template.FuncMap{
	"ms":            fmtMs,
	"tone":          tone,
	"join":          strings.Join,
	"num":           trimFloat,
	"spread":        fmtSpread,
	"errs":          fmtErrors,
	"pct":           func(v float64) string { return fmt.Sprintf("%.0f %%", v) },
	"rate":          fmtRate,
	"faults":        results.FormatFaults,
	"stamp":         stamp,
	"conditionText": findings.ConditionText,
	"errPct":        results.FormatPct,
	"failing":       func(t results.TagSummary) bool { return t.FailedPct() > scenario.MaxFailedPct },
	"failingWord":   func() string { return scenario.Failing.Text },
	"maxFailed":     func() float64 { return scenario.MaxFailedPct },
}

func fmtMs(v float64) string {
	switch {
	case v >= 10000:
		return results.FormatSig3(v/1000) + " s"
	case v > 0:
		return results.FormatSig3(v) + " ms"
	default:
		return "0 ms"
	}
}

// trimFloat prints a figure with at most one decimal and none when it is whole.
func trimFloat(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}

func fmtSpread(s results.Spread, repeats int) string {
	if repeats < 2 {
		return "—"
	}
	return fmt.Sprintf("%.0f %%", s.Pct)
}

// fmtErrors is the transport errors by kind, e.g. "12 (timeout 10, reset 2)".
func fmtErrors(t results.TagSummary) string {
	if t.Errors == 0 && len(t.ErrKinds) == 0 {
		return "0"
	}
	var kinds []string
	for _, k := range slices.Sorted(maps.Keys(t.ErrKinds)) {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, t.ErrKinds[k]))
	}
	if len(kinds) == 0 {
		return fmt.Sprint(t.Errors)
	}
	return fmt.Sprintf("%d (%s)", t.Errors, strings.Join(kinds, ", "))
}

// tone colours a verdict by the tone its scenario gave it, and the lab's own words (claim
// verdicts, statuses, outcomes, verify results) by theirs; anything else stays neutral.
func tone(v any) string {
	switch v := v.(type) {
	case results.Verdict:
		return string(cmp.Or(v.Tone, results.Neutral))
	case *results.Verdict:
		return string(cmp.Or(v.Tone, results.Neutral))
	case string:
		return string(results.ToneOf(v))
	}
	return string(results.Neutral)
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.Format("2006-01-02 15:04:05 MST")
}

// shellJoin quotes the command so that it can be pasted back into a shell.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,@%+") == "" {
			quoted[i] = a
		} else {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}

func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
