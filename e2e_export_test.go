package main

// End-to-end: a run exported to a real Prometheus (Debian's, with its remote-write receiver
// and native histograms on) is queryable, each cell's p99 as results.json has it, within the
// exponential histogram's precision (issue 25).

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/arena-lab/arena/internal/export"
	"github.com/arena-lab/arena/internal/export/prometheustest"
	"github.com/arena-lab/arena/internal/results"
)

func TestARunExportedToPrometheusKeepsItsP99(t *testing.T) {
	e2e(t)
	prom := prometheustest.Start(t, true)
	out := t.TempDir()
	log, code := arena(t, 3*time.Minute, "run", "isolation", "--quick", "--duration", "5s", "--contenders", "go-nethttp",
		"--out", out, "--export", "prometheus-rw="+prom.WriteURL())
	run := loadOnlyRun(t, out)
	if code != 0 || run.Status != results.RunComplete || len(run.Cells) == 0 {
		t.Fatalf("exit %d, status %s, %d cells:\n%s", code, run.Status, len(run.Cells), log)
	}
	for _, n := range run.Env.Notes {
		if strings.Contains(n, "export") {
			t.Fatalf("note %q:\n%s\nprometheus said:\n%s", n, log, prom.Log())
		}
	}
	now := time.Now() // every cell's last window is within Prometheus' 5 minutes' look-back
	checked := 0
	for _, cell := range run.Cells {
		for _, tag := range cell.Tags {
			if tag.Response.Count == 0 {
				continue
			}
			sel := fmt.Sprintf(`{run=%q,scenario="isolation",contender=%q,level=%q,repeat="%d",tag=%q}`, run.ID, cell.Contender, cell.Level, cell.Repeat, tag.Tag)
			if n := prom.One(t, "histogram_count(arena_latency_seconds"+sel+")", now); n != float64(tag.Response.Count) {
				t.Fatalf("%s: Prometheus counts %v responses; results.json %d", sel, n, tag.Response.Count)
			}
			got := prom.One(t, "histogram_quantile(0.99, arena_latency_seconds"+sel+")", now) * 1e3
			lo, hi := p99Range(t, tag.ResponseHist)
			if tag.Response.P99 < lo-0.001 || tag.Response.P99 > hi+0.001 {
				t.Fatalf("%s: results.json's p99 %v ms is outside its own histogram's %v–%v", sel, tag.Response.P99, lo, hi)
			}
			// Within one exponential bucket of HDR's p99, and the 1 µs results.json rounds to.
			if got < lo*(1-export.Precision)-0.001 || got > hi*(1+export.Precision)+0.001 {
				t.Fatalf("%s: Prometheus' p99 %.4f ms; results.json %.4f ms (HDR's %.4f–%.4f), more than %.2f %% apart",
					sel, got, tag.Response.P99, lo, hi, export.Precision*100)
			}
			t.Logf("%s %s: p99 %.4f ms in Prometheus, %.4f ms in results.json", cell.Level, tag.Tag, got, tag.Response.P99)
			checked++
		}
		if n := prom.Query(t, fmt.Sprintf(`arena_server_rss_bytes{run=%q,contender=%q,level=%q,repeat="%d"}`, run.ID, cell.Contender, cell.Level, cell.Repeat), now); len(n) != 1 || n[0].Value <= 0 {
			t.Fatalf("server RSS: %v", n)
		}
	}
	if checked == 0 {
		t.Fatalf("no tag with responses:\n%s", log)
	}
}

// p99Range is the p99 in ms read off the encoded HDR histogram at the two ranks the
// definitions of p99 take: HDR rounds 0.99·n to the nearest, Prometheus takes it as it is
// (so the next whole rank), and in a sparse tail the two values may differ.
func p99Range(t *testing.T, enc string) (lo, hi float64) {
	t.Helper()
	h, err := results.DecodeHist(enc)
	if err != nil {
		t.Fatal(err)
	}
	rank := 0.99 * float64(h.TotalCount())
	return valueAtRank(h, int64(math.Floor(rank+0.5))), valueAtRank(h, int64(math.Ceil(rank)))
}

// valueAtRank is the highest value of the bucket holding the rank-th smallest value, in ms.
func valueAtRank(h *hdrhistogram.Histogram, rank int64) float64 {
	var seen int64
	for _, bar := range h.Distribution() {
		if seen += bar.Count; bar.Count > 0 && seen >= max(rank, 1) {
			return float64(bar.To) / 1e6
		}
	}
	return float64(h.Max()) / 1e6
}
