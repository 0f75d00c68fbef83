package load

import (
	"bufio"
	"fmt"
	"os"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// HlogFile writes interval histograms in HdrHistogram's standard log format (.hlog), one
// tagged line per tag per window, timestamps relative to the run's start, values in ns:
// HistogramLogAnalyzer and HdrHistogram's own tools read it as it is.
type HlogFile struct {
	mu sync.Mutex
	f  *os.File
	b  *bufio.Writer
	lw *hdrhistogram.HistogramLogWriter
}

// CreateHlog creates path and writes the log's header for a run that began at start.
func CreateHlog(path string, start time.Time, comment string) (*HlogFile, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	b := bufio.NewWriter(f)
	lw := hdrhistogram.NewHistogramLogWriter(b)
	lw.SetBaseTime(start.UnixMilli())
	h := &HlogFile{f: f, b: b, lw: lw}
	for _, step := range []func() error{
		func() error { return lw.OutputComment(comment) },
		lw.OutputLogFormatVersion,
		func() error { return lw.OutputStartTime(start.UnixMilli()) },
		func() error { return lw.OutputBaseTime(start.UnixMilli()) },
		lw.OutputLegend,
	} {
		if err := step(); err != nil {
			f.Close()
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return h, nil
}

// Interval appends one window's histogram.
func (h *HlogFile) Interval(tag string, hist *hdrhistogram.Histogram) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	hist.SetTag(tag)
	return h.lw.OutputIntervalHistogram(hist)
}

// Close flushes and closes the file.
func (h *HlogFile) Close() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.b.Flush(); err != nil {
		h.f.Close()
		return err
	}
	return h.f.Close()
}
