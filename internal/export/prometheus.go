package export

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/golang/snappy"
	"github.com/prometheus/prometheus/prompb"

	"github.com/arena-lab/arena/internal/lab"
)

// RemoteWrite sends each cell to a Prometheus remote-write receiver (remote write 1.0: a
// prompb.WriteRequest, protobuf, snappy's block format), one request per cell. The latency
// goes as a native histogram; a receiver that refuses those (a Prometheus 2.x started
// without --enable-feature=native-histograms) gets classic buckets from then on.
type RemoteWrite struct {
	url     string
	client  *http.Client
	classic bool // the receiver refused native histograms
}

var _ lab.Exporter = (*RemoteWrite)(nil)

// NewRemoteWrite sends to url (e.g. http://127.0.0.1:9090/api/v1/write).
func NewRemoteWrite(url string) *RemoteWrite {
	return &RemoteWrite{url: url, client: &http.Client{Timeout: sendTimeout}}
}

func (r *RemoteWrite) Name() string { return KindPrometheus + " " + r.url }

// ExportCell sends the cell in one request.
func (r *RemoteWrite) ExportCell(ctx context.Context, c lab.CellExport) error {
	req, err := writeRequest(c, r.classic)
	if err != nil {
		return err
	}
	err = r.post(ctx, req)
	var refused *refusal
	if !r.classic && errors.As(err, &refused) && refused.refusesNative() {
		r.classic = true // e.g. "native histograms are disabled": the same cell, in classic buckets
		if req, err = writeRequest(c, true); err != nil {
			return err
		}
		return r.post(ctx, req)
	}
	return err
}

// post sends req, again after a pause when the receiver says it is overloaded or failed (a
// 5xx or 429, as the spec allows), at most three times in all.
func (r *RemoteWrite) post(ctx context.Context, req *prompb.WriteRequest) error {
	raw, err := req.Marshal()
	if err != nil {
		return fmt.Errorf("encoding the write request: %w", err)
	}
	body := snappy.Encode(nil, raw) // the block format, not the framed stream: the spec's
	for attempt := 0; ; attempt++ {
		err := r.postOnce(ctx, body)
		var refused *refusal
		if err == nil || !errors.As(err, &refused) || !refused.retryable() || attempt == 2 {
			return err
		}
		select {
		case <-time.After(time.Duration(500<<attempt) * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

func (r *RemoteWrite) postOnce(ctx context.Context, body []byte) error {
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	httpReq.Header.Set("Content-Encoding", "snappy")
	httpReq.Header.Set("Content-Type", "application/x-protobuf")
	httpReq.Header.Set("User-Agent", "arena")
	httpReq.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	resp, err := r.client.Do(httpReq)
	if err != nil {
		return fmt.Errorf("%w: %v", errUnreachable, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode/100 != 2 {
		return &refusal{status: resp.Status, code: resp.StatusCode, msg: strings.TrimSpace(string(msg))}
	}
	return nil
}

// refusal is a receiver's answer other than 2xx.
type refusal struct {
	status string
	code   int
	msg    string
}

func (e *refusal) Error() string { return fmt.Sprintf("the receiver answered %s: %s", e.status, e.msg) }

// retryable: a 5xx or 429, as the spec allows, but not a refusal of native histograms, which
// no retry changes.
func (e *refusal) retryable() bool {
	return (e.code/100 == 5 || e.code == http.StatusTooManyRequests) && !e.refusesNative()
}

// refusesNative: the receiver takes no native histograms ("native histograms are disabled").
func (e *refusal) refusesNative() bool {
	return strings.Contains(strings.ToLower(e.msg), "native histograms")
}

// writeRequest is the cell's series: per tag the latency histogram and the window gauges,
// then the server's gauges; classic sends the histogram as _bucket, _count and _sum series.
func writeRequest(c lab.CellExport, classic bool) (*prompb.WriteRequest, error) {
	windows, err := windowsOf(c)
	if err != nil {
		return nil, err
	}
	s := newSeriesSet(cellLabels(c))
	for _, w := range windows {
		ts := w.end.UnixMilli()
		tag := [2]string{labelTag, w.tag}
		for _, g := range w.gauges() {
			if g.ok {
				s.add(g.name, prompb.Sample{Value: g.value, Timestamp: ts}, tag)
			}
		}
		if classic {
			addClassic(s, w.total, ts, tag)
		} else {
			s.addHistogram(metricLatency, nativeOf(w.total, ts), tag)
		}
	}
	for _, sm := range c.Server {
		ts := sampleTime(c, sm).UnixMilli()
		for _, g := range serverGauges(sm) {
			s.add(g.name, prompb.Sample{Value: g.value, Timestamp: ts})
		}
	}
	return &prompb.WriteRequest{Timeseries: s.series}, nil
}

// addClassic adds a cumulative histogram as Prometheus' classic one: a _bucket series per
// bound (le), +Inf, _count and _sum.
func addClassic(s *seriesSet, b buckets, ts int64, tag [2]string) {
	for k, bound := range classicBounds {
		var n uint64
		if b.le != nil {
			n = b.le[k]
		}
		s.add(metricLatency+"_bucket", prompb.Sample{Value: float64(n), Timestamp: ts}, tag, [2]string{"le", strconv.FormatFloat(bound, 'g', -1, 64)})
	}
	s.add(metricLatency+"_bucket", prompb.Sample{Value: float64(b.count), Timestamp: ts}, tag, [2]string{"le", "+Inf"})
	s.add(metricLatency+"_count", prompb.Sample{Value: float64(b.count), Timestamp: ts}, tag)
	s.add(metricLatency+"_sum", prompb.Sample{Value: b.sum, Timestamp: ts}, tag)
}

// nativeOf is b as a native histogram sample at ts (ms): a counter histogram (each sample
// the cell so far), its buckets as spans of non-empty ones and deltas between them.
func nativeOf(b buckets, ts int64) prompb.Histogram {
	h := prompb.Histogram{Count: &prompb.Histogram_CountInt{CountInt: b.count}, Sum: b.sum, Schema: Schema,
		ZeroCount: &prompb.Histogram_ZeroCountInt{ZeroCountInt: 0}, Timestamp: ts}
	var prev int64
	gap := int32(0)
	for i, n := range b.counts {
		if n == 0 {
			gap++
			continue
		}
		switch {
		case len(h.PositiveSpans) == 0:
			h.PositiveSpans = append(h.PositiveSpans, prompb.BucketSpan{Offset: b.first + int32(i), Length: 1})
		case gap > 0:
			h.PositiveSpans = append(h.PositiveSpans, prompb.BucketSpan{Offset: gap, Length: 1})
		default:
			h.PositiveSpans[len(h.PositiveSpans)-1].Length++
		}
		gap = 0
		h.PositiveDeltas = append(h.PositiveDeltas, int64(n)-prev)
		prev = int64(n)
	}
	return h
}

// seriesSet gathers samples by series, in the order series first appear.
type seriesSet struct {
	common [][2]string
	byKey  map[string]int
	series []prompb.TimeSeries
}

func newSeriesSet(common [][2]string) *seriesSet {
	return &seriesSet{common: common, byKey: map[string]int{}}
}

// get is the series of name with the common labels and extra, made when new; its labels
// sorted by name, as the spec requires.
func (s *seriesSet) get(name string, extra ...[2]string) *prompb.TimeSeries {
	all := append(append([][2]string{{"__name__", name}}, s.common...), extra...)
	slices.SortFunc(all, func(a, b [2]string) int { return strings.Compare(a[0], b[0]) })
	var key strings.Builder
	for _, l := range all {
		key.WriteString(l[0] + "\x00" + l[1] + "\x00")
	}
	i, ok := s.byKey[key.String()]
	if !ok {
		ts := prompb.TimeSeries{}
		for _, l := range all {
			ts.Labels = append(ts.Labels, prompb.Label{Name: l[0], Value: l[1]})
		}
		i = len(s.series)
		s.byKey[key.String()] = i
		s.series = append(s.series, ts)
	}
	return &s.series[i]
}

func (s *seriesSet) add(name string, sample prompb.Sample, extra ...[2]string) {
	ts := s.get(name, extra...)
	ts.Samples = append(ts.Samples, sample)
}

func (s *seriesSet) addHistogram(name string, h prompb.Histogram, extra ...[2]string) {
	ts := s.get(name, extra...)
	ts.Histograms = append(ts.Histograms, h)
}

// Notes say, for the run's notes, that the receiver took classic buckets only.
func (r *RemoteWrite) Notes() []string {
	if !r.classic {
		return nil
	}
	return []string{"export to " + r.Name() + ": the receiver refused native histograms, so the latency went as classic buckets (" +
		metricLatency + "_bucket, 100 µs to 60 s): its percentiles are only as fine as those"}
}
