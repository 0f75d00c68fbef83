package export

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
)

// testCell is a cell of two tags, three windows each (the last cut 200 ms short, as a load's
// last is), with latencies drawn from a long-tailed distribution, errors in the second
// window, and the server's probe samples at 4 Hz. It starts a minute ago: a receiver takes
// it as recent.
func testCell(t *testing.T) lab.CellExport {
	t.Helper()
	start := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	c := lab.CellExport{Run: "20261127-000000-isolation", Scenario: "isolation", Level: "seed", Contender: "go-nethttp", Repeat: 2, Start: start}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, tag := range []string{"instant", "delayed"} {
		base := map[string]float64{"instant": 200e3, "delayed": 10e6}[tag] // ns
		for k := range 3 {
			h := results.NewHistogram()
			for range 2000 + 500*k {
				v := base * math.Exp(rng.NormFloat64()*0.8)
				if rng.IntN(100) == 0 {
					v *= 30 // a tail
				}
				if err := h.RecordValue(int64(v)); err != nil {
					t.Fatal(err)
				}
			}
			end := start.Add(time.Duration(k+1) * time.Second)
			if k == 2 {
				end = end.Add(-200 * time.Millisecond)
			}
			c.Windows = append(c.Windows, lab.ExportWindow{Tag: tag, Start: start.Add(time.Duration(k) * time.Second), End: end,
				Hist: h, Errors: int64(map[int]int{1: 7}[k])})
		}
	}
	for i := range 11 {
		c.Server = append(c.Server, results.Sample{T: 0.25 * float64(i+1), CPUPct: 50 + float64(i), RSSMB: 100, Threads: int32(20 + i)})
	}
	return c
}

// totalOf adds up a tag's windows: the cell's histogram of that tag.
func totalOf(t *testing.T, c lab.CellExport, tag string) *hdrhistogram.Histogram {
	t.Helper()
	h := results.NewHistogram()
	for _, w := range c.Windows {
		if w.Tag == tag && h.Merge(w.Hist) > 0 {
			t.Fatal("dropped")
		}
	}
	return h
}

// quantileOf reads q (0–1) off exponential buckets as Prometheus does: the bucket where the
// rank falls, interpolated linearly within it.
func quantileOf(b buckets, q float64) float64 {
	rank := q * float64(b.count)
	var seen float64
	for i, n := range b.counts {
		if n == 0 {
			continue
		}
		if seen+float64(n) >= rank {
			idx := float64(b.first + int32(i))
			lower, upper := math.Exp2((idx-1)/(1<<Schema)), math.Exp2(idx/(1<<Schema))
			return lower + (upper-lower)*(rank-seen)/float64(n)
		}
		seen += float64(n)
	}
	return math.NaN()
}

// The exponential buckets keep every value and each percentile within one bucket (0.27 %) of
// HDR's own, at ranks where Prometheus' rank and HDR's agree.
func TestBucketsKeepHDRsPercentilesWithinOneBucket(t *testing.T) {
	c := testCell(t)
	h := totalOf(t, c, "instant")
	b := bucketsOf(h)
	var sum uint64
	for _, n := range b.counts {
		sum += n
	}
	if sum != uint64(h.TotalCount()) || b.count != sum {
		t.Fatalf("buckets hold %d values, count %d; the histogram %d", sum, b.count, h.TotalCount())
	}
	if b.le[len(b.le)-1] != b.count {
		t.Fatalf("classic buckets: %d at most 60 s; want all %d", b.le[len(b.le)-1], b.count)
	}
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		hdr := float64(h.ValueAtQuantile(q*100)) / 1e9
		got := quantileOf(b, q)
		if math.Abs(got-hdr) > Precision*hdr {
			t.Errorf("p%v: %.9f s from the exponential buckets, %.9f s from HDR: more than %.2f %% apart", q*100, got, hdr, Precision*100)
		}
	}
	if Precision < 0.0027 || Precision > 0.0028 {
		t.Fatalf("precision %v; schema 8 is 0.27 %%", Precision)
	}
}

// A last window shorter than half a second (cut where the load ended) is added into the one
// before it, which then ends where it did: no spike of requests/s, no two samples at one
// instant, and no value lost.
func TestWindowsOfAddsAShortLastWindowIntoTheOneBefore(t *testing.T) {
	c := testCell(t)
	last := c.Windows[2]
	extra := results.NewHistogram()
	_ = extra.RecordValue(5e6)
	c.Windows = append(c.Windows[:3:3], lab.ExportWindow{Tag: "instant", Start: last.End, End: last.End.Add(100 * time.Millisecond), Hist: extra, Errors: 2})
	ws, err := windowsOf(c)
	if err != nil {
		t.Fatal(err)
	}
	var instant []window
	for _, w := range ws {
		if w.tag == "instant" {
			instant = append(instant, w)
		}
	}
	if len(instant) != 3 {
		t.Fatalf("%d instant windows; want 3", len(instant))
	}
	w := instant[2]
	if !w.end.Equal(last.End.Add(100 * time.Millisecond)) {
		t.Fatalf("the last window ends at %s; want the short one's end, %s", w.end, last.End.Add(100*time.Millisecond))
	}
	if w.own.TotalCount() != last.Hist.TotalCount()+1 || w.errors != 2 || w.total.count != uint64(totalOf(t, c, "instant").TotalCount()) {
		t.Fatalf("the last window holds %d values, %d errors, the cell %d; want %d, 2, %d", w.own.TotalCount(), w.errors, w.total.count,
			last.Hist.TotalCount()+1, totalOf(t, c, "instant").TotalCount())
	}
	for i := 1; i < len(instant); i++ {
		if !instant[i].end.After(instant[i-1].end) || instant[i].total.count <= instant[i-1].total.count {
			t.Fatalf("window %d: ends %s after %s, cell so far %d after %d", i, instant[i].end, instant[i-1].end, instant[i].total.count, instant[i-1].total.count)
		}
	}
}

func TestParseTarget(t *testing.T) {
	for _, tc := range []struct{ in, url, err string }{
		{"prometheus-rw=http://127.0.0.1:9090", "http://127.0.0.1:9090/api/v1/write", ""},
		{"prometheus-rw=https://mimir.example/api/v1/push", "https://mimir.example/api/v1/push", ""},
		{"otlp=http://localhost:4318", "http://localhost:4318/v1/metrics", ""},
		{"influx=http://127.0.0.1:8086", "", "KIND one of prometheus-rw, otlp"},
		{"http://127.0.0.1:9090", "", "KIND=URL"},
		{"otlp=127.0.0.1:4318", "", "no http:// or https:// URL"},
		{"otlp=ftp://127.0.0.1/x", "", "no http:// or https:// URL"},
		{"otlp=http://user:pw@127.0.0.1:4318", "", "no credentials"},
	} {
		got, err := ParseTarget(tc.in)
		switch {
		case tc.err == "" && (err != nil || got.URL.String() != tc.url):
			t.Errorf("%s: %v, %v; want %s", tc.in, got.URL, err, tc.url)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: %v; want an error saying %q", tc.in, err, tc.err)
		}
	}
}

// A window's timeouts are latencies, never answers, and a failure counted once: 90 correct
// answers and 10 timeouts in a second read 90 requests/s and 10 % errors, as the findings
// read a cell (RPS of correct answers, errors per attempt), not 100/s and 10/110.
func TestAWindowsTimeoutsAreFailuresCountedOnce(t *testing.T) {
	start := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	h := results.NewHistogram()
	for i := range 100 {
		v := int64(2e6) // a correct answer in 2 ms
		if i < 10 {
			v = 1e9 // a timeout, at the second it waited
		}
		if err := h.RecordValue(v); err != nil {
			t.Fatal(err)
		}
	}
	c := lab.CellExport{Start: start, Windows: []lab.ExportWindow{{Tag: "data", Start: start, End: start.Add(time.Second), Hist: h, Errors: 10, Timeouts: 10}}}
	ws, err := windowsOf(c)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, g := range ws[0].gauges() {
		if g.ok {
			got[g.name] = g.value
		}
	}
	if got[metricRPS] != 90 || math.Abs(got[metricErrors]-0.10) > 1e-12 {
		t.Errorf("%v requests/s, error ratio %v; want 90 and 0.10", got[metricRPS], got[metricErrors])
	}
	if math.Abs(got[metricP99]-1) > 0.001 {
		t.Errorf("p99 %v s; want the timeouts' wait, 1 s: a timeout stays in the latency", got[metricP99])
	}
}
