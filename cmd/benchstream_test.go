package cmd

import (
	"bytes"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/results"
)

func TestBenchStreamRejectsBadInput(t *testing.T) {
	setup(t)
	for _, args := range [][]string{{"--size", "15"}, {"--size", "65537"}, {"--duration", "500ms"}, {"--duration", "11m"}} {
		refused(t, append([]string{"bench", "stream"}, args...), "--size 16..65536 and --duration 1s..10m")
	}
	refused(t, []string{"bench", "stream", "--clients", "1,0"}, "--clients 0: 1..10000")
	refused(t, []string{"bench", "stream", "--clients", "10001"}, "--clients 10001: 1..10000")
	refused(t, []string{"bench", "stream", "--clients", "many"}, `invalid argument "many"`)
	refused(t, []string{"bench", "stream", "--client-cpus", "x"}, "--client-cpus")
}

func TestPrintStream(t *testing.T) {
	var out bytes.Buffer
	printStreamHead(&out, 250, 10*time.Second)
	for _, c := range []bench.StreamCost{
		{Clients: 1, Delivered: 15000000, PerSecond: 1500000.4, ClientCores: 0.8312, PerCoreSecond: 1804620.1, NanosPerMessage: 554.1,
			Latency: results.Latency{P50: 0.513, P99: 2.004}},
		{Clients: 100, Delivered: 9000000, PerSecond: 900000, ClientCores: 1, PerCoreSecond: 900000, NanosPerMessage: 1111,
			Latency: results.Latency{P50: 12, P99: 40}, Malformed: 1, Gaps: 2},
	} {
		printStreamRow(&out, c)
	}
	want := `
### Stream client: 250-byte messages for 10s

| clients | messages | msg/s | client cores | msg per client CPU-s | ns per message | latency p50 ms | p99 ms | malformed | gaps |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 1 | 15000000 | 1500000 | 0.83 | 1804620 | 554 | 0.51 | 2.00 | 0 | 0 |
| 100 | 9000000 | 900000 | 1.00 | 900000 | 1111 | 12.00 | 40.00 | 1 | 2 |
`
	if got := out.String(); got != want {
		t.Errorf("stream printed as\n%s\nwant\n%s", got, want)
	}
	markdownTables(t, out.String())
}
