package stream

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
)

func TestMessageLayoutAndParse(t *testing.T) {
	m := AppendMessage(nil, 42, 1700000000123456, 250)
	if len(m) != 250 {
		t.Fatalf("size %d, want 250", len(m))
	}
	if !strings.HasPrefix(string(m), `{"seq":42,"ts":1700000000123456,"pad":"xx`) {
		t.Fatalf("layout: %s", m)
	}
	seq, ts, ok := ParseHead(m)
	if !ok || seq != 42 || ts != 1700000000123456 {
		t.Fatalf("ParseHead = %d %d %v", seq, ts, ok)
	}
	if _, err := Check(m, 250); err != nil {
		t.Fatal(err)
	}
	short := AppendMessage(nil, 0, 1700000000123456, 16)
	if _, err := Check(short, 16); err != nil || !strings.HasSuffix(string(short), `"pad":""}`) {
		t.Fatalf("size 16: %s %v", short, err)
	}
	for _, bad := range []string{
		`{"ts":1,"seq":0,"pad":""}`,
		`{"seq":0, "ts":1700000000123456,"pad":""}`,
		`{"seq":0,"ts":1700000000123456,"pad":"12"}`,
		`not json`,
	} {
		if _, err := Check([]byte(bad), 16); err == nil {
			t.Errorf("Check accepted %s", bad)
		}
	}
	if _, err := Check(AppendMessage(nil, 1, 1700000000123456, 200), 250); err == nil {
		t.Error("Check accepted a 200-byte message asked as 250")
	}
	if _, _, ok := ParseHead([]byte(`{"seq":x,"ts":1,"pad":""}`)); ok {
		t.Error("ParseHead accepted a seq that is no number")
	}
}

func TestFastReadersGetEveryMessageInOrder(t *testing.T) {
	s, err := StartServer("127.0.0.1:0", ServerOptions{Backpressure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := load.NewRecorder(time.Now(), nil)
	out, err := Load{Tag: "stream", Clients: 4, Rate: 2000, Size: 250, Duration: 1500 * time.Millisecond}.run(context.Background(), s.Addr(), rec)
	if err != nil {
		t.Fatal(err)
	}
	if out.Connected != 4 || out.Delivered < 4*2000 || out.Gaps != 0 || out.Malformed != 0 || out.OutOfOrder != 0 || out.ClosedEarly != 0 {
		t.Fatalf("fast readers at 2000/s for 1.5 s: %+v", out)
	}
	if out.Server == nil || !out.Responsive || out.Server.Generated < out.Delivered || len(out.StatsTimeline) == 0 {
		t.Fatalf("stats: %+v", out)
	}
	r := rec.Results()[0]
	if r.Completed != out.Delivered || r.Response.ValueAtQuantile(50) <= 0 {
		t.Fatalf("recorder has %d deliveries, load %d", r.Completed, out.Delivered)
	}
}

func TestSlowReadersWithBackpressureSeeDrops(t *testing.T) {
	s, err := StartServer("127.0.0.1:0", ServerOptions{Backpressure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rec := load.NewRecorder(time.Now(), nil)
	out, err := Load{Tag: "stream", Clients: 3, Slow: 3, ReadDelay: 50 * time.Millisecond, Rate: 0, Size: 250, Duration: 2 * time.Second}.run(context.Background(), s.Addr(), rec)
	if err != nil {
		t.Fatal(err)
	}
	// gaps come only once a reader gets past what the kernel buffered before the drops began
	if out.Delivered == 0 || out.Delivered > 3*45 || out.Server.Dropped == 0 {
		t.Fatalf("slow readers: %+v %+v", out, out.Server)
	}
	time.Sleep(200 * time.Millisecond)
	if s.Stats().Clients != 0 {
		t.Fatalf("clients after close: %d", s.Stats().Clients)
	}
}

func TestRefusedUpgradeIsAHandshakeError(t *testing.T) {
	s, err := StartServer("127.0.0.1:0", ServerOptions{Backpressure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = Dial(context.Background(), s.Addr(), "/stream?size=8", 4096)
	he, ok := err.(*HandshakeError)
	if !ok || he.Status != 400 || !strings.Contains(string(he.Body), "size") {
		t.Fatalf("size=8: %v", err)
	}
}

// A seq below the one due is out of order when it fills a gap the reader saw (and the gap is
// then no loss), and a copy otherwise.
func TestGapLogTellsLateFromCopy(t *testing.T) {
	var g gapLog
	g.add(5, 8) // 5, 6, 7 skipped
	g.add(20, 21)
	for _, tt := range []struct {
		seq  int64
		fill bool
	}{{6, true}, {6, false}, {5, true}, {7, false}, {20, true}, {20, false}, {3, false}, {30, false}} {
		if got := g.fill(tt.seq); got != tt.fill {
			t.Errorf("fill(%d) = %v, want %v", tt.seq, got, tt.fill)
		}
	}
	var many gapLog
	for i := int64(0); i < 2*gapMemory; i++ {
		many.add(10*i, 10*i+1)
	}
	if many.fill(0) || !many.fill(10*(2*gapMemory-1)) {
		t.Error("the log keeps the latest gaps, not the first")
	}
}

// A load the lab ends early has its rate over the time from its start to its end, or none
// when that was under a second.
func TestACutShortLoadHasItsRateOverItsTime(t *testing.T) {
	s, err := StartServer("127.0.0.1:0", ServerOptions{Backpressure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := Load{Tag: "stream", Clients: 2, Rate: 1000, Size: 250, Duration: 20 * time.Second}
	for _, tt := range []struct {
		after   time.Duration
		hasRate bool
	}{{200 * time.Millisecond, false}, {1500 * time.Millisecond, true}} {
		ctx, cancel := context.WithTimeout(context.Background(), tt.after)
		began := time.Now()
		out, err := l.run(ctx, s.Addr(), load.NewRecorder(time.Now(), nil))
		took := time.Since(began)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		_, numbered := out.Numbers()[NumberDelivered]
		switch {
		case !out.CutShort || out.Delivered == 0:
			t.Errorf("ended after %s: %+v; want cut short with deliveries", tt.after, out)
		case !tt.hasRate && (out.Seconds != 0 || out.PerSecond != 0 || numbered):
			t.Errorf("ended after %s: rate %.0f over %.2f s; want none", tt.after, out.PerSecond, out.Seconds)
		case tt.hasRate && (out.Seconds < tt.after.Seconds() || out.Seconds > took.Seconds() || !numbered ||
			out.PerSecond != float64(out.Delivered)/out.Seconds):
			t.Errorf("ended after %s (took %s): %d over %.2f s = %.0f/s; want the rate over the time it ran", tt.after, took, out.Delivered, out.Seconds, out.PerSecond)
		}
	}
}
