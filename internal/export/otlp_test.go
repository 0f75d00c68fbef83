package export

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	metricpb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/arena-lab/arena/internal/lab"
)

// otlpReceiver is an OTLP/HTTP metrics endpoint made of the collector's protocol messages:
// it decodes each export request and answers as the protocol says.
type otlpReceiver struct {
	mu       sync.Mutex
	requests []*colmetricpb.ExportMetricsServiceRequest
}

func (rc *otlpReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil || r.URL.Path != "/v1/metrics" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, fmt.Sprintf("path %s, type %s, %v", r.URL.Path, r.Header.Get("Content-Type"), err), http.StatusBadRequest)
		return
	}
	var req colmetricpb.ExportMetricsServiceRequest
	if err := proto.Unmarshal(raw, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.requests = append(rc.requests, &req)
	rc.mu.Unlock()
	out, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func attrsOf(kvs []*commonpb.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value.GetStringValue()
	}
	return m
}

// What a cell sends over OTLP: every name, each point with the cell's attributes and its
// window's own times; the latency as a cumulative exponential histogram from the load's
// start whose last point holds the whole cell.
func TestOTLPSendsTheCellsWindowsWithTheirOwnTimes(t *testing.T) {
	rc := &otlpReceiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	target, err := ParseTarget("otlp=" + srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	exp, err := New(target)
	if err != nil {
		t.Fatal(err)
	}
	c := testCell(t)
	if err := exp.ExportCell(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	if len(rc.requests) != 1 || len(rc.requests[0].ResourceMetrics) != 1 || len(rc.requests[0].ResourceMetrics[0].ScopeMetrics) != 1 {
		t.Fatalf("requests %v; want one, of one resource and one scope", rc.requests)
	}
	seen := map[string]bool{}
	for _, m := range rc.requests[0].ResourceMetrics[0].ScopeMetrics[0].Metrics {
		seen[m.Name] = true
		switch d := m.Data.(type) {
		case *metricpb.Metric_ExponentialHistogram:
			checkExponential(t, c, d.ExponentialHistogram)
		case *metricpb.Metric_Gauge:
			checkGauge(t, c, m.Name, d.Gauge)
		default:
			t.Fatalf("%s: %T", m.Name, m.Data)
		}
	}
	for _, n := range MetricNames {
		if !seen[n] {
			t.Errorf("no %s (sent: %v)", n, seen)
		}
	}
}

func checkExponential(t *testing.T, c lab.CellExport, h *metricpb.ExponentialHistogram) {
	t.Helper()
	if h.AggregationTemporality != metricpb.AggregationTemporality_AGGREGATION_TEMPORALITY_CUMULATIVE || len(h.DataPoints) != len(c.Windows) {
		t.Fatalf("temporality %v, %d points; want cumulative, one per window (%d)", h.AggregationTemporality, len(h.DataPoints), len(c.Windows))
	}
	last := map[string]*metricpb.ExponentialHistogramDataPoint{}
	for _, p := range h.DataPoints {
		a := attrsOf(p.Attributes)
		if a["run"] != c.Run || a["contender"] != c.Contender || a["level"] != c.Level || a["repeat"] != "2" || a["scenario"] != c.Scenario {
			t.Fatalf("attributes %v", a)
		}
		var n uint64
		for _, k := range p.Positive.BucketCounts {
			n += k
		}
		if p.Scale != Schema || n != p.Count || p.StartTimeUnixNano != uint64(c.Start.UnixNano()) {
			t.Fatalf("point: scale %d, buckets %d of count %d, start %d; want scale 8, all, from %d", p.Scale, n, p.Count, p.StartTimeUnixNano, c.Start.UnixNano())
		}
		last[a["tag"]] = p
	}
	for tag, p := range last {
		total := totalOf(t, c, tag)
		var end uint64
		for _, w := range c.Windows {
			if w.Tag == tag {
				end = uint64(w.End.UnixNano())
			}
		}
		if p.Count != uint64(total.TotalCount()) || p.TimeUnixNano != end || math.Abs(p.GetMax()-float64(total.Max())/1e9) > 1e-12 {
			t.Fatalf("%s: the last point counts %d at %d, max %v; the cell %d, ending %d, max %v", tag, p.Count, p.TimeUnixNano, p.GetMax(),
				total.TotalCount(), end, float64(total.Max())/1e9)
		}
	}
}

func checkGauge(t *testing.T, c lab.CellExport, name string, g *metricpb.Gauge) {
	t.Helper()
	if strings.HasPrefix(name, "arena_server_") {
		if len(g.DataPoints) != len(c.Server) || g.DataPoints[3].TimeUnixNano != uint64(c.Start.Add(1e9).UnixNano()) {
			t.Fatalf("%s: %d points, the 4th at %d; want %d, the 4th a second after the load's start", name, len(g.DataPoints), g.DataPoints[3].TimeUnixNano, len(c.Server))
		}
		return
	}
	for _, p := range g.DataPoints {
		tag := attrsOf(p.Attributes)["tag"]
		match := false
		for _, w := range c.Windows {
			if w.Tag == tag && p.TimeUnixNano == uint64(w.End.UnixNano()) && p.StartTimeUnixNano == uint64(w.Start.UnixNano()) {
				match = true
				if name == metricP99 && p.GetAsDouble() != float64(w.Hist.ValueAtQuantile(99))/1e9 {
					t.Fatalf("p99 of %s's window at %s: %v; want %v", tag, w.End, p.GetAsDouble(), float64(w.Hist.ValueAtQuantile(99))/1e9)
				}
			}
		}
		if !match {
			t.Fatalf("%s: a point of %s from %d to %d is no window's", name, tag, p.StartTimeUnixNano, p.TimeUnixNano)
		}
	}
}

// An OTLP receiver nobody listens at is said at the first cell.
func TestOTLPSaysAnUnreachableReceiver(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := fmt.Sprintf("http://%s/v1/metrics", l.Addr())
	l.Close()
	exp, err := NewOTLP(url)
	if err != nil {
		t.Fatal(err)
	}
	if err := exp.ExportCell(context.Background(), testCell(t)); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("%v; want the refused connection said", err)
	}
}
