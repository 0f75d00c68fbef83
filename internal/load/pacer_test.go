package load

import (
	"testing"
	"time"
)

func TestConstantPacerSpacesHitsEvenly(t *testing.T) {
	p := PerSecond(10)
	for n, want := range []time.Duration{0, 100 * time.Millisecond, 200 * time.Millisecond} {
		got, ok := p.Due(int64(n))
		if !ok || got != want {
			t.Fatalf("Due(%d) = %v,%v; want %v", n, got, ok, want)
		}
	}
	if got, _ := p.Due(600); got != time.Minute {
		t.Fatalf("Due(600) = %v; want 1m (no drift over many hits)", got)
	}
}

func TestConstantPacerDoesNotDriftWithUnevenPeriods(t *testing.T) {
	p := ConstantPacer{Freq: 3, Per: time.Second} // 333.33… ms apart
	if got, _ := p.Due(3); got != time.Second {
		t.Fatalf("Due(3) = %v; want exactly 1s", got)
	}
	if got, _ := p.Due(3000); got != 1000*time.Second {
		t.Fatalf("Due(3000) = %v; want exactly 1000s", got)
	}
}

func TestHitsWithinCountsTheSchedule(t *testing.T) {
	cases := []struct {
		p    Pacer
		d    time.Duration
		want int64
	}{
		{PerSecond(10), 60 * time.Second, 600},
		{PerSecond(1), 60 * time.Second, 60},
		{PerSecond(10), 150 * time.Millisecond, 2},
		{PerSecond(0), time.Second, 0},
	}
	for _, c := range cases {
		if got := HitsWithin(c.p, c.d); got != c.want {
			t.Errorf("HitsWithin(%v, %v) = %d; want %d", c.p, c.d, got, c.want)
		}
	}
}

func TestPacerRateAndName(t *testing.T) {
	p := ConstantPacer{Freq: 5, Per: 500 * time.Millisecond}
	if p.Rate() != 10 {
		t.Fatalf("Rate() = %v; want 10", p.Rate())
	}
	if PerSecond(10).String() != "10/s" {
		t.Fatalf("String() = %q", PerSecond(10).String())
	}
}
