package chat

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

func TestLoadDeliversEveryMessageOnceInOrder(t *testing.T) {
	s, err := StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := Load{Tag: "chat", Rooms: 2, Users: 5, Messages: 50, Period: 5 * time.Millisecond, JoinWait: 200 * time.Millisecond, Linger: 5 * time.Second}
	rec := load.NewRecorder(time.Now(), nil)
	f := run(t, l, s.Addr(), rec)
	r := rec.Results()[0]
	if r.Scheduled != 2500 || r.Completed != 2500 || r.Response.TotalCount() != 2500 {
		t.Fatalf("expected %d, completed %d, timed %d; want 2500 each", r.Scheduled, r.Completed, r.Response.TotalCount())
	}
	if len(r.Errors) != 0 || f.Members != 10 || f.CutShort || len(faultsOf(f)) != 0 {
		t.Fatalf("errors %v, figures %+v; want none", r.Errors, f)
	}
	// Its sends, which its late ones are a share of (lab.clientBound): 10 members × 50.
	if f.Sends != 500 {
		t.Fatalf("%d sends; want 500", f.Sends)
	}
	joined, err := Load{}.Join([]json.RawMessage{[]byte(`{"sends":500}`), []byte(`{"sends":300}`)})
	if err != nil || joined.(*Figures).Sends != 800 {
		t.Fatalf("two shares of 500 and 300 sends joined: %+v, %v", joined, err)
	}
}

// run drives l against addr and returns its figures.
func run(t *testing.T, l Load, addr string, rec *load.Recorder) *Figures {
	t.Helper()
	got, err := l.Run(context.Background(), load.Target{Addr: addr}, rec)
	if err != nil {
		t.Fatal(err)
	}
	return got.(*Figures)
}

// faultsOf is the faults a cell keeps of f.
func faultsOf(f *Figures) map[string]int64 {
	var c results.Cell
	_ = c.PutFigures(f)
	return c.Faults
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
	f := run(t, l, s.Addr(), rec)
	r := rec.Results()[0]
	if f.Lost == 0 || r.Errors[FaultClosed] == 0 {
		t.Fatalf("figures %+v, errors %v; want lost deliveries and closed members", f, r.Errors)
	}
	if r.Completed+f.Lost != l.Deliveries() {
		t.Fatalf("completed %d + lost %d ≠ expected %d", r.Completed, f.Lost, l.Deliveries())
	}
}

// A load the lab ends early (the server died, or Ctrl-C) counts nothing lost: what never
// came is the outcome's doing.
func TestLoadCutShortCountsNothingLost(t *testing.T) {
	s, err := StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := Load{Tag: "chat", Rooms: 1, Users: 3, Messages: 200, Period: 5 * time.Millisecond, JoinWait: 100 * time.Millisecond, Linger: time.Second}
	ctx, cancel := context.WithCancel(context.Background())
	rec := load.NewRecorder(time.Now(), nil)
	go func() {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			if r := rec.Results(); len(r) > 0 && r[0].Completed >= 30 {
				break
			}
		}
		cancel()
	}()
	got, err := l.Run(ctx, load.Target{Addr: s.Addr()}, rec)
	if err != nil {
		t.Fatal(err)
	}
	f := got.(*Figures)
	if !f.CutShort || f.Lost != 0 || rec.Results()[0].Completed >= l.Deliveries() {
		t.Fatalf("figures %+v after %d deliveries; want cut short, nothing lost", f, rec.Results()[0].Completed)
	}
}

func TestParseDelivery(t *testing.T) {
	d, kind := parseDelivery([]byte(`{"chat":"room1", "message":"7 1700000000000000000","name":"r1u3"}`), 1, 500, 10)
	if kind != roomDelivery || d.sender != 3 || d.seq != 7 || d.sent.UnixNano() != 1700000000000000000 {
		t.Fatalf("got %+v %v", d, kind)
	}
	for frame, want := range map[string]frameKind{
		`{"type":"system","message":"x"}`:                  otherFrame,
		`{"name":"r1u30","chat":"room1","message":"7 1"}`:  otherFrame, // no member of the load
		`{"name":"r1u3","chat":"room1","message":"700 1"}`: otherFrame, // no message of the load
		`{"name":"r1u3","chat":"room1","message":"seven"}`: otherFrame,
		`not json`: otherFrame,
		`{"name":"r2u3","chat":"room2","message":"7 1"}`: leakedFrame, // another room's
		`{"name":"r2u3","chat":"room1","message":"7 1"}`: leakedFrame, // another room's member, relabelled
		`{"name":"r1u3","chat":"room2","message":"7 1"}`: leakedFrame,
		`{"name":"r1u3","message":"7 1"}`:                leakedFrame, // no room at all
	} {
		if _, got := parseDelivery([]byte(frame), 1, 500, 10); got != want {
			t.Errorf("%s: kind %d, want %d", frame, got, want)
		}
	}
}
