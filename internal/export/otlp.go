package export

import (
	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"

	"github.com/arena-lab/arena/internal/lab"
)

// OTLP sends each cell to an OpenTelemetry receiver over OTLP/HTTP (protobuf), through the
// official SDK's exporter. The SDK's instruments would stamp every point "now", at the
// cell's end; the cell's windows are built as metric data with their own times instead, and
// handed to the exporter's Export directly. The names are Prometheus' (docs/export.md), so
// that a Prometheus reading OTLP, and the dashboard, see the same series either way.
type OTLP struct {
	url string
	exp *otlpmetrichttp.Exporter
}

var _ lab.Exporter = (*OTLP)(nil)

// NewOTLP sends to url (e.g. http://127.0.0.1:4318/v1/metrics). Nothing is sent until the
// first cell.
func NewOTLP(url string) (*OTLP, error) {
	exp, err := otlpmetrichttp.New(context.Background(), otlpmetrichttp.WithEndpointURL(url),
		otlpmetrichttp.WithTimeout(sendTimeout),
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond,
			MaxInterval: 2 * time.Second, MaxElapsedTime: sendTimeout}))
	if err != nil {
		return nil, fmt.Errorf("--export %s=%s: %w", KindOTLP, url, err)
	}
	return &OTLP{url: url, exp: exp}, nil
}

func (o *OTLP) Name() string { return KindOTLP + " " + o.url }

// ExportCell sends the cell in one export.
func (o *OTLP) ExportCell(ctx context.Context, c lab.CellExport) error {
	rm, err := resourceMetrics(c)
	if err != nil {
		return err
	}
	return o.exp.Export(ctx, rm)
}

// Shutdown ends the exporter; it sends nothing after.
func (o *OTLP) Shutdown(ctx context.Context) error { return o.exp.Shutdown(ctx) }

// resourceMetrics is the cell as OTLP metric data: per tag a cumulative exponential
// histogram (one point per window, each the cell so far, from the load's start) and the
// window gauges (each point spanning its window); the server's gauges per probe sample.
func resourceMetrics(c lab.CellExport) (*metricdata.ResourceMetrics, error) {
	windows, err := windowsOf(c)
	if err != nil {
		return nil, err
	}
	common := cellLabels(c)
	gauges := map[string]*metricdata.Gauge[float64]{}
	var order []string
	gaugeOf := func(name string) *metricdata.Gauge[float64] {
		if gauges[name] == nil {
			gauges[name] = &metricdata.Gauge[float64]{}
			order = append(order, name)
		}
		return gauges[name]
	}
	hist := metricdata.ExponentialHistogram[float64]{Temporality: metricdata.CumulativeTemporality}
	for _, w := range windows {
		attrs := attributesOf(common, [2]string{labelTag, w.tag})
		for _, g := range w.gauges() {
			if g.ok {
				gaugeOf(g.name).DataPoints = append(gaugeOf(g.name).DataPoints,
					metricdata.DataPoint[float64]{Attributes: attrs, StartTime: w.start, Time: w.end, Value: g.value})
			}
		}
		hist.DataPoints = append(hist.DataPoints, exponentialOf(w.total, attrs, c.Start, w.end))
	}
	attrs := attributesOf(common)
	for _, sm := range c.Server {
		at := sampleTime(c, sm)
		for _, g := range serverGauges(sm) {
			gaugeOf(g.name).DataPoints = append(gaugeOf(g.name).DataPoints, metricdata.DataPoint[float64]{Attributes: attrs, StartTime: c.Start, Time: at, Value: g.value})
		}
	}
	metrics := []metricdata.Metrics{{Name: metricLatency, Unit: "s", Description: "latency from intended send times, the cell so far", Data: hist}}
	for _, name := range order {
		metrics = append(metrics, metricdata.Metrics{Name: name, Unit: units[name], Data: *gauges[name]})
	}
	return &metricdata.ResourceMetrics{
		Resource: resource.NewSchemaless(attribute.String("service.name", "arena")),
		ScopeMetrics: []metricdata.ScopeMetrics{{
			Scope:   instrumentation.Scope{Name: "github.com/arena-lab/arena/internal/export"},
			Metrics: metrics,
		}},
	}, nil
}

// units are the gauges' OTLP units, the ones Prometheus' OTLP translation reads back as the
// names' own suffixes.
var units = map[string]string{metricRPS: "", metricErrors: "1", metricP50: "s", metricP90: "s", metricP99: "s", metricMax: "s",
	metricCPU: "1", metricRSS: "By", metricThreads: "{thread}"}

func attributesOf(common [][2]string, extra ...[2]string) attribute.Set {
	var kvs []attribute.KeyValue
	for _, l := range append(append([][2]string(nil), common...), extra...) {
		kvs = append(kvs, attribute.String(l[0], l[1]))
	}
	return attribute.NewSet(kvs...)
}

// exponentialOf is b as an OTLP exponential histogram point: the same scale and buckets,
// OTLP's index one below Prometheus' (OTLP's bucket i holds (base^i, base^(i+1)]).
func exponentialOf(b buckets, attrs attribute.Set, start, end time.Time) metricdata.ExponentialHistogramDataPoint[float64] {
	p := metricdata.ExponentialHistogramDataPoint[float64]{Attributes: attrs, StartTime: start, Time: end,
		Count: b.count, Sum: b.sum, Scale: Schema,
		PositiveBucket: metricdata.ExponentialBucket{Offset: b.first - 1, Counts: b.counts}}
	if b.count > 0 {
		p.Min, p.Max = metricdata.NewExtrema(b.min), metricdata.NewExtrema(b.max)
	}
	return p
}
