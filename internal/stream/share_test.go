package stream

import (
	"encoding/json"
	"testing"
)

// TestSharesDealWholeClients: the shares hold every client once, the slow ones spread as
// evenly as the rest; no more shares than clients.
func TestSharesDealWholeClients(t *testing.T) {
	l := Load{Clients: 100, Slow: 7}
	var clients, slow int
	for i := 0; i < 3; i++ {
		s, err := l.Share(i, 3)
		if err != nil {
			t.Fatal(err)
		}
		clients += s.(Load).Clients
		slow += s.(Load).Slow
	}
	if clients != 100 || slow != 7 {
		t.Fatalf("shares hold %d clients, %d slow; want 100 and 7", clients, slow)
	}
	if _, err := (Load{Clients: 2}).Share(0, 3); err == nil {
		t.Fatal("2 clients split 3 ways: want an error")
	}
}

// TestJoinAddsSharesAndKeepsTheLastCounters: deliveries add up, the rate counts over the
// longest share, the per-client spread covers every client, and the server's counters are
// the latest reading whichever share took it; the poller's timeline is kept.
func TestJoinAddsSharesAndKeepsTheLastCounters(t *testing.T) {
	poller := Figures{Clients: 2, Connected: 2, Delivered: 300, Seconds: 10, Gaps: 5, Rates: []float64{10, 20},
		StatsTimeline: []StatsSample{{T: 1, OK: true, Stats: Stats{Generated: 100}}, {T: 2, OK: true, Stats: Stats{Generated: 200}},
			{T: 11, OK: true, Stats: Stats{Generated: 900, Dropped: 4}}}}
	other := Figures{Clients: 1, Connected: 1, Delivered: 300, Seconds: 12, Gaps: 1, Rates: []float64{30},
		StatsTimeline: []StatsSample{{T: 11.5, OK: true, Stats: Stats{Generated: 950, Dropped: 6}}}}
	var raw []json.RawMessage
	for _, f := range []Figures{poller, other} {
		b, _ := json.Marshal(f)
		raw = append(raw, b)
	}
	got, err := Load{}.Join(raw)
	if err != nil {
		t.Fatal(err)
	}
	f := got.(*Figures)
	if f.Clients != 3 || f.Delivered != 600 || f.Seconds != 12 || f.PerSecond != 50 || f.Gaps != 6 {
		t.Errorf("joined %+v", f)
	}
	if f.PerClient.Median != 20 || f.PerClient.Min != 10 || f.PerClient.Max != 30 {
		t.Errorf("per-client spread %+v, want 10/20/30", f.PerClient)
	}
	if f.Server == nil || f.Server.Dropped != 6 || len(f.StatsTimeline) != 3 || f.Rates != nil {
		t.Errorf("server %+v, timeline %d samples, rates %v; want the last reading (dropped 6), 3 samples, no rates", f.Server, len(f.StatsTimeline), f.Rates)
	}
	if lost := f.Faults()["lost"]; lost != 0 {
		t.Errorf("lost %d: gaps 6, dropped 6", lost)
	}
}
