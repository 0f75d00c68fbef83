package agent

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

// BenchmarkMerge3Agents60s: what merging costs the coordinator per level: three agents'
// shares of one tag, each a minute of windows of 1,000 values plus the whole histograms.
func BenchmarkMerge3Agents60s(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	var shares []*Share
	for a := 0; a < 3; a++ {
		whole := results.NewHistogram()
		tag := ShareTag{TagStats: results.TagStats{Tag: "x", Status: map[string]int64{}, Errors: map[string]int64{}}}
		for k := 0; k < 60; k++ {
			w := results.NewHistogram()
			for i := 0; i < 1000; i++ {
				v := int64(rng.ExpFloat64()*5e6) + 1000
				_ = w.RecordValue(v)
				_ = whole.RecordValue(v)
			}
			enc, _ := results.EncodeHist(w)
			tag.Windows = append(tag.Windows, ShareWindow{K: k, EndS: float64(k + 1), Hist: enc})
		}
		tag.Response, _ = results.EncodeHist(whole)
		tag.Service = tag.Response
		shares = append(shares, &Share{Agent: Hello{Name: "a"}, Tags: []ShareTag{tag}})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Merge(load.ClosedLoop{}, shares, time.Now(), time.Second); err != nil {
			b.Fatal(err)
		}
	}
}
