package bench

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

func TestChooseConnections(t *testing.T) {
	for _, c := range []struct {
		name    string
		probes  []ConnProbe
		rate    float64
		conns   int
		reached bool
	}{
		{"the first that reaches", []ConnProbe{{1, 20000}, {2, 45000}, {4, 90000}, {8, 120000}}, 80000, 4, true},
		{"the fewest that reach, in any order", []ConnProbe{{8, 120000}, {2, 45000}, {4, 90000}}, 80000, 4, true},
		{"within 2 % reaches", []ConnProbe{{1, 20000}, {2, 98000}, {4, 150000}}, 100000, 2, true},
		{"below 2 % does not", []ConnProbe{{1, 20000}, {2, 97900}, {4, 150000}}, 100000, 4, true},
		{"one connection already beyond", []ConnProbe{{1, 18000}}, 2000, 1, true},
		{"none reaches: the nearest", []ConnProbe{{1, 20000}, {2, 45000}, {4, 61000}, {8, 60000}}, 100000, 4, false},
		{"none reaches, a tie: the fewer", []ConnProbe{{1, 20000}, {2, 60000}, {4, 60000}}, 100000, 2, false},
		{"no probe", nil, 100000, 0, false},
	} {
		conns, reached := ChooseConnections(c.probes, c.rate)
		if conns != c.conns || reached != c.reached {
			t.Errorf("%s: ChooseConnections(%v, %.0f) = %d, %v; want %d, %v", c.name, c.probes, c.rate, conns, reached, c.conns, c.reached)
		}
	}
}

func TestLateShareAndMean(t *testing.T) {
	o := OpenClosed{Open: []LoadRound{
		{RPS: 99000, Sent: 1000000, Late: 1000, ClientLate: 10, MaxLateMs: 3.5},
		{RPS: 101000, Sent: 1000000, Late: 3000, ClientLate: 30, MaxLateMs: 12.25},
	}}
	pct, own, maxMs := o.LateShare()
	if math.Abs(pct-0.2) > 1e-9 || math.Abs(own-0.002) > 1e-9 || maxMs != 12.25 {
		t.Errorf("LateShare = %v %%, %v %% the engine's, %v ms; want 0.2 %%, 0.002 %%, 12.25 ms", pct, own, maxMs)
	}
	if got := MeanRPS(o.Open); got != 100000 {
		t.Errorf("MeanRPS = %v, want 100000", got)
	}
	if got := MeanRPS(nil); got != 0 {
		t.Errorf("MeanRPS(nil) = %v", got)
	}
	if got := (LoadRound{Sent: 400, Late: 1}).LatePct(); got != 0.25 {
		t.Errorf("LatePct = %v, want 0.25", got)
	}
	if got := (LoadRound{}).LatePct(); got != 0 {
		t.Errorf("LatePct of no send = %v", got)
	}
	if pct, own, maxMs := (OpenClosed{}).LateShare(); pct != 0 || own != 0 || maxMs != 0 {
		t.Errorf("LateShare of no round = %v, %v, %v", pct, own, maxMs)
	}
}

func TestSelfCPUCounts(t *testing.T) {
	before := selfCPUSeconds()
	for end := time.Now().Add(30 * time.Millisecond); time.Now().Before(end); {
	}
	if spent := selfCPUSeconds() - before; spent < 0.010 {
		t.Errorf("30 ms of spinning counted as %.3f s of CPU", spent)
	}
}

// A tiny real run against a server in this process: the open loop keeps its schedule's
// count, the probes stop at the first count that reaches its rate, and the closed loop runs
// at the count chosen.
func TestMeasureOpenAgainstALocalServer(t *testing.T) {
	if testing.Short() {
		t.Skip("drives load")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"id":1}`))
	}))
	defer srv.Close()
	addr := strings.TrimPrefix(srv.URL, "http://")
	const rate = 1000
	res, err := MeasureOpen(context.Background(), OpenPlan{Target: addr, ServerPid: os.Getpid(), Path: "/x", Rate: rate,
		Duration: 300 * time.Millisecond, Rounds: 2, Candidates: []int{1, 2, 4}, Probe: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Open) != 2 || len(res.Closed) != 2 {
		t.Fatalf("%d open rounds, %d closed; want 2 each", len(res.Open), len(res.Closed))
	}
	for i, r := range res.Open {
		if r.Scheduled != rate*3/10 || r.Sent != r.Scheduled || r.Completed != r.Sent || r.Errors != 0 {
			t.Errorf("open round %d: scheduled %d, sent %d, completed %d, errors %d; want %d of each, no error",
				i+1, r.Scheduled, r.Sent, r.Completed, r.Errors, rate*3/10)
		}
		if r.RPS != float64(r.Completed)/0.3 || r.Response.Count == 0 || r.Service.P50 <= 0 {
			t.Errorf("open round %d: %+v", i+1, r)
		}
	}
	if len(res.Probes) == 0 || res.Matched <= 0 || res.ProbeSeconds != 0.2 {
		t.Fatalf("probes %v against %v req/s over %v s", res.Probes, res.Matched, res.ProbeSeconds)
	}
	for i, p := range res.Probes[:len(res.Probes)-1] {
		if Reaches(p.RPS, res.Matched) {
			t.Errorf("probe %d (%d connections) reached %.0f req/s, yet the probing went on: %v", i+1, p.Connections, res.Matched, res.Probes)
		}
	}
	if want, reached := ChooseConnections(res.Probes, res.Matched); res.Connections != want || res.Reached != reached {
		t.Errorf("closed loop at %d connections (reached %v); the probes %v choose %d (%v)", res.Connections, res.Reached, res.Probes, want, reached)
	}
	for i, r := range res.Closed {
		if r.Completed <= 0 || r.Scheduled != 0 || r.Late != 0 || r.Errors != 0 {
			t.Errorf("closed round %d: %+v", i+1, r)
		}
	}
}
