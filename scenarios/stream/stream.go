// Package stream is study 003: a WebSocket server pushing to clients, some of them slow, with
// back-pressure (at most 100 sends in flight, a 5000-message queue per client dropping the
// oldest) and without. Two modes, each with back-pressure on and off: throughput (fast
// readers) and slow consumers (readers that wait after every message), every contender under
// the same memory cap so that running out of memory is an outcome the lab records.
package stream

import (
	"fmt"
	"time"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	streamload "github.com/arena-lab/arena/internal/stream"
)

// Tag is the one stream of the scenario: deliveries.
const Tag = "stream"

// Level names: mode and back-pressure.
const (
	ThroughputOn  = "throughput-on"
	ThroughputOff = "throughput-off"
	SlowOn        = "slow-on"
	SlowOff       = "slow-off"
	// The paced throughput levels: fast readers, the generator at pacedTotal messages/s in
	// all, where a server without back-pressure can keep up and so live to be compared.
	PacedOn  = "throughput-paced-on"
	PacedOff = "throughput-paced-off"
)

// shape is one preset's load.
type shape struct {
	clients    int
	rate       int // per client; 0: as fast as the server can
	throughput time.Duration
	slow       time.Duration
}

var (
	// default: the form, rate 0, on a count of clients whose bounded queues fit the
	// lab's default heap (100 × 5000 × 250 B is 125 MB of messages)
	defaultShape = shape{clients: 100, rate: 0, throughput: 15 * time.Second, slow: 30 * time.Second}
	quickShape   = shape{clients: 50, rate: 0, throughput: 6 * time.Second, slow: 15 * time.Second}
	// seed: the study's 1000 clients and its generator of 1.5 M messages/s in all
	seedShape = shape{clients: 1000, rate: 1500, throughput: 20 * time.Second, slow: 40 * time.Second}
)

const (
	size      = 250
	readDelay = 200 * time.Millisecond // the study's slow client: a sleep after each message
	// maxCost is the study's bound on what back-pressure costs in throughput.
	maxCost = 0.20
	// growthShare of the cap: more RSS than this gained in a cell's last third is growth,
	// not a runtime settling into its heap.
	growthShare = 0.10
	// pacedTotal is the paced levels' generator rate, in messages/s over all clients: arena's
	// choice, about a third of what undertow delivered with back-pressure at rate 0 on one
	// core (29,147 messages/s, docs/findings.md of 2026-11-24), so that a server without
	// back-pressure keeps up and lives. At rate 0 it cannot: its generator outruns its sends
	// and it dies of out-of-memory, leaving no baseline to set a cost against.
	pacedTotal = 10_000
)

// pacedRate is a client's generator rate at the paced levels.
func pacedRate(clients int) int { return max(1, pacedTotal/clients) }

// Scenario is the back-pressure study.
type Scenario struct{}

func (Scenario) Name() string { return "stream" }
func (Scenario) Title() string {
	return "Stream: WebSocket push to slow clients, with and without back-pressure"
}
func (Scenario) Study() string {
	return "study 003 (seeds/003): an Undertow WebSocket server with a sender actor per client and back-pressure stays alive under slow clients where the same server without it runs out of memory, at a throughput cost of up to 20 %"
}
func (Scenario) Presets() []string { return []string{"default", "seed"} }

// mode is one level's readers, back-pressure and generator rate.
type mode struct {
	name, bp string
	slow     bool
	rate     int
}

// Plan builds the levels of the preset: each mode with back-pressure on and off.
func (s Scenario) Plan(o scenario.Options) (scenario.Plan, error) {
	r, err := o.Resolve(s)
	if err != nil {
		return scenario.Plan{}, err
	}
	preset := r.Preset
	sh := defaultShape
	switch {
	case preset == "seed":
		sh = seedShape
	case r.Quick:
		sh = quickShape
	}
	sh.throughput, sh.slow = r.Duration(sh.throughput), r.Duration(sh.slow)
	rate := "as fast as the server can (rate 0)"
	if sh.rate > 0 {
		rate = fmt.Sprintf("%d messages/s per client (%d in all)", sh.rate, sh.rate*sh.clients)
	}
	plan := scenario.Plan{Preset: preset, Headline: []results.Headline{
		{Figure: streamload.NumberDelivered, Per: results.PerLevel, Label: "delivered messages/s", Unit: "messages/s"},
		{Figure: "rss_mb", Per: results.PerLevel, Label: "server RSS peak", Unit: "MB"},
	}, Notes: []string{
		fmt.Sprintf("%d clients open /stream?rate=%d&size=%d: each generator makes %s.", sh.clients, sh.rate, size, rate),
		fmt.Sprintf("throughput: every client reads as fast as it can for %s; slow: every client waits %s after each message, for %s (the study's slow clients).", sh.throughput, readDelay, sh.slow),
		"Each mode runs with BACKPRESSURE=on (≤ 100 sends in flight, ≤ 5000 waiting per client, the oldest dropped) and off (everything handed to the connection).",
		"Every contender runs under the same memory cap, the heap plus 512 MiB, in a memory cgroup where the lab can make one: out of memory is recorded, not suffered.",
		"Latency is from the ts each message carries (the server's clock at generation) to its arrival; delivered messages/s is what the clients read, over the time from the first connection to the end of the reading (or to the server's death: a server that died within a second has no rate).",
		"Every client checks its messages: gaps beyond what the server counted as dropped, copies, messages out of order or malformed, and any drop with BACKPRESSURE=off are delivery faults; a contender with any is judged faults, never bounded, and its rate is not ranked.",
		"Only contenders with /stream (features = [\"stream\"]) are measured; the others are listed as unsupported.",
	}}
	if sh.rate == 0 {
		plan.Notes = append(plan.Notes, fmt.Sprintf("The cost of back-pressure is measured at a generator rate both sides survive (throughput-paced-on and -off: fast readers, %d messages/s per client, %d in all; arena's choice): at rate 0 a server without back-pressure is outrun by its own generator and dies, and a dead baseline gives no cost.", pacedRate(sh.clients), pacedRate(sh.clients)*sh.clients))
	}
	if preset == "seed" {
		plan.Notes = append(plan.Notes, fmt.Sprintf("With back-pressure each client may hold 5100 messages: %d clients × 5100 × %d B is %.1f GB of messages before any overhead; give --heap accordingly (e.g. --heap 4096), or the bounded queues alone exceed the cap.", sh.clients, size, float64(sh.clients)*5100*size/1e9))
	}
	modes := []mode{
		{ThroughputOn, "on", false, sh.rate}, {ThroughputOff, "off", false, sh.rate},
		{SlowOn, "on", true, sh.rate}, {SlowOff, "off", true, sh.rate},
	}
	if sh.rate == 0 { // else the preset's throughput levels run at a fixed rate already (seed: the study's)
		modes = append(modes, mode{PacedOn, "on", false, pacedRate(sh.clients)}, mode{PacedOff, "off", false, pacedRate(sh.clients)})
	}
	for _, m := range modes {
		l := streamload.Load{Tag: Tag, Clients: sh.clients, Rate: m.rate, Size: size, Duration: sh.throughput, Lossless: m.bp == "off"}
		if m.slow {
			l.Slow, l.ReadDelay, l.Duration = sh.clients, readDelay, sh.slow
		}
		plan.Levels = append(plan.Levels, scenario.Level{
			Name: m.name, // no X: levels of one count are no curve
			Env:  map[string]string{"BACKPRESSURE": m.bp}, Load: l, MemoryCap: true,
		})
	}
	return plan, nil
}
