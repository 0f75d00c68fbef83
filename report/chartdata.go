package report

import (
	"fmt"
	"math"

	"github.com/arena-lab/arena/internal/results"
)

// chartData is the JSON blob app.js draws from. Every per-contender list follows
// levelData.Contenders, so a contender keeps its colour from chart to chart.
type chartData struct {
	Levels []levelData `json:"levels"`
	Curves []curveData `json:"curves"` // the groups of levels drawn against X
	Bars   []barsData  `json:"bars"`   // bar charts: throughput, the matrix's headlines
	// StreamRSS is the memory of the slow-consumer levels over time (study 003).
	StreamRSS *streamRSSData `json:"stream_rss,omitempty"`
}

type levelData struct {
	Contenders []string           `json:"contenders"`
	Tags       map[string]tagData `json:"tags"`
	// Lines are the resource timelines: "cpu", "client_cpu", "rss", "heap" (a JVM's heap after
	// each collection), "threads", and the lab's
	// downstream's "downstream_cpu" and "downstream_rss" and its database's "database_cpu"
	// and "database_rss" for the contenders that had one.
	Lines map[string][]line `json:"lines"`
	CapMB float64           `json:"cap_mb,omitempty"` // the memory cap its cells ran under
	// Flames are the contenders' CPU profiles (levelView.Profiles with a flame graph).
	Flames []flameData `json:"flames,omitempty"`
}

// flameData is one contender's profile for the flame graph and the top-frames table.
type flameData struct {
	Contender string             `json:"contender"`
	Tool      string             `json:"tool"`
	Samples   int64              `json:"samples"`
	Tree      *results.FlameNode `json:"tree"`
	// Top are its frames with the most self samples, as shares of its samples (%).
	Top []topFrame `json:"top"`
}

type topFrame struct {
	Name  string  `json:"name"`
	Self  float64 `json:"self"`
	Total float64 `json:"total"`
}

// topShown is how many frames the report's side-by-side lists per contender.
const topShown = 15

func flameOf(name string, p *results.Profile) flameData {
	f := flameData{Contender: name, Tool: p.Tool, Samples: p.Samples, Tree: p.Flame, Top: []topFrame{}}
	for i, fr := range p.Top {
		if i == topShown || p.Samples == 0 {
			break
		}
		pct := func(v int64) float64 { return math.Round(1000*float64(v)/float64(p.Samples)) / 10 }
		f.Top = append(f.Top, topFrame{Name: fr.Name, Self: pct(fr.Self), Total: pct(fr.Total)})
	}
	return f
}

type tagData struct {
	// Percentiles holds, per contender, p50, p90, p99, p99.9 and max of the merged
	// response time in ms; null when the contender has no response for the tag.
	Percentiles [][]any `json:"percentiles"`
	P99         []line  `json:"p99"`
}

// line is one series of [t seconds, value] points (or [x, value] on a curve); a null
// value leaves a gap. Colour is its contender's index; Dash is "dashed", "dotted" or "dashdot".
type line struct {
	Name   string   `json:"name"`
	Points [][2]any `json:"points"`
	Colour int      `json:"c"`
	Dash   string   `json:"dash,omitempty"`
}

func buildChartData(v *pageView) chartData {
	data := chartData{Levels: []levelData{}, Curves: []curveData{}, Bars: v.bars, StreamRSS: v.streamRSS}
	if data.Bars == nil {
		data.Bars = []barsData{}
	}
	for _, c := range v.Curves {
		data.Curves = append(data.Curves, buildCurveData(c, contenderOrder(v.Run)))
	}
	for _, lv := range v.Levels {
		d := levelData{Contenders: lv.Contenders, Tags: map[string]tagData{}, Lines: map[string][]line{}}
		summaries := map[string]results.CellSummary{}
		for _, r := range lv.Rows {
			summaries[r.Contender] = r.Summary
		}
		for _, tv := range lv.Tags {
			td := tagData{Percentiles: [][]any{}, P99: []line{}}
			for ci, name := range lv.Contenders {
				td.Percentiles = append(td.Percentiles, percentiles(summaries[name], tv.Tag))
				l := p99Line(lv.Timelines[name], name, tv.Tag)
				l.Colour = ci
				td.P99 = append(td.P99, l)
				for _, al := range agentP99Lines(lv.Timelines[name], l.Name, tv.Tag) { // each agent's own, dashed
					al.Colour = ci
					td.P99 = append(td.P99, al)
				}
			}
			d.Tags[tv.Tag] = td
		}
		cpu := func(s results.Sample) float64 { return s.CPUPct }
		rss := func(s results.Sample) float64 { return s.RSSMB }
		d.CapMB = memoryCapOf(lv)
		for ci, name := range lv.Contenders {
			c := lv.Timelines[name]
			var server, client []results.Sample
			if c != nil {
				server, client = c.Server.Timeline, c.Client.Timeline
			}
			label := seriesName(c, name)
			add := func(key string, l line) {
				l.Colour = ci
				d.Lines[key] = append(d.Lines[key], l)
			}
			add("cpu", sampleLine(label, server, cpu))
			add("client_cpu", sampleLine(label+" client", client, cpu))
			if c != nil {
				for _, a := range c.Agents { // each load agent's own process, on the same clock
					add("client_cpu", sampleLine(label+" agent "+a.Name, a.ClientTimeline, cpu))
				}
			}
			add("rss", sampleLine(label, server, rss))
			add("threads", sampleLine(label, server, func(s results.Sample) float64 { return float64(s.Threads) }))
			// A JVM's heap after each collection, dashed beside its RSS: the live data.
			if c != nil && c.Heap != nil && len(c.Heap.Timeline) > 0 {
				add("heap", heapLine(label+" heap after GC", c.Heap.Timeline))
			}
			// The downstream of the same repeat, dotted, for the contenders that had one.
			if c != nil && c.Downstream != nil && len(c.Downstream.Timeline) > 0 {
				ds := sampleLine(label+" downstream", c.Downstream.Timeline, cpu)
				ds.Dash = "dotted"
				add("downstream_cpu", ds)
				ds = sampleLine(label+" downstream", c.Downstream.Timeline, rss)
				ds.Dash = "dotted"
				add("downstream_rss", ds)
			}
			// The database of the same repeat, dashed-dotted, for the levels that had one.
			if c != nil && c.Database != nil && len(c.Database.Timeline) > 0 {
				db := sampleLine(label+" database", c.Database.Timeline, cpu)
				db.Dash = "dashdot"
				add("database_cpu", db)
				db = sampleLine(label+" database", c.Database.Timeline, rss)
				db.Dash = "dashdot"
				add("database_rss", db)
			}
		}
		for _, pv := range lv.Profiles { // in the order profilesOf numbered them
			if pv.Flame >= 0 {
				d.Flames = append(d.Flames, flameOf(pv.Contender, pv.profile))
			}
			if pv.ClientFlame >= 0 {
				d.Flames = append(d.Flames, flameOf(pv.Contender+" · client", pv.client))
			}
		}
		data.Levels = append(data.Levels, d)
	}
	return data
}

func percentiles(s results.CellSummary, tag string) []any {
	for _, t := range s.Tags {
		if t.Tag == tag && t.Merged.Count > 0 {
			m := t.Merged
			return []any{positive(m.P50), positive(m.P90), positive(m.P99), positive(m.P999), positive(m.Max)}
		}
	}
	return nil
}

func p99Line(c *results.Cell, contender, tag string) line {
	l := line{Name: seriesName(c, contender), Points: [][2]any{}}
	if c == nil {
		return l
	}
	for _, t := range c.Tags {
		if t.Tag != tag {
			continue
		}
		for _, w := range t.Timeline {
			v := positive(w.P99)
			if w.Count == 0 { // an empty window has no latency, not a zero one
				v = nil
			}
			l.Points = append(l.Points, [2]any{finite(w.T), v})
		}
	}
	return l
}

// agentP99Lines are the p99 of each load agent's own windows, dashed beside the merged line:
// which agent, if any, saw what the merge shows.
func agentP99Lines(c *results.Cell, label, tag string) []line {
	if c == nil {
		return nil
	}
	var out []line
	for _, a := range c.Agents {
		for _, t := range a.Tags {
			if t.Tag != tag {
				continue
			}
			l := line{Name: label + " agent " + a.Name, Points: [][2]any{}, Dash: "dashed"}
			for _, w := range t.Timeline {
				v := positive(w.P99)
				if w.Count == 0 {
					v = nil
				}
				l.Points = append(l.Points, [2]any{finite(w.T), v})
			}
			out = append(out, l)
		}
	}
	return out
}

func sampleLine(name string, samples []results.Sample, value func(results.Sample) float64) line {
	l := line{Name: name, Points: [][2]any{}}
	for _, s := range samples {
		l.Points = append(l.Points, [2]any{finite(s.T), finite(value(s))})
	}
	return l
}

// memoryCapOf is the highest memory cap the level's timelines ran under (0: none).
func memoryCapOf(lv levelView) float64 {
	capMB := 0.0
	for _, name := range lv.Contenders {
		if c := lv.Timelines[name]; c != nil && c.Memory != nil {
			capMB = max(capMB, c.Memory.CapMB)
		}
	}
	return capMB
}

// heapLine is a JVM's heap after each of its collections, dashed.
func heapLine(name string, points []results.HeapPoint) line {
	l := line{Name: name, Points: [][2]any{}, Dash: "dashed"}
	for _, p := range points {
		l.Points = append(l.Points, [2]any{finite(p.T), finite(p.AfterMB)})
	}
	return l
}

// seriesName says which repeat a timeline is when it is not the first.
func seriesName(c *results.Cell, contender string) string {
	if c == nil || c.Repeat == 1 {
		return contender
	}
	return fmt.Sprintf("%s (repeat %d)", contender, c.Repeat)
}

// finite keeps NaN and ±Inf, which JSON cannot carry, out of the blob.
func finite(v float64) any {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return v
}

// positive is finite for values on a log axis, where 0 cannot be drawn.
func positive(v float64) any {
	if !(v > 0) {
		return nil
	}
	return finite(v)
}
