package results

import (
	"fmt"
	"math"
	"slices"
	"sort"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
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

// DecodeHist unpacks EncodeHist's string; "" is an empty histogram. It refuses a histogram
// of another layout than the lab's before laying its counts out: every reader adds what it
// decodes into the lab's histograms, where another layout's values would be dropped or
// moved, and a header naming a wide layout would cost 47 MiB for 56 bytes.
func DecodeHist(s string) (*hdrhistogram.Histogram, error) {
	h := NewHistogram()
	if s == "" {
		return h, nil
	}
	p, err := hdrhistogram.DecodePacked([]byte(s)) // sparse: its size is the input's
	if err != nil {
		return nil, err
	}
	low, high, digits := p.LowestTrackableValue(), p.HighestTrackableValue(), p.SignificantFigures()
	if low != HistLowest || high != HistHighest || digits != HistDigits {
		return nil, fmt.Errorf("histogram of another layout (%d–%d ns, %d digits; the lab's is %d–%d, %d digits): another arena build's",
			low, high, digits, HistLowest, HistHighest, HistDigits)
	}
	if dropped := p.MergeInto(h); dropped > 0 {
		return nil, fmt.Errorf("histogram holds %d values the lab's layout cannot", dropped)
	}
	return h, nil
}

// Summarise combines each contender's repeats at each level: latency from the merged
// histograms, and every other figure's median and spread across repeats. It is the one
// place derived figures are computed (as vegeta's Metrics.Close): judges and reports read
// its result and compute no median of their own.
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
	var cpu, rss, threads, dbCPU []float64
	numbers := map[string][]float64{}
	var profiles, clientProfiles []*Profile
	for _, c := range cells {
		if c.Profile != nil {
			profiles = append(profiles, c.Profile)
		}
		if c.ClientProfile != nil {
			clientProfiles = append(clientProfiles, c.ClientProfile)
		}
		s.Outcomes = append(s.Outcomes, c.Outcome.Status)
		s.ClientBnd = s.ClientBnd || c.ClientBound
		s.SharedCPU = s.SharedCPU || c.SharedCPU
		s.Unverified = s.Unverified || c.Unverified
		if Ran(c.Outcome.Status) {
			for name, v := range c.Numbers {
				numbers[name] = append(numbers[name], v)
			}
			for kind, n := range c.Faults {
				if s.Faults == nil {
					s.Faults = map[string]int64{}
				}
				s.Faults[kind] += n
			}
		}
		if c.Outcome.Status != OutcomeOK {
			continue // a crashed or interrupted repeat's resources cover part of a load
		}
		if c.Server.Unprobed != "" { // no figures are no zeros
			s.ServerUnprobed = c.Server.Unprobed
		} else {
			cpu = append(cpu, c.Server.Summary.CPUPctMean)
			rss = append(rss, c.Server.Summary.RSSMBMax)
			threads = append(threads, float64(c.Server.Summary.ThreadsMax))
		}
		if c.Database != nil {
			dbCPU = append(dbCPU, c.Database.Summary.CPUPctMean)
		}
	}
	s.CPUPct, s.RSSMB, s.Threads = SpreadOf(cpu), SpreadOf(rss), SpreadOf(threads)
	if len(dbCPU) > 0 {
		db := SpreadOf(dbCPU)
		s.DatabaseCPUPct = &db
	}
	s.Profile, s.ClientProfile = MergeProfiles(profiles), MergeProfiles(clientProfiles)
	for name, vals := range numbers {
		if s.Numbers == nil {
			s.Numbers = map[string]Spread{}
		}
		s.Numbers[name] = SpreadOf(vals)
	}

	var tagOrder []string
	for _, c := range cells {
		for _, t := range c.Tags {
			if !slices.Contains(tagOrder, t.Tag) {
				tagOrder = append(tagOrder, t.Tag)
			}
		}
	}
	for _, tag := range tagOrder {
		ts, err := summariseTag(tag, cells)
		if err != nil {
			return s, fmt.Errorf("%s %s %s: %w", contender, level, tag, err)
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

// summariseTag is one tag over a group's repeats: its counts over every repeat, its merged
// histograms and spreads over those that ended well.
func summariseTag(tag string, cells []Cell) (TagSummary, error) {
	ts := TagSummary{Tag: tag, ErrKinds: map[string]int64{}}
	resp, svc := NewHistogram(), NewHistogram()
	var p99, p50, rps []float64
	for _, c := range cells {
		for _, t := range c.Tags {
			if t.Tag != tag {
				continue
			}
			ts.Sent += t.Sent
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
					return ts, err
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
	if ts.Sent > 0 {
		ts.ErrorPct = round3(float64(ts.Errors) / float64(ts.Sent) * 100)
	}
	if len(ts.ErrKinds) == 0 {
		ts.ErrKinds = nil
	}
	return ts, nil
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

// FormatSig3 writes a figure with three significant digits, or as an integer once it has
// more: "0.04", "6.20", "14.3", "2000".
func FormatSig3(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// FormatFigure writes a condition's figure: a whole number as one ("8", "2000"), any other
// with three significant digits ("0.04", "14.3").
func FormatFigure(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return FormatSig3(v)
}

// FormatPct writes an error rate: to a tenth, or two places under one tenth, so that a
// few errors in a million are not shown as none.
func FormatPct(p float64) string {
	switch {
	case p == 0:
		return "0 %"
	case p < 0.1:
		return fmt.Sprintf("%.2f %%", p)
	}
	return fmt.Sprintf("%.1f %%", p)
}

// FigureOf reads a named figure of a contender's summary at one level: p50, p90, p99, p999
// or mean of tag's merged response time, rps of tag, the server's rss_mb or cpu_pct, or one
// of the cells' numbers. A percentile is the merged histogram's, with the range of the
// repeats' own where the summary keeps one; the others are medians over repeats with their
// range. False when the summary has no such figure.
func FigureOf(s CellSummary, figure, tag string) (Spread, bool) {
	switch figure {
	case "rss_mb":
		return s.RSSMB, s.RSSMB.Median > 0
	case "cpu_pct":
		return s.CPUPct, s.CPUPct.Median > 0
	case "p50", "p90", "p99", "p999", "mean", "rps":
		for _, t := range s.Tags {
			if t.Tag != tag || t.Merged.Count == 0 {
				continue
			}
			merged := func(v float64, repeats Spread) Spread {
				if repeats.Max == 0 {
					return Spread{Median: v, Min: v, Max: v}
				}
				return Spread{Median: v, Min: repeats.Min, Max: repeats.Max, Pct: repeats.Pct}
			}
			switch figure {
			case "p50":
				return merged(t.Merged.P50, t.P50), true
			case "p90":
				return merged(t.Merged.P90, Spread{}), true
			case "p99":
				return merged(t.Merged.P99, t.P99), true
			case "p999":
				return merged(t.Merged.P999, Spread{}), true
			case "mean":
				return merged(t.Merged.Mean, Spread{}), true
			}
			return t.RPS, true
		}
		return Spread{}, false
	}
	sp, ok := s.Numbers[figure]
	return sp, ok
}
