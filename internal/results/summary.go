package results

import (
	"fmt"
	"math"
	"slices"
	"sort"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/arena-lab/arena/internal/load"
)

// NoisySpread is how far apart (in % of the median) repeats may land before a cell is
// marked noisy.
const NoisySpread = 10.0

// LatencyOf summarises a histogram of nanoseconds in milliseconds.
func LatencyOf(h *hdrhistogram.Histogram) Latency {
	if h == nil || h.TotalCount() == 0 {
		return Latency{}
	}
	ms := func(ns int64) float64 { return round3(float64(ns) / 1e6) }
	return Latency{
		Count: h.TotalCount(),
		Mean:  round3(h.Mean() / 1e6),
		Min:   ms(h.Min()),
		P50:   ms(h.ValueAtQuantile(50)),
		P90:   ms(h.ValueAtQuantile(90)),
		P99:   ms(h.ValueAtQuantile(99)),
		P999:  ms(h.ValueAtQuantile(99.9)),
		Max:   ms(h.Max()),
	}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// EncodeHist packs a histogram for results.json (HdrHistogram V2, compressed, base64).
func EncodeHist(h *hdrhistogram.Histogram) (string, error) {
	if h == nil {
		return "", nil
	}
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	return string(b), err
}

// DecodeHist unpacks EncodeHist's string; "" is an empty histogram.
func DecodeHist(s string) (*hdrhistogram.Histogram, error) {
	if s == "" {
		return load.NewHistogram(), nil
	}
	return hdrhistogram.Decode([]byte(s))
}

// Summarise combines each contender's repeats at each level: latency from the merged
// histograms, and each headline figure's median and spread across repeats.
func Summarise(cells []Cell) ([]CellSummary, error) {
	type key struct{ contender, level string }
	var order []key
	groups := map[key][]Cell{}
	for _, c := range cells {
		k := key{c.Contender, c.Level}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], c)
	}
	var out []CellSummary
	for _, k := range order {
		s, err := summariseGroup(k.contender, k.level, groups[k])
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func summariseGroup(contender, level string, cells []Cell) (CellSummary, error) {
	s := CellSummary{Contender: contender, Level: level, Repeats: len(cells)}
	var cpu, rss, threads []float64
	for _, c := range cells {
		s.Outcomes = append(s.Outcomes, c.Outcome.Status)
		s.ClientBnd = s.ClientBnd || c.ClientBound
		if c.Outcome.Status != OutcomeOK {
			continue // a crashed or interrupted repeat says nothing of the spread
		}
		cpu = append(cpu, c.Server.Summary.CPUPctMean)
		rss = append(rss, c.Server.Summary.RSSMBMax)
		threads = append(threads, float64(c.Server.Summary.ThreadsMax))
	}
	s.CPUPct, s.RSSMB, s.Threads = SpreadOf(cpu), SpreadOf(rss), SpreadOf(threads)

	var tagOrder []string
	for _, c := range cells {
		for _, t := range c.Tags {
			if !slices.Contains(tagOrder, t.Tag) {
				tagOrder = append(tagOrder, t.Tag)
			}
		}
	}
	for _, tag := range tagOrder {
		ts := TagSummary{Tag: tag, ErrKinds: map[string]int64{}}
		resp, svc := load.NewHistogram(), load.NewHistogram()
		var p99, p50, rps []float64
		for _, c := range cells {
			for _, t := range c.Tags {
				if t.Tag != tag {
					continue
				}
				for kind, n := range t.Errors {
					ts.Errors += n
					ts.ErrKinds[kind] += n
				}
				for class, n := range t.Status {
					if class != "2xx" {
						ts.Non2xx += n
					}
				}
				if c.Outcome.Status != OutcomeOK {
					continue
				}
				for _, pair := range []struct {
					into *hdrhistogram.Histogram
					from string
				}{{resp, t.ResponseHist}, {svc, t.ServiceHist}} {
					h, err := DecodeHist(pair.from)
					if err != nil {
						return s, fmt.Errorf("%s %s %s: %w", contender, level, tag, err)
					}
					pair.into.Merge(h)
				}
				p99 = append(p99, t.Response.P99)
				p50 = append(p50, t.Response.P50)
				rps = append(rps, t.RPS)
			}
		}
		ts.Merged, ts.Service = LatencyOf(resp), LatencyOf(svc)
		ts.P99, ts.P50, ts.RPS = SpreadOf(p99), SpreadOf(p50), SpreadOf(rps)
		if len(ts.ErrKinds) == 0 {
			ts.ErrKinds = nil
		}
		for name, sp := range map[string]Spread{tag + " p99": ts.P99, tag + " throughput": ts.RPS} {
			if sp.Pct > NoisySpread {
				s.NoisyWhy = append(s.NoisyWhy, fmt.Sprintf("%s varies %.0f%% across repeats", name, sp.Pct))
			}
		}
		s.Tags = append(s.Tags, ts)
	}
	sort.Strings(s.NoisyWhy)
	s.Noisy = len(s.NoisyWhy) > 0
	return s, nil
}

// SpreadOf is the median, range and relative spread of a figure over repeats. One value
// has no spread; fewer than two repeats can never be noisy.
func SpreadOf(vals []float64) Spread {
	if len(vals) == 0 {
		return Spread{}
	}
	v := append([]float64(nil), vals...)
	sort.Float64s(v)
	var med float64
	if n := len(v); n%2 == 1 {
		med = v[n/2]
	} else {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	sp := Spread{Median: round3(med), Min: round3(v[0]), Max: round3(v[len(v)-1])}
	if med > 0 {
		sp.Pct = round3((v[len(v)-1] - v[0]) / med * 100)
	}
	return sp
}

// FormatMs writes milliseconds for people: "2.83 ms", "11 ms", "10.02 s".
func FormatMs(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.2f s", v/1000)
	case v >= 10:
		return fmt.Sprintf("%.0f ms", v)
	default:
		return fmt.Sprintf("%.2f ms", v)
	}
}
