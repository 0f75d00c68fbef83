package cmd

import (
	"bytes"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/results"
)

func TestBenchChatRejectsBadInput(t *testing.T) {
	setup(t)
	const limits = "--users 1..18000 (the process may hold 20,000 descriptors)"
	for _, args := range [][]string{
		{"--users", "0"}, {"--users", "18001"}, {"--room-size", "0"}, {"--rooms", "0"},
		{"--per-room", "0"}, {"--messages", "0"}, {"--period", "0s"},
	} {
		refused(t, append([]string{"bench", "chat"}, args...), limits)
	}
	refused(t, []string{"bench", "chat", "--heap", "10", "--server-cpus", "0"}, "--heap 10")
	refused(t, []string{"bench", "chat", "extra"}, `unknown command "extra" for "arena bench chat"`)
}

func TestPrintHold(t *testing.T) {
	var out bytes.Buffer
	printHold(&out, 10000, 10, bench.ChatHold{Users: 10000, Connected: 10000, JoinSeconds: 4.53, BaseRSSMB: 13.2,
		RSSMB: 162.4, PerUserKB: 15.24, UsersPerGiB: 68088.3, Goroutines: 10004})
	want := `
### Hold: 10000 idle chat users (rooms of 10)

| users connected | joined in s | client RSS before MB | client RSS with users MB | per user KB | users per GiB | goroutines |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 10000 | 4.5 | 13 | 162 | 15.2 | 68088 | 10004 |
`
	if got := out.String(); got != want {
		t.Errorf("hold printed as\n%s\nwant\n%s", got, want)
	}
	markdownTables(t, out.String())
}

// The cost table names its faults with their counts, or says none.
func TestPrintChatCost(t *testing.T) {
	cost := bench.ChatCost{Deliveries: 1600000, Seconds: 4.93, DeliveriesPerSecond: 324416.2, ClientCPUSeconds: 3.514,
		MicrosPerDelivery: 2.196, Latency: results.Latency{P50: 1375.731, P99: 3869.24}}
	var out bytes.Buffer
	printChatCost(&out, 20, 20, 200, 10*time.Millisecond, cost)
	want := `
### Cost: 20 rooms × 20 users, 200 messages each every 10ms

| deliveries | seconds | deliveries/s | client CPU s | µs per delivery | delivery p50 ms | p99 ms | faults |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |
| 1600000 | 4.9 | 324416 | 3.51 | 2.20 | 1375.73 | 3869.2 | none |
`
	if got := out.String(); got != want {
		t.Errorf("cost printed as\n%s\nwant\n%s", got, want)
	}
	markdownTables(t, out.String())

	out.Reset()
	cost.Faults = map[string]int64{"gap": 3, "duplicate": 12}
	printChatCost(&out, 20, 20, 200, 10*time.Millisecond, cost)
	if want := "| 3869.2 | 12 duplicate, 3 gap |\n"; !bytes.HasSuffix(out.Bytes(), []byte(want)) {
		t.Errorf("cost with faults printed as\n%s\nwant its row to end %q", out.String(), want)
	}
}
