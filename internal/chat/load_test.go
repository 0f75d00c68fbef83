package chat

import (
	"context"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
)

func TestLoadDeliversEveryMessageOnceInOrder(t *testing.T) {
	s, err := StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := Load{Tag: "chat", Rooms: 2, Users: 5, Messages: 50, Period: 5 * time.Millisecond, JoinWait: 200 * time.Millisecond, Linger: 5 * time.Second}
	rec := load.NewRecorder(time.Now(), nil)
	if err := l.Run(context.Background(), s.Addr(), rec); err != nil {
		t.Fatal(err)
	}
	r := rec.Results()[0]
	if r.Scheduled != 2500 || r.Completed != 2500 || r.Response.TotalCount() != 2500 {
		t.Fatalf("expected %d, completed %d, timed %d; want 2500 each", r.Scheduled, r.Completed, r.Response.TotalCount())
	}
	if len(r.Errors) != 0 {
		t.Fatalf("faults %v; want none", r.Errors)
	}
}

// A member that loses its connection midway is counted: its missing deliveries and the
// early close show in the results.
func TestLoadCountsWhatNeverCame(t *testing.T) {
	s, err := StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := Load{Tag: "chat", Rooms: 1, Users: 3, Messages: 100, Period: 5 * time.Millisecond, JoinWait: 100 * time.Millisecond, Linger: time.Second}
	rec := load.NewRecorder(time.Now(), nil)
	go func() { time.Sleep(350 * time.Millisecond); s.Close() }() // the server goes away mid-run
	if err := l.Run(context.Background(), s.Addr(), rec); err != nil {
		t.Fatal(err)
	}
	r := rec.Results()[0]
	if r.Errors[FaultMissing] == 0 || r.Errors[FaultClosed] == 0 {
		t.Fatalf("faults %v; want missing deliveries and closed members", r.Errors)
	}
	if r.Completed+r.Errors[FaultMissing] != l.Deliveries() {
		t.Fatalf("completed %d + missing %d ≠ expected %d", r.Completed, r.Errors[FaultMissing], l.Deliveries())
	}
}

func TestParseDelivery(t *testing.T) {
	sender, seq, sent, ok := parseDelivery([]byte(`{"chat":"room1", "message":"7 1700000000000000000","name":"r1u3"}`), 1, 500, 10)
	if !ok || sender != 3 || seq != 7 || sent.UnixNano() != 1700000000000000000 {
		t.Fatalf("got %d %d %v %v", sender, seq, sent, ok)
	}
	for _, bad := range []string{`{"type":"system","message":"x"}`, `{"name":"r2u3","message":"7 1"}`, `{"name":"r1u30","message":"7 1"}`, `{"name":"r1u3","message":"700 1"}`, `not json`} {
		if _, _, _, ok := parseDelivery([]byte(bad), 1, 500, 10); ok {
			t.Errorf("%s parsed as a delivery", bad)
		}
	}
}
