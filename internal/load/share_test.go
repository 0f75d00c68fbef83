package load

import (
	"testing"
	"time"
)

// TestShardsDealTheScheduleOut: three shards of a pacer send every hit of it exactly once,
// each at the very time the whole schedule intends it.
func TestShardsDealTheScheduleOut(t *testing.T) {
	whole := PerSecond(997)
	d := 3 * time.Second
	seen := map[time.Duration]int{}
	var total int64
	for i := int64(0); i < 3; i++ {
		s := ShardPacer{P: whole, I: i, N: 3}
		n := HitsWithin(s, d)
		total += n
		for k := int64(0); k < n; k++ {
			due, _ := s.Due(k)
			want, _ := whole.Due(k*3 + i)
			if due != want {
				t.Fatalf("shard %d hit %d due %s, the whole schedule's hit %d at %s", i, k, due, k*3+i, want)
			}
			seen[due]++
		}
	}
	if want := HitsWithin(whole, d); total != want || int64(len(seen)) != want {
		t.Fatalf("shards send %d hits at %d distinct times; the whole sends %d", total, len(seen), want)
	}
}

// TestClosedLoopSharesAddUp: connections and counts split as evenly as they go, and a loop
// is not split more ways than it has connections.
func TestClosedLoopSharesAddUp(t *testing.T) {
	c := ClosedLoop{Connections: 200, Requests: 10001}
	var conns int
	var reqs int64
	for i := 0; i < 3; i++ {
		s, err := ShareOf(c, i, 3)
		if err != nil {
			t.Fatal(err)
		}
		conns += s.(ClosedLoop).Connections
		reqs += s.(ClosedLoop).Requests
	}
	if conns != 200 || reqs != 10001 {
		t.Fatalf("shares hold %d connections and %d requests, want 200 and 10001", conns, reqs)
	}
	if _, err := ShareOf(ClosedLoop{Connections: 2}, 0, 3); err == nil {
		t.Fatal("2 connections split 3 ways: want an error")
	}
}
