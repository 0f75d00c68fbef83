// Package export sends each measured cell to a system of the user's: a Prometheus through
// remote write (prometheus.go), an OpenTelemetry receiver through OTLP (otlp.go). Both send
// the same figures under the same names (docs/export.md): per window and stream the
// requests/s, the error ratio, p50/p90/p99/max and the latency histogram, exponential; per
// probe sample the server's CPU, RSS and threads; every sample stamped with its window's
// own time, never the time it was sent.
package export

import (
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
)

// The kinds of --export KIND=URL.
const (
	KindPrometheus = "prometheus-rw"
	KindOTLP       = "otlp"
)

// Kinds lists them, for help and errors.
var Kinds = []string{KindPrometheus, KindOTLP}

// Target is one --export: where to, and how.
type Target struct {
	Kind string
	URL  *url.URL
}

// ParseTarget reads KIND=URL: a kind arena knows, an http(s) URL with a host. A URL without
// a path gets its kind's usual one (Prometheus' /api/v1/write, OTLP's /v1/metrics).
func ParseTarget(s string) (Target, error) {
	kind, raw, ok := strings.Cut(s, "=")
	if !ok || !slices.Contains(Kinds, kind) {
		return Target{}, fmt.Errorf("--export %q: give KIND=URL with KIND one of %s, e.g. %s=http://127.0.0.1:9090/api/v1/write",
			s, strings.Join(Kinds, ", "), KindPrometheus)
	}
	u, err := url.Parse(raw)
	if err == nil && u.User != nil {
		return Target{}, fmt.Errorf("--export %s: no credentials in the URL, please: it is printed and kept in the run's notes", kind)
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Target{}, fmt.Errorf("--export %s: %q is no http:// or https:// URL with a host", kind, raw)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = map[string]string{KindPrometheus: "/api/v1/write", KindOTLP: "/v1/metrics"}[kind]
	}
	return Target{Kind: kind, URL: u}, nil
}

// New is the exporter the target names.
func New(t Target) (lab.Exporter, error) {
	switch t.Kind {
	case KindPrometheus:
		return NewRemoteWrite(t.URL.String()), nil
	case KindOTLP:
		return NewOTLP(t.URL.String())
	}
	return nil, fmt.Errorf("export: no kind %q", t.Kind)
}

// sendTimeout bounds one request to a receiver: a cell's export waits no longer for an
// answer, and an unreachable receiver is said at the first cell.
const sendTimeout = 10 * time.Second

// Label names every series carries, beside the metric's name.
const (
	labelRun       = "run"
	labelScenario  = "scenario"
	labelLevel     = "level"
	labelContender = "contender"
	labelRepeat    = "repeat"
	labelTag       = "tag"
)

// cellLabels are the labels of every series of the cell: run, scenario, level, contender
// and repeat, in that order (each exporter sorts as its protocol wants).
func cellLabels(c lab.CellExport) [][2]string {
	return [][2]string{{labelRun, c.Run}, {labelScenario, c.Scenario}, {labelLevel, c.Level},
		{labelContender, c.Contender}, {labelRepeat, strconv.Itoa(c.Repeat)}}
}

// Metric names, the same in both protocols.
const (
	metricLatency    = "arena_latency_seconds"
	metricRPS        = "arena_rps"
	metricErrors     = "arena_error_ratio"
	metricP50        = "arena_latency_p50_seconds"
	metricP90        = "arena_latency_p90_seconds"
	metricP99        = "arena_latency_p99_seconds"
	metricMax        = "arena_latency_max_seconds"
	metricCPU        = "arena_server_cpu_ratio"
	metricRSS        = "arena_server_rss_bytes"
	metricThreads    = "arena_server_threads"
	nanosPerSecond   = 1e9
	bytesPerMebibyte = 1 << 20
)

// MetricNames are every name an exporter writes (the dashboard's test holds it to them).
var MetricNames = []string{metricLatency, metricRPS, metricErrors, metricP50, metricP90, metricP99, metricMax,
	metricCPU, metricRSS, metricThreads}

// window is one tag's window as both exporters send it: its own figures, and the cell's
// histogram so far (its windows added up to this one), which is what a Prometheus
// histogram is: a counter, whose last sample is the whole cell's.
type window struct {
	tag        string
	start, end time.Time
	own        *hdrhistogram.Histogram
	total      buckets
	// errors are the attempts that ended in the window without a correct answer, timeouts
	// among them; timeouts are those, whose waits own holds beside the correct answers.
	errors, timeouts int64
}

// gauge is a window's figure under a metric's name; ok is false where the window has none
// (no response: no latency; nothing ended: no error ratio).
type gauge struct {
	name  string
	value float64
	ok    bool
}

// gauges are the window's own figures: correct answers a second over its length, the share
// of the attempts that ended in it without a correct answer (each once, timeouts among them),
// as the findings read them (results.Window), and its percentiles in seconds, timeouts' waits
// included as the cell's histogram includes them.
func (w window) gauges() []gauge {
	n := w.own.TotalCount()
	secs := func(ns int64) float64 { return float64(ns) / nanosPerSecond }
	span := w.end.Sub(w.start).Seconds()
	read := results.Window{Count: n, Errors: w.errors, Timeouts: w.timeouts}
	errorRatio, ended := read.ErrorRatio()
	return []gauge{
		{metricRPS, float64(read.Answered()) / span, span > 0},
		{metricErrors, errorRatio, ended},
		{metricP50, secs(w.own.ValueAtQuantile(50)), n > 0},
		{metricP90, secs(w.own.ValueAtQuantile(90)), n > 0},
		{metricP99, secs(w.own.ValueAtQuantile(99)), n > 0},
		{metricMax, secs(w.own.Max()), n > 0},
	}
}

// windowsOf are the cell's windows per tag, in time order, each with the cell's histogram
// through it. A window shorter than minWindow (the load's last, cut where the load ended) is
// added into the one before it: its few responses over a few milliseconds would read as a
// spike of requests/s, and one that ends within the same millisecond as that one would be a
// second sample at one instant.
func windowsOf(c lab.CellExport) ([]window, error) {
	var out []window
	totals := map[string]*hdrhistogram.Histogram{}
	last := map[string]int{} // the tag's latest window in out
	for _, w := range c.Windows {
		total := totals[w.Tag]
		if total == nil {
			total = results.NewHistogram()
			totals[w.Tag] = total
		}
		if dropped := total.Merge(w.Hist); dropped > 0 {
			return nil, fmt.Errorf("tag %s: adding its windows dropped %d values", w.Tag, dropped)
		}
		if i, ok := last[w.Tag]; ok && (!w.End.After(out[i].end) || w.End.Sub(w.Start) < minWindow) {
			if dropped := out[i].own.Merge(w.Hist); dropped > 0 {
				return nil, fmt.Errorf("tag %s: adding its windows dropped %d values", w.Tag, dropped)
			}
			out[i].errors += w.Errors
			out[i].timeouts += w.Timeouts
			out[i].end = maxTime(out[i].end, w.End)
			out[i].total = bucketsOf(total)
			continue
		}
		own := results.NewHistogram()
		own.Merge(w.Hist) // a copy: the same layout drops nothing
		last[w.Tag] = len(out)
		out = append(out, window{tag: w.Tag, start: w.Start, end: w.End, own: own, total: bucketsOf(total), errors: w.Errors, timeouts: w.Timeouts})
	}
	return out, nil
}

// sampleTime is a probe sample's absolute time.
func sampleTime(c lab.CellExport, s results.Sample) time.Time {
	return c.Start.Add(time.Duration(s.T * float64(time.Second)))
}

// serverGauges are a probe sample's figures: CPU in cores (1 is one core busy), RSS in
// bytes, threads.
func serverGauges(s results.Sample) []gauge {
	return []gauge{{metricCPU, s.CPUPct / 100, true}, {metricRSS, s.RSSMB * bytesPerMebibyte, true},
		{metricThreads, float64(s.Threads), true}}
}

// Schema is the exponential histogram's resolution both protocols are sent: Prometheus'
// native schema 8 and OTLP's scale 8, the finest Prometheus takes, a bucket's bounds
// 2^(1/256) apart (0.27 %). The lab's HDR histograms hold 3 significant digits (a bucket
// 1/1024 to 1/2048 of its value wide), so each HDR bucket falls inside one exponential
// bucket, placed by its highest value: the value HDR itself reports a percentile as. A
// percentile read from the exponential histogram is thus within one exponential bucket,
// 0.27 %, of HDR's.
const Schema = 8

// Precision is the relative width of one exponential bucket at Schema: how far a percentile
// read back may lie from the lab's own.
var Precision = math.Exp2(1.0/(1<<Schema)) - 1

// buckets is a histogram of latencies in seconds on the exponential schema: counts[i] holds
// the values in (2^((first+i-1)/2^Schema), 2^((first+i)/2^Schema)], Prometheus' indexing
// (OTLP's index is one less), and the HDR histogram's count, sum, min and max.
type buckets struct {
	first    int32
	counts   []uint64
	le       []uint64 // classic buckets: the values at most classicBounds[i], for receivers without native histograms
	count    uint64
	sum      float64 // seconds: HDR keeps no sum, so its mean (of each bucket's middle) times the count
	min, max float64
}

// classicBounds are the upper bounds (seconds) of the classic histogram sent to a receiver
// that refuses native ones: 100 µs to a minute, 1-2.5-5 apart; +Inf is the count.
var classicBounds = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
	1, 2.5, 5, 10, 25, 60}

// bucketIndex is Prometheus' index of the bucket holding v seconds at Schema.
func bucketIndex(v float64) int32 {
	return int32(math.Ceil(math.Log2(v) * (1 << Schema)))
}

// bucketsOf maps h (ns) onto the exponential schema.
func bucketsOf(h *hdrhistogram.Histogram) buckets {
	b := buckets{count: uint64(h.TotalCount())}
	if b.count == 0 {
		return b
	}
	b.sum = h.Mean() * float64(h.TotalCount()) / nanosPerSecond
	b.min, b.max = float64(h.Min())/nanosPerSecond, float64(h.Max())/nanosPerSecond
	b.le = make([]uint64, len(classicBounds))
	for _, bar := range h.Distribution() {
		if bar.Count == 0 {
			continue
		}
		v := float64(bar.To) / nanosPerSecond
		for k, bound := range classicBounds {
			if v <= bound {
				b.le[k] += uint64(bar.Count)
			}
		}
		i := bucketIndex(v)
		if len(b.counts) == 0 {
			b.first = i
		}
		for int32(len(b.counts)) <= i-b.first {
			b.counts = append(b.counts, 0)
		}
		b.counts[i-b.first] += uint64(bar.Count)
	}
	return b
}

// errUnreachable wraps a receiver that could not be reached at all.
var errUnreachable = errors.New("cannot reach the receiver")

// minWindow is the shortest window sent on its own (windows are a second long but the last).
const minWindow = 500 * time.Millisecond

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
