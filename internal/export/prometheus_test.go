package export

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/arena-lab/arena/internal/export/prometheustest"
	"github.com/arena-lab/arena/internal/lab"
)

// receiver is a remote-write endpoint that decodes what it gets as the spec says (snappy's
// block format, then protobuf), answering with answer's status and text.
type receiver struct {
	mu       sync.Mutex
	requests []*prompb.WriteRequest
	headers  []http.Header
	answer   func(*prompb.WriteRequest) (int, string)
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	pb, err := snappy.Decode(nil, raw)
	if err != nil {
		http.Error(w, "snappy: "+err.Error(), http.StatusBadRequest)
		return
	}
	var req prompb.WriteRequest
	if err := req.Unmarshal(pb); err != nil {
		http.Error(w, "protobuf: "+err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.requests = append(rc.requests, &req)
	rc.headers = append(rc.headers, r.Header.Clone())
	rc.mu.Unlock()
	code, text := http.StatusNoContent, ""
	if rc.answer != nil {
		code, text = rc.answer(&req)
	}
	w.WriteHeader(code)
	_, _ = io.WriteString(w, text)
}

func labelsOf(ts prompb.TimeSeries) map[string]string {
	m := map[string]string{}
	for _, l := range ts.Labels {
		m[l.Name] = l.Value
	}
	return m
}

// What a cell sends: the spec's headers; every series with the cell's labels, sorted; each
// window's gauges at the window's own end; the latency as a native histogram counting the
// cell so far; the server's gauges at the probe's times.
func TestRemoteWriteSendsTheCellsWindowsAsTheSpecSays(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	c := testCell(t)
	if err := NewRemoteWrite(srv.URL+"/api/v1/write").ExportCell(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if len(rc.requests) != 1 {
		t.Fatalf("%d requests; want one per cell", len(rc.requests))
	}
	h := rc.headers[0]
	if h.Get("Content-Encoding") != "snappy" || h.Get("Content-Type") != "application/x-protobuf" || h.Get("X-Prometheus-Remote-Write-Version") != "0.1.0" {
		t.Fatalf("headers %v", h)
	}
	names := map[string]int{}
	for _, ts := range rc.requests[0].Timeseries {
		l := labelsOf(ts)
		names[l["__name__"]]++
		if !slices.IsSortedFunc(ts.Labels, func(a, b prompb.Label) int { return strings.Compare(a.Name, b.Name) }) {
			t.Fatalf("labels not sorted: %v", ts.Labels)
		}
		if l["run"] != c.Run || l["scenario"] != "isolation" || l["level"] != "seed" || l["contender"] != "go-nethttp" || l["repeat"] != "2" {
			t.Fatalf("labels %v", l)
		}
		checkSeries(t, c, ts, l)
	}
	for _, n := range MetricNames {
		want := 2 // one series per tag
		if strings.HasPrefix(n, "arena_server_") {
			want = 1
		}
		if names[n] != want {
			t.Errorf("%s: %d series; want %d (all: %v)", n, names[n], want, names)
		}
	}
}

// checkSeries holds one series to the cell: timestamps, values, histograms.
func checkSeries(t *testing.T, c lab.CellExport, ts prompb.TimeSeries, l map[string]string) {
	t.Helper()
	var windows []lab.ExportWindow
	for _, w := range c.Windows {
		if w.Tag == l["tag"] {
			windows = append(windows, w)
		}
	}
	switch name := l["__name__"]; {
	case strings.HasPrefix(name, "arena_server_"):
		if len(ts.Samples) != len(c.Server) || ts.Samples[0].Timestamp != c.Start.Add(250*time.Millisecond).UnixMilli() {
			t.Fatalf("%s: %d samples from %d; want %d from the load's start + 250 ms", name, len(ts.Samples), ts.Samples[0].Timestamp, len(c.Server))
		}
		if name == metricRSS && ts.Samples[0].Value != 100*(1<<20) || name == metricCPU && ts.Samples[0].Value != 0.5 {
			t.Fatalf("%s: %v", name, ts.Samples[0])
		}
	case name == metricLatency:
		if len(ts.Histograms) != len(windows) || len(ts.Samples) != 0 {
			t.Fatalf("%s %s: %d histograms, %d samples; want %d histograms", name, l["tag"], len(ts.Histograms), len(ts.Samples), len(windows))
		}
		var cum uint64
		for i, h := range ts.Histograms {
			cum += uint64(windows[i].Hist.TotalCount())
			if h.Timestamp != windows[i].End.UnixMilli() || h.GetCountInt() != cum || h.Schema != Schema || bucketSum(h) != cum {
				t.Fatalf("%s %s histogram %d: at %d, count %d, buckets %d, schema %d; want at %d, %d values", name, l["tag"], i,
					h.Timestamp, h.GetCountInt(), bucketSum(h), h.Schema, windows[i].End.UnixMilli(), cum)
			}
		}
	default:
		if len(ts.Samples) != len(windows) {
			t.Fatalf("%s %s: %d samples; want one per window, %d", name, l["tag"], len(ts.Samples), len(windows))
		}
		for i, s := range ts.Samples {
			w := windows[i]
			if s.Timestamp != w.End.UnixMilli() {
				t.Fatalf("%s %s sample %d at %d; want the window's end %d", name, l["tag"], i, s.Timestamp, w.End.UnixMilli())
			}
			want := map[string]float64{
				metricP99:    float64(w.Hist.ValueAtQuantile(99)) / 1e9,
				metricRPS:    float64(w.Hist.TotalCount()) / w.End.Sub(w.Start).Seconds(),
				metricErrors: float64(w.Errors) / float64(w.Errors+w.Hist.TotalCount()),
			}
			if v, ok := want[name]; ok && math.Abs(s.Value-v) > 1e-12*math.Abs(v) {
				t.Fatalf("%s %s window %d: %v; want %v", name, l["tag"], i, s.Value, v)
			}
		}
	}
}

// bucketSum adds a native histogram's buckets back up from its deltas.
func bucketSum(h prompb.Histogram) uint64 {
	var sum, cur int64
	for _, d := range h.PositiveDeltas {
		cur += d
		sum += cur
	}
	return uint64(sum)
}

// A receiver that refuses native histograms (Prometheus 2.x without its feature flag) gets
// the same cell again in classic buckets, and later cells in classic buckets at once.
func TestRemoteWriteFallsBackToClassicBuckets(t *testing.T) {
	rc := &receiver{answer: func(req *prompb.WriteRequest) (int, string) {
		for _, ts := range req.Timeseries {
			if len(ts.Histograms) > 0 {
				return http.StatusBadRequest, "native histograms are disabled"
			}
		}
		return http.StatusNoContent, ""
	}}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	rw := NewRemoteWrite(srv.URL + "/api/v1/write")
	for range 2 {
		if err := rw.ExportCell(context.Background(), testCell(t)); err != nil {
			t.Fatal(err)
		}
	}
	if len(rc.requests) != 3 {
		t.Fatalf("%d requests; want the refused one, its classic form, then the next cell's classic form", len(rc.requests))
	}
	buckets := 0
	for _, ts := range rc.requests[2].Timeseries {
		l := labelsOf(ts)
		if l["__name__"] == metricLatency+"_bucket" {
			buckets++
		}
		if l["__name__"] == metricLatency+"_bucket" && l["le"] == "+Inf" && l["tag"] == "instant" {
			if got := ts.Samples[len(ts.Samples)-1].Value; got != 7500 {
				t.Fatalf("+Inf bucket at the cell's end: %v; want all 7500 values", got)
			}
		}
	}
	if buckets != 2*(len(classicBounds)+1) {
		t.Fatalf("%d _bucket series; want %d per tag", buckets, len(classicBounds)+1)
	}
	if notes := rw.Notes(); len(notes) != 1 || !strings.Contains(notes[0], "refused native histograms") {
		t.Fatalf("notes %q; want the classic buckets said", notes)
	}
}

// A receiver nobody listens at is said at the first cell, with its URL.
func TestRemoteWriteSaysAnUnreachableReceiver(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s/api/v1/write", l.Addr())
	l.Close()
	err = NewRemoteWrite(url).ExportCell(context.Background(), testCell(t))
	if err == nil || !strings.Contains(err.Error(), "cannot reach the receiver") || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("%v; want it to say the receiver cannot be reached", err)
	}
}

// Into a real Prometheus (Debian's, its remote-write receiver on, native histograms on): the
// cell's series are queryable, each window's p99 as sent, and the cell's p99 from the native
// histogram within its precision of the cell's own HDR p99.
func TestRemoteWriteIntoPrometheus(t *testing.T) {
	prom := prometheustest.Start(t, true)
	c := testCell(t)
	if err := NewRemoteWrite(prom.WriteURL()).ExportCell(context.Background(), c); err != nil {
		t.Fatalf("%v\nprometheus said:\n%s", err, prom.Log())
	}
	sel := fmt.Sprintf(`{run=%q,contender="go-nethttp",level="seed",repeat="2",tag="instant"}`, c.Run)
	end := c.Windows[2].End
	hdr := totalOf(t, c, "instant")
	if n := prom.One(t, "histogram_count(arena_latency_seconds"+sel+")", end); n != float64(hdr.TotalCount()) {
		t.Fatalf("histogram_count %v; the cell holds %d", n, hdr.TotalCount())
	}
	for _, q := range []float64{0.5, 0.99} {
		got := prom.One(t, fmt.Sprintf("histogram_quantile(%v, arena_latency_seconds%s)", q, sel), end)
		want := float64(hdr.ValueAtQuantile(q*100)) / 1e9
		if math.Abs(got-want) > Precision*want {
			t.Errorf("p%v: Prometheus %.9f s, HDR %.9f s: more than %.2f %% apart", q*100, got, want, Precision*100)
		}
		t.Logf("p%v: Prometheus %.6f ms, HDR %.6f ms", q*100, got*1e3, want*1e3)
	}
	w := c.Windows[1]
	if got, want := prom.One(t, "arena_latency_p99_seconds"+sel, w.End), float64(w.Hist.ValueAtQuantile(99))/1e9; got != want {
		t.Fatalf("window p99 %v; sent %v", got, want)
	}
	if got := prom.One(t, fmt.Sprintf(`arena_server_threads{run=%q}`, c.Run), c.Start.Add(time.Second)); got != 23 {
		t.Fatalf("threads at 1 s: %v; sent 23", got)
	}
}

// A Prometheus without native histograms takes the classic buckets, and
// histogram_quantile over them still finds the cell's p99 within a classic bucket.
func TestRemoteWriteIntoPrometheusWithoutNativeHistograms(t *testing.T) {
	prom := prometheustest.Start(t, false)
	c := testCell(t)
	if err := NewRemoteWrite(prom.WriteURL()).ExportCell(context.Background(), c); err != nil {
		t.Fatalf("%v\nprometheus said:\n%s", err, prom.Log())
	}
	sel := fmt.Sprintf(`{run=%q,tag="instant"}`, c.Run)
	end := c.Windows[2].End
	if n := prom.One(t, "arena_latency_seconds_count"+sel, end); n != 7500 {
		t.Fatalf("_count %v; want 7500", n)
	}
	got := prom.One(t, "histogram_quantile(0.99, arena_latency_seconds_bucket"+sel+")", end)
	want := float64(totalOf(t, c, "instant").ValueAtQuantile(99)) / 1e9
	i, _ := slices.BinarySearch(classicBounds, want)
	if i == 0 || i == len(classicBounds) || got < classicBounds[i-1] || got > classicBounds[i] {
		t.Fatalf("classic p99 %v s; HDR's %v s lies in (%v, %v]", got, want, classicBounds[max(i-1, 0)], classicBounds[min(i, len(classicBounds)-1)])
	}
}
