package bench

import (
	"strings"
	"testing"
)

// wrk 4.2's report, as runWrk reads it.
const wrkReport = `Running 10s test @ http://127.0.0.1:40123/data/2
  1 threads and 100 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     5.11ms    1.20ms  30.02ms   90.00%
    Req/Sec    19.61k     1.10k   21.00k    80.00%
  Latency Distribution
     50%    4.98ms
     75%    5.40ms
     90%    6.10ms
     99%    8.57ms
  195139 requests in 10.00s, 30.15MB read
%sRequests/sec:  19513.90
Transfer/sec:      3.01MB
`

func TestWrkRoundReadsThroughputAndP99(t *testing.T) {
	r, err := wrkRound(strings.Replace(wrkReport, "%s", "", 1))
	if err != nil {
		t.Fatal(err)
	}
	if r.RPS != 19513.90 || r.P99ms != 8.57 || r.Timeouts != 0 {
		t.Fatalf("got %+v", r)
	}
}

func TestWrkRoundCountsTimeouts(t *testing.T) {
	r, err := wrkRound(strings.Replace(wrkReport, "%s", "  Socket errors: connect 0, read 0, write 0, timeout 94\n", 1))
	if err != nil {
		t.Fatal(err)
	}
	if r.Timeouts != 94 {
		t.Fatalf("timeouts = %d, want 94", r.Timeouts)
	}
	if _, err := counted(r, nil); err == nil || !strings.Contains(err.Error(), "94 requests time out") {
		t.Fatalf("a counted round with timeouts passed: %v", err)
	}
	if _, err := counted(Round{RPS: 1}, nil); err != nil {
		t.Fatalf("a round without timeouts was refused: %v", err)
	}
}

func TestWrkRoundRefusesAServerThatServedNothing(t *testing.T) {
	// What wrk printed against a worker pool that deadlocked: every request timed out.
	out := `Running 10s test @ http://127.0.0.1:40123/data/2
  1 threads and 100 connections
  0 requests in 10.00s, 0.00B read
  Socket errors: connect 0, read 0, write 0, timeout 100
Requests/sec:      0.00
Transfer/sec:       0.00B
`
	if _, err := wrkRound(out); err == nil || !strings.Contains(err.Error(), "not serving") {
		t.Fatalf("a round of 0 requests/s passed: %v", err)
	}
	if _, err := wrkRound(strings.Replace(wrkReport, "%s", "  Non-2xx or 3xx responses: 12\n", 1)); err == nil {
		t.Fatal("a round with non-2xx answers passed")
	}
}
