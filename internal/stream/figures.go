package stream

import (
	"encoding/json"
	"fmt"

	"github.com/arena-lab/arena/internal/results"
)

// Kind is the key a cell keeps a /stream load's figures under.
const Kind = "stream"

// Figures are what the clients of a /stream load received and what the server said it did:
// study 003's figures beyond latency.
type Figures struct {
	Clients     int     `json:"clients"`
	Connected   int     `json:"connected"`
	SlowClients int     `json:"slow_clients"`
	ReadDelayMs float64 `json:"read_delay_ms,omitempty"` // per message, for the slow ones
	Rate        int     `json:"rate_per_client"`         // messages/s asked of each client's generator; 0: as fast as it can
	Size        int     `json:"size_bytes"`
	Delivered   int64   `json:"delivered"`
	// PerSecond is Delivered over Seconds, the time from the load's start (its first
	// connection) to the end of the reading, or to the server's death. A load cut short
	// within a second has no rate (Seconds and PerSecond 0).
	PerSecond float64 `json:"delivered_per_s"`
	Seconds   float64 `json:"rate_over_s"`
	CutShort  bool    `json:"cut_short"` // the load ended early: the server died, or Ctrl-C
	// PerClient is each client's messages/s over the same time: the slowest, the median and
	// the fastest.
	PerClient results.Spread `json:"per_client_per_s"`
	// Gaps are messages a client never got (jumps in seq): what the server dropped for it,
	// if it counted them (Server.Dropped).
	Gaps        int64 `json:"gaps"`
	Malformed   int64 `json:"malformed"`
	OutOfOrder  int64 `json:"out_of_order"` // came after a later one, filling a gap
	Duplicated  int64 `json:"duplicated"`   // came again
	ClosedEarly int   `json:"closed_early"` // clients the server closed or lost before the end
	// Lossless: the server was told BACKPRESSURE=off, so it may drop nothing.
	Lossless bool `json:"lossless,omitempty"`
	// Server is the last answer of /stream/stats, taken after the clients closed.
	Server *Stats `json:"server,omitempty"`
	// StatsTimeline is /stream/stats polled every second, and once more after the clients
	// closed (the last sample).
	StatsTimeline []StatsSample `json:"stats_timeline"`
	// StatsFailed counts polls of /stream/stats with no answer within 2 s.
	StatsFailed int  `json:"stats_failed"`
	Responsive  bool `json:"responsive_at_end"`
	// Rates are each client's messages/s, carried from a share to Load.Join only (which
	// empties them): the spread over all clients is taken from them.
	Rates []float64 `json:"per_client_rates,omitempty"`
}

var (
	_ results.Figures = (*Figures)(nil)
	_ results.Checked = (*Figures)(nil)
)

func (f *Figures) Kind() string { return Kind }

// Numbers: delivered messages/s, compared over repeats (none when the load had no rate),
// and what the server said it dropped.
func (f *Figures) Numbers() map[string]float64 {
	n := map[string]float64{}
	if f.Seconds > 0 {
		n[NumberDelivered] = f.PerSecond
	}
	if f.Server != nil {
		n[NumberDropped] = float64(f.Server.Dropped)
	}
	return n
}

// Faults are what the clients caught the server at: copies, messages out of order or
// malformed, gaps beyond the drops it counted (lost), and drops it counted though told to
// drop nothing. Gaps are compared with the server's count only when it gave one.
func (f *Figures) Faults() map[string]int64 {
	out := map[string]int64{results.FaultDuplicated: f.Duplicated, results.FaultReordered: f.OutOfOrder,
		results.FaultMalformed: f.Malformed}
	if f.Server != nil {
		out[results.FaultLost] = f.Gaps - f.Server.Dropped
		if f.Lossless {
			out[results.FaultDroppedUnasked] = f.Server.Dropped
		}
	}
	return out
}

// Silence is the longest stretch the server left /stream/stats unanswered, and when it
// began, in seconds from the start of the polling (the last poll answered before it).
func (f *Figures) Silence() (from, longest float64) {
	var lastAnswer float64
	for _, s := range f.StatsTimeline {
		if s.OK {
			lastAnswer = s.T
			continue
		}
		if d := s.T - lastAnswer; d > longest {
			from, longest = lastAnswer, d
		}
	}
	return from, longest
}

// Unresponsive says whether the server left its stats unanswered for longer than
// results.SilenceLimit: the lab's one notion of unresponsive (a /stream load has no request
// timeout of its own).
func (f *Figures) Unresponsive() bool {
	_, longest := f.Silence()
	return longest >= results.SilenceLimit(0).Seconds()
}

// The names of a /stream cell's numbers.
const (
	NumberDelivered = "delivered_per_s"
	NumberDropped   = "dropped"
)

// FiguresOf reads a cell's /stream figures; false when the cell has none (it did not run a
// /stream load, or it never started).
func FiguresOf(c results.Cell) (*Figures, bool) {
	var f Figures
	if !c.FiguresOf(Kind, &f) {
		return nil, false
	}
	return &f, true
}

// Stats is /stream/stats.
type Stats struct {
	Clients   int64 `json:"clients"`
	Generated int64 `json:"generated"`
	Sent      int64 `json:"sent"`
	Dropped   int64 `json:"dropped"`
}

// StatsSample is one poll of /stream/stats.
type StatsSample struct {
	T  float64 `json:"t"` // seconds since the load started
	OK bool    `json:"ok"`
	Stats
}

// Join adds the shares' clients and deliveries: the rate over the longest share's time, the
// per-client spread over every client; the server's counters are the ones read last (after
// the last share's clients closed: the shares' clocks differ, the counters only grow), and
// its timeline is share 0's, the one that polled.
func (Load) Join(raw []json.RawMessage) (results.Figures, error) {
	out := &Figures{}
	var rates []float64
	var last *StatsSample
	for k, r := range raw {
		var f Figures
		if err := json.Unmarshal(r, &f); err != nil {
			return nil, fmt.Errorf("share %d's stream figures: %w", k, err)
		}
		if k == 0 {
			out.Rate, out.Size, out.ReadDelayMs, out.Lossless = f.Rate, f.Size, f.ReadDelayMs, f.Lossless
		}
		out.Clients += f.Clients
		out.Connected += f.Connected
		out.SlowClients += f.SlowClients
		out.Delivered += f.Delivered
		out.Seconds = max(out.Seconds, f.Seconds)
		out.CutShort = out.CutShort || f.CutShort
		out.Gaps += f.Gaps
		out.Malformed += f.Malformed
		out.OutOfOrder += f.OutOfOrder
		out.Duplicated += f.Duplicated
		out.ClosedEarly += f.ClosedEarly
		rates = append(rates, f.Rates...)
		n := len(f.StatsTimeline)
		if n == 0 {
			continue
		}
		if n > 1 { // the poller: its samples before its final one
			out.StatsTimeline = append(out.StatsTimeline, f.StatsTimeline[:n-1]...)
			out.StatsFailed += f.StatsFailed
			if !f.StatsTimeline[n-1].OK {
				out.StatsFailed--
			}
		}
		if fin := f.StatsTimeline[n-1]; last == nil || later(fin, *last) {
			last = &fin
		}
	}
	if out.Seconds > 0 {
		out.PerSecond = float64(out.Delivered) / out.Seconds
		out.PerClient = results.SpreadOf(rates)
	}
	if last != nil {
		out.StatsTimeline = append(out.StatsTimeline, *last)
		if last.OK {
			s := last.Stats
			out.Server, out.Responsive = &s, true
		} else {
			out.StatsFailed++
		}
	}
	return out, nil
}

// later says whether a was read after b: an answer beats none, and the server's counters
// only grow.
func later(a, b StatsSample) bool {
	if a.OK != b.OK {
		return a.OK
	}
	if a.Generated != b.Generated {
		return a.Generated > b.Generated
	}
	return a.Dropped > b.Dropped
}
