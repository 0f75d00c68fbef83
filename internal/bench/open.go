package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/load/engine"
	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/results"
)

// LateAfter is how far past its intended time an open loop's send may leave before arena
// bench open counts it late.
const LateAfter = time.Millisecond

// ClosedCandidates are the closed loop's connection counts arena bench open probes, in order.
var ClosedCandidates = []int{1, 2, 4, 8, 16, 32, 64}

// ProbeFor is how long each probe of a connection count runs (at most the round's length).
const ProbeFor = 2 * time.Second

// MatchWithin is how close a probe's throughput must come to the open loop's rate to
// reach it: probes of 2 s spread by about that much on their own.
const MatchWithin = 0.02

// requestTimeout bounds each request of the engine's loads here, as arena bench does.
const requestTimeout = 10 * time.Second

// OpenPlan is how arena bench open measures.
type OpenPlan struct {
	Target    string // host:port
	ServerPid int
	Path      string
	Rate      int // the open loop's requests per second
	// Connections bound the open loop's, as wrk2's: a hit that finds them busy waits for
	// the next free one, its wait counted (0: a connection for every hit in flight).
	Connections int
	Duration    time.Duration // each counted round
	Warmup      time.Duration // the open loop at Rate before its rounds, not counted
	Rounds      int
	// Candidates are the closed loop's connection counts to probe, increasing (nil:
	// ClosedCandidates); Probe is each probe's length (0: ProbeFor, or Duration when shorter).
	Candidates []int
	Probe      time.Duration
	Progress   io.Writer // a line per round and probe
	// HiccupCPUs, when set, are the server's CPUs, on which wrk drives the server for a
	// last Duration while a thread on the client's core measures what the machine takes
	// from that core (Hiccups): the floor under the open loop's own lateness.
	HiccupCPUs string
}

// LoadRound is one measured run of one of the engine's loops.
type LoadRound struct {
	RPS       float64 `json:"rps"`       // open: completed / duration; closed: completed / seconds
	Scheduled int64   `json:"scheduled"` // hits the schedule intended (0 in a closed loop)
	Sent      int64   `json:"sent"`
	Completed int64   `json:"completed"` // answers of any status
	Late      int64   `json:"late"`      // sends more than LateAfter past their intended time
	// ClientLate are the hits the engine itself took up more than LateAfter late; the rest
	// of Late waited for a free connection (the server's backlog).
	ClientLate int64   `json:"client_late"`
	MaxLateMs  float64 `json:"max_late_ms"`
	Errors     int64   `json:"errors"` // attempts with no correct answer: a wrong status or body, or a transport error
	// Response is from intended send times, Service from actual sends: the same in a
	// closed loop, which has no schedule.
	Response results.Latency `json:"response"`
	Service  results.Latency `json:"service"`
	Seconds  float64         `json:"seconds"` // wall time, the last answers included
	// ClientCPU and ServerCPU are % of one core over the round; ClientCPUSeconds is this
	// process's CPU time over it.
	ClientCPU        float64 `json:"client_cpu_pct"`
	ClientCPUSeconds float64 `json:"client_cpu_s"`
	ServerCPU        float64 `json:"server_cpu_pct"`
}

// LatePct is the share of sends that left late, in %.
func (r LoadRound) LatePct() float64 { return pctOf(r.Late, r.Sent) }

// ClientLatePct is the share of hits the engine itself took up late, in %.
func (r LoadRound) ClientLatePct() float64 { return pctOf(r.ClientLate, r.Sent) }

func pctOf(n, of int64) float64 {
	if of == 0 {
		return 0
	}
	return 100 * float64(n) / float64(of)
}

// ConnProbe is one short closed loop at a connection count.
type ConnProbe struct {
	Connections int     `json:"connections"`
	RPS         float64 `json:"rps"`
}

// OpenClosed is what arena bench open measured: the open loop's rounds, and beside them a
// closed loop's at the connections whose throughput matched the open loop's.
type OpenClosed struct {
	Target          string      `json:"target"`
	Path            string      `json:"path"`
	Rate            int         `json:"rate"`
	OpenConnections int         `json:"open_connections"` // the open loop's (0: unbounded)
	Seconds         float64     `json:"seconds"`
	LateAfterMs     float64     `json:"late_after_ms"`
	ClientLoops     int         `json:"client_loops"` // the engine's event loops, one per client CPU
	Open            []LoadRound `json:"open"`
	// Matched is the open loop's mean achieved requests/s, which the closed loop's
	// connections were chosen to reach, from the Probes (each ProbeSeconds long).
	Matched      float64     `json:"matched_rps"`
	ProbeSeconds float64     `json:"probe_seconds"`
	Probes       []ConnProbe `json:"probes"`
	Connections  int         `json:"connections"` // the closed loop's, chosen
	Reached      bool        `json:"reached"`     // whether its probe reached Matched (else it came nearest)
	Closed       []LoadRound `json:"closed"`
	Hiccups      *Hiccups    `json:"client_core_hiccups,omitempty"`
}

// LateShare is the open rounds' late sends over their sends, in %, the share the engine
// itself took up late, and the latest send's lateness.
func (o OpenClosed) LateShare() (pct, clientPct, maxMs float64) {
	var late, clientLate, sent int64
	for _, r := range o.Open {
		late, clientLate, sent = late+r.Late, clientLate+r.ClientLate, sent+r.Sent
		maxMs = max(maxMs, r.MaxLateMs)
	}
	return pctOf(late, sent), pctOf(clientLate, sent), maxMs
}

// MeanRPS is the rounds' mean requests/s (0 for none).
func MeanRPS(rounds []LoadRound) float64 {
	if len(rounds) == 0 {
		return 0
	}
	var s float64
	for _, r := range rounds {
		s += r.RPS
	}
	return s / float64(len(rounds))
}

// Reaches says whether a throughput reaches rate, within MatchWithin.
func Reaches(rps, rate float64) bool { return rps >= rate*(1-MatchWithin) }

// ChooseConnections picks the closed loop's connections from its probes: the fewest whose
// throughput reaches rate (reached), or else the one whose throughput came nearest to it.
func ChooseConnections(probes []ConnProbe, rate float64) (conns int, reached bool) {
	best := -1
	for i, p := range probes {
		if Reaches(p.RPS, rate) && (!reached || p.Connections < probes[best].Connections) {
			best, reached = i, true
		}
	}
	if reached {
		return probes[best].Connections, true
	}
	for i, p := range probes {
		if best < 0 || math.Abs(p.RPS-rate) < math.Abs(probes[best].RPS-rate) ||
			(math.Abs(p.RPS-rate) == math.Abs(probes[best].RPS-rate) && p.Connections < probes[best].Connections) {
			best = i
		}
	}
	if best < 0 {
		return 0, false
	}
	return probes[best].Connections, false
}

// openTag and closedTag tag the bench's loops.
const (
	openTag   = "open"
	closedTag = "closed"
)

// MeasureOpen runs the open loop at p.Rate (a warm-up, then its rounds), then probes the
// closed loop's connection counts in turn until one reaches the open loop's mean achieved
// rate, then runs the closed loop's rounds at the count chosen. The engine has one event
// loop per CPU this process may run on. What was measured so far comes back with an error too.
func MeasureOpen(ctx context.Context, p OpenPlan) (OpenClosed, error) {
	res := OpenClosed{Target: p.Target, Path: p.Path, Rate: p.Rate, OpenConnections: p.Connections, Seconds: p.Duration.Seconds(),
		LateAfterMs: float64(LateAfter) / float64(time.Millisecond)}
	eng, err := engine.New(p.Target, engine.Options{})
	if err != nil {
		return res, err
	}
	defer eng.Close()
	res.ClientLoops = eng.Loops()
	say := func(format string, a ...any) {
		if p.Progress != nil {
			fmt.Fprintf(p.Progress, "bench open: "+format+"\n", a...)
		}
	}
	if p.Warmup > 0 {
		r, err := openRound(ctx, eng, p, p.Warmup)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil {
			return res, fmt.Errorf("warm-up: %w", err)
		}
		say("warm-up: %.0f req/s, %.2f %% late", r.RPS, r.LatePct())
	}
	for i := 0; i < p.Rounds; i++ {
		r, err := openRound(ctx, eng, p, p.Duration)
		if ctx.Err() != nil { // a round cut short is no round
			return res, ctx.Err()
		}
		if err != nil {
			return res, fmt.Errorf("open loop, round %d: %w", i+1, err)
		}
		res.Open = append(res.Open, r)
		say("open loop, round %d: %.0f req/s, %.2f %% of sends late (%.3f %% taken up late by the engine), max %.2f ms", i+1, r.RPS, r.LatePct(), r.ClientLatePct(), r.MaxLateMs)
	}
	res.Matched = MeanRPS(res.Open)

	candidates := p.Candidates
	if len(candidates) == 0 {
		candidates = ClosedCandidates
	}
	probeFor := p.Probe
	if probeFor <= 0 {
		probeFor = min(ProbeFor, p.Duration)
	}
	res.ProbeSeconds = probeFor.Seconds()
	for _, c := range candidates {
		r, err := closedRound(ctx, eng, p.Target, p.Path, p.ServerPid, c, probeFor)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil {
			return res, fmt.Errorf("closed loop, probe of %d connections: %w", c, err)
		}
		res.Probes = append(res.Probes, ConnProbe{Connections: c, RPS: r.RPS})
		say("closed loop, probe of %d connections: %.0f req/s", c, r.RPS)
		if Reaches(r.RPS, res.Matched) {
			break
		}
	}
	res.Connections, res.Reached = ChooseConnections(res.Probes, res.Matched)
	for i := 0; i < p.Rounds; i++ {
		r, err := closedRound(ctx, eng, p.Target, p.Path, p.ServerPid, res.Connections, p.Duration)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		if err != nil {
			return res, fmt.Errorf("closed loop, %d connections, round %d: %w", res.Connections, i+1, err)
		}
		res.Closed = append(res.Closed, r)
		say("closed loop, %d connections, round %d: %.0f req/s", res.Connections, i+1, r.RPS)
	}
	if p.HiccupCPUs != "" {
		h := HiccupsUnderLoad(ctx, p.Target, p.Path, p.HiccupCPUs, p.Duration)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		res.Hiccups = &h
		say("client core's hiccups: %d gaps over 1 ms, the worst %.2f ms", h.Over1ms, h.MaxMs)
	}
	return res, nil
}

// openRound runs the open loop at p.Rate for d over p.Connections.
func openRound(ctx context.Context, drv load.Driver, p OpenPlan, d time.Duration) (LoadRound, error) {
	r, err := loadRound(p.ServerPid, p.Path, func(rec *load.Recorder) error {
		_, err := load.OpenLoop{
			Streams:  []load.Stream{{Tag: openTag, Request: load.Request{Path: p.Path}, Pacer: load.PerSecond(p.Rate), Connections: p.Connections}},
			Duration: d, Timeout: requestTimeout, LateAfter: LateAfter,
		}.Run(ctx, load.Target{Addr: p.Target, Driver: drv}, rec)
		return err
	})
	r.RPS = float64(r.Completed) / d.Seconds()
	return r, err
}

// closedRound runs a closed loop of conns connections for d.
func closedRound(ctx context.Context, drv load.Driver, addr, path string, serverPid, conns int, d time.Duration) (LoadRound, error) {
	r, err := loadRound(serverPid, path, func(rec *load.Recorder) error {
		_, err := load.ClosedLoop{Tag: closedTag, Request: load.Request{Path: path}, Connections: conns, Duration: d, Timeout: requestTimeout}.
			Run(ctx, load.Target{Addr: addr, Driver: drv}, rec)
		return err
	})
	if r.Seconds > 0 {
		r.RPS = float64(r.Completed) / r.Seconds
	}
	return r, err
}

// loadRound runs one load into a recorder of its own, with this process's CPU time and the
// server's measured around it. A round that completed no request measured a server that is
// not serving.
func loadRound(serverPid int, path string, run func(rec *load.Recorder) error) (LoadRound, error) {
	start := time.Now()
	rec := load.NewRecorder(start, nil)
	sp := probe.Start(serverPid, start, probePeriod)
	cpu0 := selfCPUSeconds()
	err := run(rec)
	cpu := selfCPUSeconds() - cpu0
	el := time.Since(start)
	r := LoadRound{Seconds: el.Seconds(), ClientCPUSeconds: cpu, ClientCPU: 100 * cpu / el.Seconds(),
		ServerCPU: results.UsageOf(sp.Stop(), 0, 0).CPUPctMean}
	if err != nil {
		return r, err
	}
	tags := rec.Results()
	if len(tags) != 1 {
		return r, errors.New("the load recorded nothing")
	}
	t := tags[0]
	r.Scheduled, r.Sent, r.Completed, r.Late, r.MaxLateMs = t.Scheduled, t.Sent, t.Completed, t.Late, t.MaxLateMs
	r.ClientLate = t.ClientLate
	r.Errors = t.Failed()
	r.Response, r.Service = results.LatencyOf(t.Response), results.LatencyOf(t.Service)
	if r.Completed == 0 {
		return r, fmt.Errorf("no request completed (errors: %v): is the target serving %s?", t.Errors, path)
	}
	return r, nil
}
