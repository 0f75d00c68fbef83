package results

import (
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

func TestSpreadOf(t *testing.T) {
	tests := []struct {
		name string
		in   []float64
		want Spread
	}{
		{"empty", nil, Spread{}},
		{"empty slice", []float64{}, Spread{}},
		{"one value", []float64{42}, Spread{Median: 42, Min: 42, Max: 42, Pct: 0}},
		{"odd count", []float64{30, 10, 20}, Spread{Median: 20, Min: 10, Max: 30, Pct: 100}},
		{"even count", []float64{4, 1, 3, 2}, Spread{Median: 2.5, Min: 1, Max: 4, Pct: 120}},
		{"two close values", []float64{100, 105}, Spread{Median: 102.5, Min: 100, Max: 105, Pct: 4.878}},
		{"equal values", []float64{7, 7, 7}, Spread{Median: 7, Min: 7, Max: 7, Pct: 0}},
		{"zero median", []float64{0, 0, 5}, Spread{Median: 0, Min: 0, Max: 5, Pct: 0}},
		{"rounded to 3 decimals", []float64{1.23456, 1.23456}, Spread{Median: 1.235, Min: 1.235, Max: 1.235, Pct: 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.in)
			got := SpreadOf(tt.in)
			if got != tt.want {
				t.Fatalf("SpreadOf(%v) = %+v, want %+v", tt.in, got, tt.want)
			}
			if !slices.Equal(in, tt.in) {
				t.Errorf("SpreadOf reordered its input: %v → %v", in, tt.in)
			}
		})
	}
}

// hist records each value (a duration) count times.
func hist(t *testing.T, values map[time.Duration]int64) *hdrhistogram.Histogram {
	t.Helper()
	h := NewHistogram()
	for v, n := range values {
		if err := h.RecordValues(int64(v), n); err != nil {
			t.Fatal(err)
		}
	}
	return h
}

// tagOf is a Tag whose figures and encoded histograms come from resp (service = resp).
func tagOf(t *testing.T, name string, resp *hdrhistogram.Histogram, rps float64) Tag {
	t.Helper()
	enc, err := EncodeHist(resp)
	if err != nil {
		t.Fatal(err)
	}
	return Tag{
		TagStats: TagStats{Tag: name, Sent: resp.TotalCount(), Completed: resp.TotalCount(),
			Status: map[string]int64{"2xx": resp.TotalCount()}, Errors: map[string]int64{}},
		RPS: rps, Response: LatencyOf(resp), Service: LatencyOf(resp),
		ResponseHist: enc, ServiceHist: enc,
	}
}

func cell(contender, level string, repeat int, status string, tags ...Tag) Cell {
	return Cell{Contender: contender, Level: level, Repeat: repeat, Outcome: Outcome{Status: status}, Tags: tags}
}

func near(a, b, relTol float64) bool {
	return math.Abs(a-b) <= relTol*math.Max(math.Abs(a), math.Abs(b))
}

func TestLatencyOf(t *testing.T) {
	if got := LatencyOf(nil); got != (Latency{}) {
		t.Errorf("LatencyOf(nil) = %+v", got)
	}
	if got := LatencyOf(NewHistogram()); got != (Latency{}) {
		t.Errorf("LatencyOf(empty) = %+v", got)
	}
	// 1..1000 ms, one each: p50 ≈ 500 ms, p99 ≈ 990 ms, max ≈ 1 s.
	h := NewHistogram()
	for i := 1; i <= 1000; i++ {
		if err := h.RecordValue(int64(i) * int64(time.Millisecond)); err != nil {
			t.Fatal(err)
		}
	}
	l := LatencyOf(h)
	checks := []struct {
		name      string
		got, want float64
	}{
		{"min", l.Min, 1}, {"p50", l.P50, 500}, {"p90", l.P90, 900}, {"p99", l.P99, 990},
		{"p999", l.P999, 999}, {"max", l.Max, 1000}, {"mean", l.Mean, 500.5},
	}
	for _, c := range checks {
		if !near(c.got, c.want, 0.002) {
			t.Errorf("%s = %v ms, want ≈ %v", c.name, c.got, c.want)
		}
	}
	if l.Count != 1000 {
		t.Errorf("count = %d", l.Count)
	}
}

func TestEncodeDecodeHist(t *testing.T) {
	h := hist(t, map[time.Duration]int64{time.Millisecond: 10, 250 * time.Millisecond: 3})
	s, err := EncodeHist(h)
	if err != nil || s == "" {
		t.Fatalf("EncodeHist: %q, %v", s, err)
	}
	back, err := DecodeHist(s)
	if err != nil {
		t.Fatalf("DecodeHist: %v", err)
	}
	if LatencyOf(back) != LatencyOf(h) {
		t.Errorf("roundtrip: %+v, want %+v", LatencyOf(back), LatencyOf(h))
	}
	if s, err := EncodeHist(nil); s != "" || err != nil {
		t.Errorf("EncodeHist(nil) = %q, %v", s, err)
	}
	if e, err := DecodeHist(""); err != nil || e.TotalCount() != 0 {
		t.Errorf("DecodeHist(\"\") = %v, %v; want an empty histogram", e, err)
	}
	if _, err := DecodeHist("not a histogram"); err == nil {
		t.Errorf("DecodeHist of garbage succeeded")
	}
}

// Repeats combine by merging histograms: the merged p99 is the p99 of all the answers,
// not the mean of the repeats' p99s.
func TestSummariseMergesHistograms(t *testing.T) {
	// Repeat 1: 100 answers at 1 ms. Repeat 2: 95 at 1 ms and 5 at 100 ms (p99 100 ms).
	// Together: 195 at 1 ms and 5 at 100 ms, so 2.5 % are slow and the p99 is 100 ms,
	// while the mean of the two p99s is about 50 ms.
	h1 := hist(t, map[time.Duration]int64{time.Millisecond: 100})
	h2 := hist(t, map[time.Duration]int64{time.Millisecond: 95, 100 * time.Millisecond: 5})
	all := hist(t, map[time.Duration]int64{time.Millisecond: 195, 100 * time.Millisecond: 5})
	t1, t2 := tagOf(t, "instant", h1, 10), tagOf(t, "instant", h2, 10)

	sums, err := Summarise([]Cell{cell("c", "seed", 1, OutcomeOK, t1), cell("c", "seed", 2, OutcomeOK, t2)})
	if err != nil {
		t.Fatalf("Summarise: %v", err)
	}
	if len(sums) != 1 || len(sums[0].Tags) != 1 {
		t.Fatalf("Summarise = %+v, want one summary with one tag", sums)
	}
	ts := sums[0].Tags[0]
	if want := LatencyOf(all); ts.Merged != want {
		t.Errorf("Merged = %+v\nwant     %+v (one histogram of every answer)", ts.Merged, want)
	}
	if ts.Service != LatencyOf(all) {
		t.Errorf("Service = %+v, want %+v", ts.Service, LatencyOf(all))
	}
	avg := (t1.Response.P99 + t2.Response.P99) / 2
	if !near(ts.Merged.P99, 100, 0.01) || near(ts.Merged.P99, avg, 0.2) {
		t.Errorf("merged p99 %v ms: want ≈ 100 ms, not the mean of the repeats' p99s (%v ms)", ts.Merged.P99, avg)
	}
	if ts.Merged.Count != 200 {
		t.Errorf("merged count %d, want 200", ts.Merged.Count)
	}
	// The per-repeat spread is of the repeats' own p99s.
	if ts.P99.Min != t1.Response.P99 || ts.P99.Max != t2.Response.P99 || ts.P99.Median != round3(avg) {
		t.Errorf("P99 spread %+v from repeats %v and %v", ts.P99, t1.Response.P99, t2.Response.P99)
	}
	if sums[0].Repeats != 2 || !slices.Equal(sums[0].Outcomes, []string{OutcomeOK, OutcomeOK}) {
		t.Errorf("Repeats %d Outcomes %v", sums[0].Repeats, sums[0].Outcomes)
	}
	// Repeats 100 % apart in p99 are noisy.
	if !sums[0].Noisy || len(sums[0].NoisyWhy) != 1 || !strings.Contains(sums[0].NoisyWhy[0], "instant p99") {
		t.Errorf("Noisy %v %q, want noisy for instant p99", sums[0].Noisy, sums[0].NoisyWhy)
	}
}

func TestSummariseExcludesCrashedRepeats(t *testing.T) {
	ok1 := hist(t, map[time.Duration]int64{2 * time.Millisecond: 100})
	ok2 := hist(t, map[time.Duration]int64{2 * time.Millisecond: 100})
	// The crashed repeat's answers are all slow: were it merged, p99 would be 30 s.
	bad := hist(t, map[time.Duration]int64{30 * time.Second: 1000})
	c1 := cell("c", "seed", 1, OutcomeOK, tagOf(t, "instant", ok1, 10))
	c2 := cell("c", "seed", 2, OutcomeCrashed, tagOf(t, "instant", bad, 1))
	c3 := cell("c", "seed", 3, OutcomeOK, tagOf(t, "instant", ok2, 10))
	c1.Server.Summary = Usage{CPUPctMean: 50, RSSMBMax: 200, ThreadsMax: 30}
	c2.Server.Summary = Usage{CPUPctMean: 5, RSSMBMax: 900, ThreadsMax: 400}
	c3.Server.Summary = Usage{CPUPctMean: 52, RSSMBMax: 204, ThreadsMax: 30}

	sums, err := Summarise([]Cell{c1, c2, c3})
	if err != nil {
		t.Fatalf("Summarise: %v", err)
	}
	s := sums[0]
	if s.Repeats != 3 || !slices.Equal(s.Outcomes, []string{OutcomeOK, OutcomeCrashed, OutcomeOK}) {
		t.Errorf("Repeats %d Outcomes %v, want 3 with the crash listed", s.Repeats, s.Outcomes)
	}
	ts := s.Tags[0]
	if ts.Merged.Count != 200 || !near(ts.Merged.P99, 2, 0.01) {
		t.Errorf("merged %+v: the crashed repeat was merged", ts.Merged)
	}
	if ts.P99.Max > 3 || ts.RPS.Min != 10 {
		t.Errorf("p99 spread %+v, rps spread %+v: the crashed repeat counted", ts.P99, ts.RPS)
	}
	if s.CPUPct != (Spread{Median: 51, Min: 50, Max: 52, Pct: 3.922}) {
		t.Errorf("CPU spread %+v, want the two ok repeats only", s.CPUPct)
	}
	if s.RSSMB.Max != 204 || s.Threads.Max != 30 {
		t.Errorf("RSS %+v threads %+v: the crashed repeat counted", s.RSSMB, s.Threads)
	}
	if s.Noisy {
		t.Errorf("noisy because of the crashed repeat: %q", s.NoisyWhy)
	}
}

func TestSummariseNoisy(t *testing.T) {
	tests := []struct {
		name      string
		p99a      time.Duration
		p99b      time.Duration
		rpsA      float64
		rpsB      float64
		wantNoisy []string // substrings, one per reason
	}{
		{"close repeats", 100 * time.Millisecond, 105 * time.Millisecond, 10, 10.2, nil},
		{"p99 apart", 100 * time.Millisecond, 130 * time.Millisecond, 10, 10, []string{"instant p99 varies 26%"}},
		{"throughput apart", 100 * time.Millisecond, 100 * time.Millisecond, 10, 8, []string{"instant throughput varies 22%"}},
		{"both apart", 100 * time.Millisecond, 200 * time.Millisecond, 10, 5, []string{"instant p99", "instant throughput"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tagOf(t, "instant", hist(t, map[time.Duration]int64{tt.p99a: 100}), tt.rpsA)
			b := tagOf(t, "instant", hist(t, map[time.Duration]int64{tt.p99b: 100}), tt.rpsB)
			sums, err := Summarise([]Cell{cell("c", "l", 1, OutcomeOK, a), cell("c", "l", 2, OutcomeOK, b)})
			if err != nil {
				t.Fatal(err)
			}
			s := sums[0]
			if s.Noisy != (len(tt.wantNoisy) > 0) || len(s.NoisyWhy) != len(tt.wantNoisy) {
				t.Fatalf("Noisy %v %q, want %q", s.Noisy, s.NoisyWhy, tt.wantNoisy)
			}
			for i, w := range tt.wantNoisy {
				if !strings.Contains(s.NoisyWhy[i], w) {
					t.Errorf("NoisyWhy[%d] = %q, want it to contain %q", i, s.NoisyWhy[i], w)
				}
			}
		})
	}
}

func TestSummariseGroupsCountsAndClientBound(t *testing.T) {
	h := hist(t, map[time.Duration]int64{time.Millisecond: 10})
	withErrs := func(tag Tag, errs map[string]int64, status map[string]int64) Tag {
		tag.Errors, tag.Status = errs, status
		return tag
	}
	cells := []Cell{
		cell("a", "seed", 1, OutcomeOK,
			withErrs(tagOf(t, "instant", h, 10), map[string]int64{"timeout": 2}, map[string]int64{"2xx": 8, "5xx": 1}),
			tagOf(t, "delayed", h, 10)),
		cell("b", "seed", 1, OutcomeOK, tagOf(t, "instant", h, 10)),
		cell("a", "seed", 2, OutcomeOK,
			withErrs(tagOf(t, "instant", h, 10), map[string]int64{"timeout": 1, "refused": 4}, map[string]int64{"2xx": 9, "4xx": 2}),
			tagOf(t, "readiness", h, 10), tagOf(t, "delayed", h, 10)),
		cell("b", "seed", 2, OutcomeOK, tagOf(t, "instant", h, 10)),
		cell("a", "other", 1, OutcomeOK, tagOf(t, "instant", h, 10)),
	}
	cells[3].ClientBound = true
	sums, err := Summarise(cells)
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ c, l string }
	var got []key
	for _, s := range sums {
		got = append(got, key{s.Contender, s.Level})
	}
	if want := []key{{"a", "seed"}, {"b", "seed"}, {"a", "other"}}; !slices.Equal(got, want) {
		t.Fatalf("summaries %v, want %v (order of first appearance)", got, want)
	}
	a := sums[0]
	var tags []string
	for _, ts := range a.Tags {
		tags = append(tags, ts.Tag)
	}
	if want := []string{"instant", "delayed", "readiness"}; !slices.Equal(tags, want) {
		t.Errorf("tags %v, want %v", tags, want)
	}
	inst := a.Tags[0]
	if inst.Errors != 7 || inst.Non2xx != 3 {
		t.Errorf("instant errors %d non-2xx %d, want 7 and 3", inst.Errors, inst.Non2xx)
	}
	if inst.ErrKinds["timeout"] != 3 || inst.ErrKinds["refused"] != 4 || len(inst.ErrKinds) != 2 {
		t.Errorf("error kinds %v", inst.ErrKinds)
	}
	if a.Tags[1].ErrKinds != nil {
		t.Errorf("a tag without errors has error kinds %v", a.Tags[1].ErrKinds)
	}
	if a.Tags[2].Merged.Count != 10 {
		t.Errorf("a tag of one repeat only: merged count %d, want 10", a.Tags[2].Merged.Count)
	}
	if a.ClientBnd || !sums[1].ClientBnd || sums[2].ClientBnd {
		t.Errorf("client-bound: a %v b %v a/other %v; want only b", a.ClientBnd, sums[1].ClientBnd, sums[2].ClientBnd)
	}
}

func TestSummariseBadHistogram(t *testing.T) {
	tag := tagOf(t, "instant", hist(t, map[time.Duration]int64{time.Millisecond: 1}), 1)
	tag.ResponseHist = "garbage"
	_, err := Summarise([]Cell{cell("c", "seed", 1, OutcomeOK, tag)})
	if err == nil || !strings.Contains(err.Error(), "c seed instant") {
		t.Fatalf("Summarise with a broken histogram: %v", err)
	}
}

func TestSummariseEmpty(t *testing.T) {
	sums, err := Summarise(nil)
	if err != nil || len(sums) != 0 {
		t.Fatalf("Summarise(nil) = %v, %v", sums, err)
	}
}

func TestUsageOfWindowsAndIntegrates(t *testing.T) {
	s := []Sample{
		{T: 1, CPUPct: 50, UserPct: 40, SysPct: 10, RSSMB: 100, Threads: 10},
		{T: 2, CPUPct: 100, UserPct: 80, SysPct: 20, RSSMB: 200, Threads: 20},
		{T: 3, CPUPct: 0, RSSMB: 300, Threads: 5},
	}
	sum := UsageOf(s, 1.5, 2.5)
	if sum.Samples != 1 || sum.CPUPctMean != 100 || sum.RSSMBMax != 200 || sum.ThreadsMax != 20 {
		t.Fatalf("%+v", sum)
	}
	all := UsageOf(s, 0, 0)
	if all.UserSeconds != 0.8 || all.RSSMBMean != 200 {
		t.Fatalf("%+v", all)
	}
}

// An unresponsive cell ran (its figures count, as a crashed one's do) and reads bad.
func TestUnresponsiveRanAndReadsBad(t *testing.T) {
	if !Ran(OutcomeUnresponsive) || ToneOf(OutcomeUnresponsive) != Bad {
		t.Fatalf("Ran %v, tone %s", Ran(OutcomeUnresponsive), ToneOf(OutcomeUnresponsive))
	}
	for _, s := range []string{OutcomeInterrupted, OutcomeUnready, OutcomeError, OutcomeUnsupported, OutcomeSkipped} {
		if Ran(s) {
			t.Errorf("%s counts as run", s)
		}
	}
}

func TestSilenceLimit(t *testing.T) {
	for _, tt := range []struct{ timeout, want time.Duration }{
		{0, MinSilence}, {time.Second, MinSilence}, {10 * time.Second, 20 * time.Second}, {60 * time.Second, 2 * time.Minute},
	} {
		if got := SilenceLimit(tt.timeout); got != tt.want {
			t.Errorf("SilenceLimit(%s) = %s, want %s", tt.timeout, got, tt.want)
		}
	}
}

func TestFormatFaults(t *testing.T) {
	got := FormatFaults(map[string]int64{FaultLeaked: 1, "zz-new": 2, FaultLost: 3, FaultDuplicated: 0})
	if got != "3 lost, 1 leaked, 2 zz-new" {
		t.Fatalf("FormatFaults = %q", got)
	}
	if FormatFaults(nil) != "" {
		t.Fatal("no faults should read empty")
	}
}

// checked are figures that check deliveries.
type checked map[string]int64

func (checked) Kind() string                { return "checked" }
func (checked) Numbers() map[string]float64 { return nil }
func (c checked) Faults() map[string]int64  { return c }

// A cell keeps the positive faults its figures found; the summary sums them over every repeat
// the load ran in, and not over one it never finished.
func TestFaultsKeptAndSummed(t *testing.T) {
	cell := func(status string, faults checked) Cell {
		c := Cell{Contender: "x", Level: "l", Outcome: Outcome{Status: status}}
		if err := c.PutFigures(faults); err != nil {
			t.Fatal(err)
		}
		return c
	}
	clean := cell(OutcomeOK, checked{FaultLost: 0, FaultLeaked: -2})
	if clean.Faults != nil {
		t.Fatalf("no fault kept as %v", clean.Faults)
	}
	cells := []Cell{clean, cell(OutcomeOK, checked{FaultDuplicated: 2}), cell(OutcomeCrashed, checked{FaultDuplicated: 1, FaultLost: 4}),
		cell(OutcomeInterrupted, checked{FaultLost: 100})}
	sum, err := Summarise(cells)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{FaultDuplicated: 3, FaultLost: 4}; !maps.Equal(sum[0].Faults, want) || !sum[0].Faulty() {
		t.Fatalf("summary faults %v, want %v", sum[0].Faults, want)
	}
	if s, _ := Summarise(cells[:1]); s[0].Faulty() {
		t.Fatalf("a clean cell's summary is faulty: %v", s[0].Faults)
	}
}

// FigureOf reads every named figure from one place: merged percentiles with the repeats' own
// range where the summary keeps one, medians with their range otherwise.
func TestFigureOf(t *testing.T) {
	s := CellSummary{
		Tags: []TagSummary{{Tag: "data", Merged: Latency{Count: 10, P50: 20, P90: 30, P99: 40, P999: 50, Mean: 22},
			P50: Spread{Median: 21, Min: 19, Max: 23, Pct: 19}, P99: Spread{Median: 41, Min: 38, Max: 44},
			RPS: Spread{Median: 4000, Min: 3900, Max: 4100}}},
		RSSMB: Spread{Median: 300}, CPUPct: Spread{Median: 99},
		Numbers: map[string]Spread{"delivered_per_s": {Median: 7}},
	}
	for _, tt := range []struct {
		figure, tag string
		want        Spread
		ok          bool
	}{
		{"p50", "data", Spread{Median: 20, Min: 19, Max: 23, Pct: 19}, true},
		{"p90", "data", Spread{Median: 30, Min: 30, Max: 30}, true},
		{"p99", "data", Spread{Median: 40, Min: 38, Max: 44}, true},
		{"p999", "data", Spread{Median: 50, Min: 50, Max: 50}, true},
		{"mean", "data", Spread{Median: 22, Min: 22, Max: 22}, true},
		{"rps", "data", Spread{Median: 4000, Min: 3900, Max: 4100}, true},
		{"rss_mb", "", Spread{Median: 300}, true},
		{"cpu_pct", "", Spread{Median: 99}, true},
		{"delivered_per_s", "", Spread{Median: 7}, true},
		{"p99", "other", Spread{}, false},
		{"dropped", "", Spread{}, false},
	} {
		got, ok := FigureOf(s, tt.figure, tt.tag)
		if ok != tt.ok || got != tt.want {
			t.Errorf("FigureOf(%s, %s) = %+v, %v; want %+v, %v", tt.figure, tt.tag, got, ok, tt.want, tt.ok)
		}
	}
}

// A condition's figure reads as people write it: 0.04 % headroom is not 0.0400000000000625.
func TestFormatFigure(t *testing.T) {
	for v, want := range map[float64]string{8: "8", 2000: "2000", 1 - 0.9599999999999937: "0.04", 0.061999999999999761: "0.062", 14.2857: "14.3", 6.2: "6.20", 250.4: "250"} {
		if got := FormatFigure(v); got != want {
			t.Errorf("FormatFigure(%v) = %q, want %q", v, got, want)
		}
	}
}

// Not shown is no evidence either way: it reads neutral, as untested does, never good or bad.
func TestNotShownReadsNeutral(t *testing.T) {
	for _, w := range []string{ClaimNotShown, ClaimUntested, ClaimUntestedHere, ClaimHoldsWhereTested} {
		if tone := ToneOf(w); tone != Neutral {
			t.Errorf("%q reads %s, want neutral", w, tone)
		}
	}
	if ClaimNotShown != "not shown" || Untested(ClaimNotShown) {
		t.Errorf("not shown is measured, not untested: %q", ClaimNotShown)
	}
}
