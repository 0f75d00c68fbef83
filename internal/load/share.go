package load

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// A Divisible load can be split among n load agents so that the shares together are the
// load one client would have sent: the open loop's schedule dealt out hit by hit, the closed
// loop's connections and count split as evenly as they go, chat's rooms whole. Each kind says
// so with a `var _ Divisible = …` line beside it.
type Divisible interface {
	Load
	// Share is part i of n (0 ≤ i < n).
	Share(i, n int) (Load, error)
	// Join combines the figures the shares returned, each as its JSON; nil when the load
	// returns none.
	Join(figures []json.RawMessage) (results.Figures, error)
}

// ShareOf is part i of n of ld, or an error when ld cannot be split that way (a kind of load
// that is not Divisible, or more agents than the load has parts). One part is the load itself.
func ShareOf(ld Load, i, n int) (Load, error) {
	if n < 1 || i < 0 || i >= n {
		return nil, fmt.Errorf("share %d of %d: no such share", i, n)
	}
	if n == 1 {
		return ld, nil
	}
	d, ok := ld.(Divisible)
	if !ok {
		return nil, fmt.Errorf("a load of type %T cannot be split among agents", ld)
	}
	return d.Share(i, n)
}

// evenPart is part i of total split n ways, the first total%n parts one larger.
func evenPart(total, i, n int64) int64 {
	p := total / n
	if i < total%n {
		p++
	}
	return p
}

// ShardPacer is hits k ≡ I (mod N) of P's schedule: N of them together send every hit of P,
// each at the very time P intends it, so the union is the one-client schedule.
type ShardPacer struct {
	P    Pacer
	I, N int64
}

var _ Pacer = ShardPacer{}

// Due is P's hit n·N + I.
func (s ShardPacer) Due(n int64) (time.Duration, bool) {
	if n < 0 || s.N < 1 {
		return 0, false
	}
	return s.P.Due(n*s.N + s.I)
}

// Rate is the shard's share of P's rate.
func (s ShardPacer) Rate() float64 { return s.P.Rate() / float64(s.N) }

func (s ShardPacer) String() string { return fmt.Sprintf("%s, hits ≡ %d mod %d", s.P, s.I, s.N) }

var _ Divisible = OpenLoop{}

// Share deals the schedule out hit by hit (ShardPacer); a bounded stream's connections are
// split as evenly as they go, at least one each.
func (o OpenLoop) Share(i, n int) (Load, error) {
	out := o
	out.Streams = make([]Stream, len(o.Streams))
	for k, s := range o.Streams {
		s.Pacer = ShardPacer{P: s.Pacer, I: int64(i), N: int64(n)}
		if s.Connections > 0 {
			s.Connections = int(max(1, evenPart(int64(s.Connections), int64(i), int64(n))))
		}
		out.Streams[k] = s
	}
	return out, nil
}

// Join: an open loop has no figures.
func (OpenLoop) Join([]json.RawMessage) (results.Figures, error) { return nil, nil }

var _ Divisible = ClosedLoop{}

// Share splits the connections and the request count as evenly as they go; a loop has no
// more shares than connections.
func (c ClosedLoop) Share(i, n int) (Load, error) {
	if n > c.Connections {
		return nil, fmt.Errorf("a closed loop of %d connections cannot be split among %d agents", c.Connections, n)
	}
	out := c
	out.Connections = int(evenPart(int64(c.Connections), int64(i), int64(n)))
	if c.Requests > 0 {
		out.Requests = evenPart(c.Requests, int64(i), int64(n))
	}
	return out, nil
}

// Join: a closed loop has no figures.
func (ClosedLoop) Join([]json.RawMessage) (results.Figures, error) { return nil, nil }

var _ Divisible = Steady{}

// Share splits the loop's connections; each share warms up and settles on its own, then
// measures for Measure from when it settled.
func (s Steady) Share(i, n int) (Load, error) {
	loop, err := s.Loop.Share(i, n)
	if err != nil {
		return nil, err
	}
	out := s
	out.Loop = loop.(ClosedLoop)
	return out, nil
}

// Join: settled when every share settled; the longest warm-up and measured span; each
// share's warm-up windows added window by window (the shares' throughputs sum), and the
// spread of the last Agree of them.
func (s Steady) Join(raw []json.RawMessage) (results.Figures, error) {
	var out SteadyFigures
	out.Settled = true
	for k, r := range raw {
		var f SteadyFigures
		if err := json.Unmarshal(r, &f); err != nil {
			return nil, fmt.Errorf("share %d's steady-state figures: %w", k, err)
		}
		out.Settled = out.Settled && f.Settled
		out.WarmupS = max(out.WarmupS, f.WarmupS)
		out.MeasuredS = max(out.MeasuredS, f.MeasuredS)
		for w, v := range f.Windows {
			if w >= len(out.Windows) {
				out.Windows = append(out.Windows, 0)
			}
			out.Windows[w] += v
		}
	}
	if n := len(out.Windows); s.Agree > 0 && n >= s.Agree {
		out.SpreadPct = results.SpreadOf(out.Windows[n-s.Agree:]).Pct
	}
	return out, nil
}
