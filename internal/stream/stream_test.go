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
	out, err := Load{Tag: "stream", Clients: 4, Rate: 2000, Size: 250, Duration: 1500 * time.Millisecond}.Measure(context.Background(), s.Addr(), rec)
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
	out, err := Load{Tag: "stream", Clients: 3, Slow: 3, ReadDelay: 50 * time.Millisecond, Rate: 0, Size: 250, Duration: 2 * time.Second}.Measure(context.Background(), s.Addr(), rec)
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
