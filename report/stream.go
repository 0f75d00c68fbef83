package report

import (
	"slices"

	"github.com/arena-lab/arena/internal/results"
	streamload "github.com/arena-lab/arena/internal/stream"
)

// streamView is study 003's headline, for runs whose cells pushed /stream: delivered
// messages/s with and without back-pressure, memory over time under slow consumers with the
// cap drawn, and every cell's drops and outcome.
type streamView struct {
	Bars  int // throughput chart in chartData.Bars, or -1 when no level had fast readers only
	RSS   bool
	CapMB float64
	Rows  []streamRow
}

type streamRow struct {
	results.Cell
	Figures *streamload.Figures
	BP      string // BACKPRESSURE, as the cell was started
}

// streamRSSData is the memory chart: a line per contender and slow level, the cap beside.
type streamRSSData struct {
	Lines []line  `json:"lines"`
	CapMB float64 `json:"cap_mb,omitempty"`
}

func buildStream(v *pageView) (*streamView, *streamRSSData) {
	var cells []results.Cell
	figures := map[int]*streamload.Figures{} // by index in cells
	for _, c := range v.Run.Cells {
		if f, ok := streamload.FiguresOf(c); ok {
			figures[len(cells)] = f
			cells = append(cells, c)
		}
	}
	if len(cells) == 0 {
		return nil, nil
	}
	sv := &streamView{Bars: -1}
	contenders := contenderOrder(v.Run)
	var fast, slow []string // levels, in plan order
	for _, lv := range levelOrder(v.Run) {
		for i, c := range cells {
			if c.Level != lv.Name {
				continue
			}
			if figures[i].SlowClients == 0 && !slices.Contains(fast, lv.Name) {
				fast = append(fast, lv.Name)
			}
			if figures[i].SlowClients > 0 && !slices.Contains(slow, lv.Name) {
				slow = append(slow, lv.Name)
			}
		}
	}
	for i, c := range cells {
		sv.Rows = append(sv.Rows, streamRow{Cell: c, Figures: figures[i], BP: c.Env["BACKPRESSURE"]})
		if c.Memory != nil {
			sv.CapMB = max(sv.CapMB, c.Memory.CapMB)
		}
	}

	if len(fast) > 0 {
		sv.Bars = v.addBars(streamBars(v.Run, cells, contenders, fast))
	}

	var rss *streamRSSData
	if len(slow) > 0 {
		rss = &streamRSSData{Lines: []line{}, CapMB: sv.CapMB}
		for ci, name := range contenders {
			for li, lv := range slow {
				for _, c := range cells {
					if c.Contender != name || c.Level != lv {
						continue
					}
					l := sampleLine(seriesName(&c, name)+" · "+lv, c.Server.Timeline, func(s results.Sample) float64 { return s.RSSMB })
					l.Colour = ci
					if c.Env["BACKPRESSURE"] == "off" || li > 0 && c.Env["BACKPRESSURE"] == "" {
						l.Dash = "dashed"
					}
					rss.Lines = append(rss.Lines, l)
				}
			}
		}
		sv.RSS = len(rss.Lines) > 0
	}
	return sv, rss
}

// streamBars is the chart of messages delivered per second at the fast-reader levels, a
// bar per contender measured at any of them.
func streamBars(run *results.Run, cells []results.Cell, contenders, fast []string) barsData {
	b := barsData{Unit: "messages/s", Format: "num"}
	var present []string
	for _, name := range contenders {
		for _, c := range cells {
			if c.Contender == name && slices.Contains(fast, c.Level) && !slices.Contains(present, name) {
				present = append(present, name)
			}
		}
	}
	b.Categories = present
	for _, lv := range fast {
		s := barSeries{Name: lv}
		for ci, name := range present {
			sum, _ := summaryOf(run, name, lv)
			rate, ok := sum.Numbers[streamload.NumberDelivered]
			if why := unranked(sum); why != "" {
				b.leaveOut(ci, lv, why)
				ok = false
			}
			if !ok {
				s.Values, s.Lo, s.Hi = append(s.Values, nil), append(s.Lo, nil), append(s.Hi, nil)
				continue
			}
			s.Values = append(s.Values, finite(rate.Median))
			s.Lo, s.Hi = append(s.Lo, finite(rate.Min)), append(s.Hi, finite(rate.Max))
		}
		b.Series = append(b.Series, s)
	}
	return b
}
