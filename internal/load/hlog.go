package load

import (
	"bufio"
	"fmt"
	"os"
	"strings"
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
	// The start and base times are written as Java's HdrHistogram writes them, to the
	// millisecond: the Go writer's own lines print whole seconds, so a reader put every
	// interval up to 999 ms early (FuzzHlogRoundTrip). A comment is one line.
	secs := fmt.Sprintf("%.3f (seconds since epoch)", float64(start.UnixMilli())/1000)
	for _, step := range []func() error{
		func() error { return lw.OutputComment(strings.NewReplacer("\r", " ", "\n", " ").Replace(comment)) },
		lw.OutputLogFormatVersion,
		func() error {
			return lw.OutputComment("[StartTime: " + secs + ", " + start.UTC().Format(time.RFC3339Nano) + "]")
		},
		func() error { return lw.OutputComment("[BaseTime: " + secs + "]") },
		lw.OutputLegend,
	} {
		if err := step(); err != nil {
			f.Close()
			return nil, fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return h, nil
}

// Interval appends one window's histogram. A tag with a comma, a space or a control
// character is refused: readers end the tag at its first comma and the line at its break.
func (h *HlogFile) Interval(tag string, hist *hdrhistogram.Histogram) error {
	if strings.ContainsFunc(tag, func(r rune) bool { return r == ',' || r <= ' ' || r == 0x7f }) {
		return fmt.Errorf("tag %q: an .hlog tag holds no comma, space or control character", tag)
	}
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
