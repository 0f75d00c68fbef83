package agent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

// TestMergedHistogramIsOneHistogram: values recorded by three agents and added equal one
// histogram that recorded them all, every bucket.
func TestMergedHistogramIsOneHistogram(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	whole := results.NewHistogram()
	var shares []*Share
	for a := 0; a < 3; a++ {
		h := results.NewHistogram()
		for i := 0; i < 20000; i++ {
			v := int64(rng.ExpFloat64()*5e6) + 1000 // ~5 ms mean, in ns
			_ = h.RecordValue(v)
			_ = whole.RecordValue(v)
		}
		enc, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		shares = append(shares, &Share{Agent: Hello{Name: "a"}, Tags: []ShareTag{{
			TagStats: results.TagStats{Tag: "x", Sent: 20000, Completed: 20000, Status: map[string]int64{"2xx": 20000}},
			Response: enc, Service: enc}}})
	}
	m, err := Merge(load.ClosedLoop{}, shares, time.Now(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := m.Tags[0].Response
	if !got.Equals(whole) {
		t.Fatalf("merged histogram differs from one histogram of every value: %d vs %d values, p99 %d vs %d",
			got.TotalCount(), whole.TotalCount(), got.ValueAtQuantile(99), whole.ValueAtQuantile(99))
	}
	if m.Tags[0].Sent != 60000 || m.Tags[0].Status["2xx"] != 60000 {
		t.Fatalf("counters not summed: %+v", m.Tags[0].TagStats)
	}
}

// Agents' windows of one instant add their errors and, apart, their timeouts: the merged
// window reads its correct answers as one agent's would.
func TestMergedWindowsAddTheirTimeouts(t *testing.T) {
	var shares []*Share
	for a, timeouts := range []int64{3, 4} {
		h := results.NewHistogram()
		for range 10 {
			_ = h.RecordValue(2e6)
		}
		enc, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		shares = append(shares, &Share{Agent: Hello{Name: fmt.Sprint("a", a)}, Tags: []ShareTag{{
			TagStats: results.TagStats{Tag: "x", Sent: 10, Completed: 10 - timeouts}, Response: enc, Service: enc,
			Windows: []ShareWindow{{K: 0, EndS: 1, Errors: timeouts + 1, Timeouts: timeouts, Hist: enc}}}}})
	}
	m, err := Merge(load.ClosedLoop{}, shares, time.Now(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if w := m.Tags[0].Timeline[0]; w.Count != 20 || w.Errors != 9 || w.Timeouts != 7 || w.Answered() != 13 {
		t.Fatalf("merged window %+v; want 20 latencies, 9 errors of which 7 timeouts, 13 answered", w)
	}
}

// TestMergeRefusesAnotherLayout: a histogram of other HDR settings cannot be added exactly.
func TestMergeRefusesAnotherLayout(t *testing.T) {
	other, _ := results.EncodeHist(hdrOther())
	_, err := Merge(load.ClosedLoop{}, []*Share{{Agent: Hello{Name: "b"}, Tags: []ShareTag{{TagStats: results.TagStats{Tag: "x"}, Response: other}}}}, time.Now(), time.Second)
	if err == nil || !strings.Contains(err.Error(), "another layout") {
		t.Fatalf("want a layout error, got %v", err)
	}
}

// target is a server that answers every request after a short wait.
func target(t *testing.T, hits *atomic.Int64) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(2 * time.Millisecond)
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

func openLoop() load.OpenLoop {
	return load.OpenLoop{Duration: 2 * time.Second, Timeout: time.Second, Streams: []load.Stream{
		{Tag: "instant", Request: load.Request{Path: "/"}, Pacer: load.PerSecond(500)},
		{Tag: "slow", Request: load.Request{Path: "/s"}, Pacer: load.PerSecond(50)},
	}}
}

func resolverOf(ld load.Load) Resolver { return func(Job) (load.Load, error) { return ld, nil } }

// runFleet runs ld over n agents, the first in-process and the rest over HTTP agents.
func runFleet(t *testing.T, ld load.Load, n int, addr string) (*Merged, []*Share) {
	t.Helper()
	var runners []Runner
	for i := 0; i < n; i++ {
		self := Hello{Protocol: Protocol, Version: Version(), Name: "a" + string(rune('0'+i))}
		if i == 0 {
			runners = append(runners, &InProcess{Self: self, Resolve: resolverOf(ld)})
			continue
		}
		srv := serveTLS(t, &Server{Self: self, Secret: testSecret, Targets: []string{addr}, Resolve: resolverOf(ld)})
		r, err := Dial(context.Background(), strings.TrimPrefix(srv.URL, "https://"), testSecret)
		if err != nil {
			t.Fatal(err)
		}
		runners = append(runners, r)
	}
	f := &Fleet{Runners: runners}
	shares, start, err := f.Run(context.Background(), Job{Target: addr, Interval: 500 * time.Millisecond, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Merge(ld, shares, start, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	return m, shares
}

// TestOneAgentAndThreeAgree: the same open loop from one agent and from three (one in the
// process, two over HTTP) schedules and sends the same hits, each agent a third of them,
// and the merged latency agrees.
func TestOneAgentAndThreeAgree(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two 2-s loads")
	}
	var hits atomic.Int64
	addr := target(t, &hits)
	one, _ := runFleet(t, openLoop(), 1, addr)
	three, shares := runFleet(t, openLoop(), 3, addr)
	for k, tag := range one.Tags {
		got := three.Tags[k]
		if got.Tag != tag.Tag || got.Scheduled != tag.Scheduled || got.Completed != tag.Completed || got.Completed != tag.Scheduled {
			t.Fatalf("%s: one agent scheduled %d, completed %d; three %d, %d", tag.Tag, tag.Scheduled, tag.Completed, got.Scheduled, got.Completed)
		}
		p50a, p50b := tag.Response.ValueAtQuantile(50), got.Response.ValueAtQuantile(50)
		if p50b > 3*p50a || p50a > 3*p50b {
			t.Errorf("%s: p50 %d ns from one agent, %d from three", tag.Tag, p50a, p50b)
		}
		if len(got.Timeline) < 4 {
			t.Errorf("%s: %d merged windows over 2 s at 0.5 s", tag.Tag, len(got.Timeline))
		}
		var windowed int64
		for _, w := range got.Timeline {
			windowed += w.Count
		}
		if windowed != got.Response.TotalCount() {
			t.Errorf("%s: windows hold %d values, the whole %d", tag.Tag, windowed, got.Response.TotalCount())
		}
	}
	for _, s := range shares {
		if sent := s.Tags[0].Sent; sent < 333 || sent > 334 {
			t.Errorf("agent %s sent %d of 1000 instant hits, want a third", s.Agent.Name, sent)
		}
	}
	if hits.Load() != 2*(1000+100) {
		t.Errorf("the server saw %d requests, want %d", hits.Load(), 2*1100)
	}
}

// lateRunner gets its job 200 ms after the agreed start.
type lateRunner struct{ Runner }

func (l lateRunner) Run(ctx context.Context, job Job) (*Share, error) {
	time.Sleep(time.Until(job.Start) + 200*time.Millisecond)
	return l.Runner.Run(ctx, job)
}

// TestLateAgentAbortsTheLevel: an agent that gets its job after the agreed start refuses it
// rather than shift its schedule, and the fleet fails the level, naming it.
func TestLateAgentAbortsTheLevel(t *testing.T) {
	var hits atomic.Int64
	addr := target(t, &hits)
	ld := openLoop()
	ok := &InProcess{Self: Hello{Name: "on-time"}, Resolve: resolverOf(ld)}
	late := lateRunner{&InProcess{Self: Hello{Name: "late"}, Resolve: resolverOf(ld)}}
	_, _, err := (&Fleet{Runners: []Runner{ok, late}}).Run(context.Background(), Job{Target: addr, Warmup: -1})
	if err == nil || !strings.Contains(err.Error(), "late") || !strings.Contains(err.Error(), "aborted rather than its schedule shifted") {
		t.Fatalf("want the late agent's refusal, got %v", err)
	}
}

// TestAgentRefusesAnotherBuild: Dial refuses an agent of another build or protocol.
func TestAgentRefusesAnotherBuild(t *testing.T) {
	for _, h := range []Hello{{Protocol: Protocol, Version: "0123456789ab", Name: "old"}, {Protocol: Protocol + 1, Version: Version(), Name: "new"}} {
		srv := serveTLS(t, &Server{Self: h, Secret: testSecret})
		_, err := Dial(context.Background(), strings.TrimPrefix(srv.URL, "https://"), testSecret)
		srv.Close()
		if err == nil || !strings.Contains(err.Error(), "same arena build") {
			t.Errorf("agent %s: want a refusal, got %v", h.Name, err)
		}
	}
}

func hdrOther() *hdrhistogram.Histogram {
	h := hdrhistogram.New(1, 1000, 2)
	_ = h.RecordValue(5)
	return h
}

// A warm-up hands its idle connections to the load after it, as the lab's own engine does
// on one machine (no share pays for a connect the warm-up paid), and the load closes them
// when it ends: the server is left with none of the agent's open.
func TestWarmUpHandsItsConnectionsToTheLoad(t *testing.T) {
	var opened, closed atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			opened.Add(1)
		case http.StateClosed, http.StateHijacked:
			closed.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")
	warm := load.ClosedLoop{Tag: "warm", Request: load.Request{Path: "/"}, Connections: 2, Requests: 200, Duration: 5 * time.Second, Timeout: time.Second}
	run := load.OpenLoop{Duration: time.Second, Timeout: time.Second, Streams: []load.Stream{
		{Tag: "instant", Request: load.Request{Path: "/"}, Pacer: load.PerSecond(20)}}}
	self := Hello{Protocol: Protocol, Name: "a0"}
	resolve := func(j Job) (load.Load, error) {
		if j.Warmup >= 0 {
			return warm, nil
		}
		return run, nil
	}
	for _, k := range []int{0, -1} {
		share, err := RunJob(context.Background(), Job{Target: addr, Parts: 1, Start: time.Now().Add(50 * time.Millisecond), Slack: time.Second, Warmup: k}, resolve, self)
		if err != nil || share.Err != "" {
			t.Fatalf("job %d: %v %v", k, err, share)
		}
		if k == 0 && closed.Load() != 0 {
			t.Fatalf("the warm-up closed %d connections; it keeps them for the load", closed.Load())
		}
	}
	if n := opened.Load(); n != 2 {
		t.Errorf("%d connections opened over the warm-up and the load, want the warm-up's 2", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for closed.Load() != opened.Load() && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if closed.Load() != opened.Load() {
		t.Errorf("%d of %d connections closed after the load", closed.Load(), opened.Load())
	}
}
