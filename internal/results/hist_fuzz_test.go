package results

import (
	"encoding/binary"
	"math"
	"runtime"
	"testing"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// valuesOf reads raw as little-endian uint32s, each a latency in microseconds scaled by
// a power of two so that values span the lab's whole range (1 µs to an hour) and beyond it.
func valuesOf(raw []byte) []int64 {
	var vs []int64
	for ; len(raw) >= 4; raw = raw[4:] {
		x := binary.LittleEndian.Uint32(raw)
		vs = append(vs, int64(x>>5)<<(x&31)) // up to 2^27 · 2^31 ns: past the hour
	}
	return vs
}

// FuzzDecodeHist holds the histogram decoder every reader of agents' shares and of
// results.json goes through (the encoding the .hlog lines carry) to two things: a lab
// histogram comes back with exactly its counts; and any string either fails or gives a
// histogram of the lab's layout that adds into the lab's without dropping a value.
func FuzzDecodeHist(f *testing.F) {
	f.Add([]byte{0xe8, 0x03, 0, 0, 0x10, 0x27, 0, 0}, "")
	f.Add([]byte{}, "not a histogram")
	wide := hdrhistogram.New(1, math.MaxInt64, 5)
	_ = wide.RecordValue(math.MaxInt64 / 2)
	enc, err := wide.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte{}, string(enc))
	f.Fuzz(func(t *testing.T, raw []byte, s string) {
		h := NewHistogram()
		for _, v := range valuesOf(raw) {
			_ = h.RecordValue(v) // beyond the hour: not recorded, as in the lab
		}
		enc, err := EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		back, err := DecodeHist(enc)
		if err != nil {
			t.Fatalf("a lab histogram does not decode: %v", err)
		}
		if !back.Equals(h) {
			t.Fatalf("decoded %d values (max %d); encoded %d (max %d)", back.TotalCount(), back.Max(), h.TotalCount(), h.Max())
		}
		got, err := DecodeHist(s)
		if err != nil {
			return
		}
		lab := NewHistogram()
		low, high, digits := got.LowestTrackableValue(), got.HighestTrackableValue(), got.SignificantFigures()
		if low != lab.LowestTrackableValue() || high != lab.HighestTrackableValue() || digits != lab.SignificantFigures() {
			t.Fatalf("%q decoded to a histogram of %d–%d, %d digits: not the lab's layout", s, low, high, digits)
		}
		if dropped := lab.Merge(got); dropped != 0 {
			t.Fatalf("%q: adding it into the lab's histogram dropped %d values", s, dropped)
		}
	})
}

// The 56 bytes of a histogram of 1 to 2^63 at 5 digits are refused without laying out
// its 6 million counts.
func TestDecodeHistRefusesAWideLayoutCheaply(t *testing.T) {
	wide := hdrhistogram.New(1, math.MaxInt64, 5)
	enc, err := wide.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = DecodeHist(string(enc))
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("a histogram of another layout decoded")
	}
	if spent := after.TotalAlloc - before.TotalAlloc; spent > 1<<20 {
		t.Fatalf("%d bytes of input cost %d bytes to refuse", len(enc), spent)
	}
}
