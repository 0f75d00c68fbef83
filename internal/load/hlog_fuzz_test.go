package load

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/arena-lab/arena/internal/results"
)

// hlogTagOK is what a tag must be for an .hlog line to carry it: HdrHistogram's readers end
// the tag at the first comma and the line at its break.
func hlogTagOK(tag string) bool {
	return !strings.ContainsFunc(tag, func(r rune) bool { return r == ',' || r <= ' ' || r == 0x7f })
}

// FuzzHlogRoundTrip writes windows to an .hlog as the lab does and reads them back with
// HdrHistogram's own log reader (arena writes .hlog files and never reads them: the tools
// that do are HdrHistogram's, so the round trip is what holds the writer): each window must
// come back whole, with its tag, its counts and its start to the millisecond, whatever the
// comment; and a tag the format cannot carry must be refused, not written.
func FuzzHlogRoundTrip(f *testing.F) {
	f.Add("instant", "arena sleep/200 spring-mvc, 127.0.0.1:8080", []byte{1, 2, 3, 4, 5, 6, 7, 8, 9}, uint32(500))
	f.Add("probe", "", []byte{}, uint32(0))
	f.Add("a,b", "two\nlines", []byte{0xff, 0xff, 0xff, 0x0f}, uint32(999))
	f.Fuzz(func(t *testing.T, tag, comment string, raw []byte, offsetMs uint32) {
		start := time.UnixMilli(1_700_000_000_000 + int64(offsetMs))
		path := filepath.Join(t.TempDir(), "x.hlog")
		hl, err := CreateHlog(path, start, comment)
		if err != nil {
			t.Fatal(err)
		}
		var written []*hdrhistogram.Histogram
		for k, part := range [][]byte{raw[:len(raw)/2], raw[len(raw)/2:]} {
			h := results.NewHistogram()
			for ; len(part) >= 3; part = part[3:] {
				_ = h.RecordValue(int64(binary.LittleEndian.Uint16(part)) << (part[2] & 31))
			}
			h.SetStartTimeMs(start.Add(time.Duration(k) * time.Second).UnixMilli())
			h.SetEndTimeMs(start.Add(time.Duration(k+1) * time.Second).UnixMilli())
			err := hl.Interval(tag, h)
			if ok := hlogTagOK(tag); ok != (err == nil) {
				t.Fatalf("tag %q: Interval says %v", tag, err)
			}
			if err == nil {
				written = append(written, h)
			}
		}
		if err := hl.Close(); err != nil {
			t.Fatal(err)
		}
		readBack(t, path, tag, written)
	})
}

// readBack reads path with HdrHistogram's log reader and compares each interval with what
// was written.
func readBack(t *testing.T, path, tag string, written []*hdrhistogram.Histogram) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := hdrhistogram.NewHistogramLogReader(f)
	for i := 0; ; i++ {
		got, err := r.NextIntervalHistogram()
		if err != nil {
			t.Fatalf("interval %d: %v", i, err)
		}
		if got == nil {
			if i != len(written) {
				t.Fatalf("%d intervals read back of %d written", i, len(written))
			}
			return
		}
		if i >= len(written) {
			t.Fatalf("interval %d read back; %d written", i, len(written))
		}
		w := written[i]
		if got.Tag() != tag || got.TotalCount() != w.TotalCount() || got.Max() != w.Max() || got.Min() != w.Min() ||
			got.ValueAtQuantile(50) != w.ValueAtQuantile(50) {
			t.Fatalf("interval %d: tag %q, %d values (%d–%d); wrote %q, %d values (%d–%d)",
				i, got.Tag(), got.TotalCount(), got.Min(), got.Max(), tag, w.TotalCount(), w.Min(), w.Max())
		}
		if d := got.StartTimeMs() - w.StartTimeMs(); d < -1 || d > 1 {
			t.Fatalf("interval %d starts at %d ms; written at %d", i, got.StartTimeMs(), w.StartTimeMs())
		}
	}
}
