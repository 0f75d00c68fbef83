package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/load/engine"
)

// MaxLoops bounds --loops: far more event loops than cores measure the scheduler.
const MaxLoops = 64

// CheckLoopCounts checks --loops, the event-loop counts to measure: each 1..MaxLoops, in
// increasing order, so that the table reads from one loop up.
func CheckLoopCounts(counts []int) error {
	return checkCounts("loops", "event-loop", "event loops", counts, MaxLoops)
}

// LoopCPUs are the CPUs this process is pinned to for n event loops: the first n of cpus,
// or all of them when there are fewer. The engine puts loop i on the i mod len-th of them.
func LoopCPUs(cpus []int, n int) []int {
	return slices.Clone(cpus[:min(n, len(cpus))])
}

// loopPlaces lists loop i's CPU for n loops on cpus: "0,1,0".
func loopPlaces(cpus []int, n int) string {
	set := LoopCPUs(cpus, n)
	places := make([]int, n)
	for i := range places {
		places[i] = set[i%len(set)]
	}
	return lab.FormatCPUs(places)
}

// ScalingLayout says where the server and each count's loops run, and warns where loops
// share a core (more loops than CPUs: the figure is simulated) and where the client shares
// one with the server (their figures split that core).
func ScalingLayout(server, client []int, counts []int) (layout string, warnings []string) {
	parts := []string{"server on CPU " + lab.FormatCPUs(server)}
	for _, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s on CPU %s", n, Plural(n, "loop", "loops"), loopPlaces(client, n)))
	}
	layout = strings.Join(parts, "; ")
	for _, n := range counts {
		if n > len(client) {
			warnings = append(warnings, fmt.Sprintf("%d loops on %d %s: simulated, loops share cores", n, len(client), Plural(len(client), "CPU", "CPUs")))
		}
	}
	for _, n := range counts {
		var both []int
		for _, c := range LoopCPUs(client, n) {
			if slices.Contains(server, c) {
				both = append(both, c)
			}
		}
		if len(both) > 0 {
			warnings = append(warnings, fmt.Sprintf("the client shares CPU %s with the server from %d %s on: they split that core, and the server's figure is not one core's",
				lab.FormatCPUs(both), n, Plural(n, "loop", "loops")))
			break // the counts' CPUs only grow
		}
	}
	return layout, warnings
}

// Plural is one or many, as n says.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ScalingPlan is how arena bench scaling measures.
type ScalingPlan struct {
	Target      string // host:port of the downstream
	ServerPid   int
	ServerCPUs  []int
	Path        string
	Loops       []int // event-loop counts, increasing
	ClientCPUs  []int
	Connections int // in all, dealt out among the loops
	Duration    time.Duration
	Warmup      time.Duration // before each client's first round at a count, not counted
	Rounds      int
	Wrk         bool      // wrk -t N beside each count
	Progress    io.Writer // a line per round
}

// ScalingRound is one counted round of one client at one count.
type ScalingRound struct {
	RPS       float64 `json:"rps"`
	ClientCPU float64 `json:"client_cpu_pct"` // % of one core: above 100 with several loops
	ServerCPU float64 `json:"server_cpu_pct"`
	// CPUMicros is the client's CPU time per request, in µs (wrk's from its mean CPU %).
	CPUMicros float64 `json:"client_cpu_us_per_request"`
	P99       float64 `json:"p99_ms"` // service time
	Errors    int64   `json:"errors"`
}

// ScalingLevel is one client at one count of loops (wrk: threads) over its rounds.
type ScalingLevel struct {
	Loops  int            `json:"loops"`
	Client string         `json:"client"` // "arena" or "wrk"
	CPUs   string         `json:"cpus"`   // the CPUs it was pinned to
	Rounds []ScalingRound `json:"rounds"`
}

// Mean is the level's mean requests/s, client and server CPU, and CPU µs per request.
func (l ScalingLevel) Mean() (rps, clientCPU, serverCPU, micros float64) {
	if len(l.Rounds) == 0 {
		return 0, 0, 0, 0
	}
	for _, r := range l.Rounds {
		rps, clientCPU, serverCPU, micros = rps+r.RPS, clientCPU+r.ClientCPU, serverCPU+r.ServerCPU, micros+r.CPUMicros
	}
	n := float64(len(l.Rounds))
	return rps / n, clientCPU / n, serverCPU / n, micros / n
}

// Scaling is what arena bench scaling measured.
type Scaling struct {
	Target      string         `json:"target"`
	Path        string         `json:"path"`
	Connections int            `json:"connections"`
	Seconds     float64        `json:"seconds"`
	ServerCPUs  string         `json:"server_cpus"`
	ClientCPUs  string         `json:"client_cpus"`
	Layout      string         `json:"layout"`
	Warnings    []string       `json:"warnings"`
	Levels      []ScalingLevel `json:"levels"`
}

// Of is the level of client at n loops, or nil.
func (s Scaling) Of(n int, client string) *ScalingLevel {
	for i := range s.Levels {
		if s.Levels[i].Loops == n && s.Levels[i].Client == client {
			return &s.Levels[i]
		}
	}
	return nil
}

// MeasureScaling measures every count of loops: before each of its rounds this process is
// pinned to the count's CPUs and a new engine with that many loops is made; with p.Wrk,
// wrk -t N (taskset to the same CPUs) follows each. Each level is warmed before its first
// round; the levels then take turns round by round, so that drift in the machine hits them
// alike. What was measured so far comes back with an error too.
func MeasureScaling(ctx context.Context, p ScalingPlan) (Scaling, error) {
	res := Scaling{Target: p.Target, Path: p.Path, Connections: p.Connections, Seconds: p.Duration.Seconds(),
		ServerCPUs: lab.FormatCPUs(p.ServerCPUs), ClientCPUs: lab.FormatCPUs(p.ClientCPUs)}
	res.Layout, res.Warnings = ScalingLayout(p.ServerCPUs, p.ClientCPUs, p.Loops)
	var wrk string
	if p.Wrk {
		var err error
		if wrk, err = WrkPath(); err != nil {
			return res, err
		}
	}
	for _, n := range p.Loops {
		cpus := lab.FormatCPUs(LoopCPUs(p.ClientCPUs, n))
		res.Levels = append(res.Levels, ScalingLevel{Loops: n, Client: "arena", CPUs: cpus})
		if p.Wrk {
			res.Levels = append(res.Levels, ScalingLevel{Loops: n, Client: "wrk", CPUs: cpus})
		}
	}
	for r := 0; r < p.Rounds; r++ {
		for i := range res.Levels {
			lv := &res.Levels[i]
			if r == 0 && p.Warmup > 0 {
				if _, err := scalingRound(ctx, p, wrk, lv, p.Warmup, false); err != nil {
					if ctx.Err() != nil {
						return res, ctx.Err()
					}
					return res, fmt.Errorf("warm-up of %s at %d loops: %w", lv.Client, lv.Loops, err)
				}
			}
			round, err := scalingRound(ctx, p, wrk, lv, p.Duration, true)
			if ctx.Err() != nil { // a round cut short is no round
				return res, ctx.Err()
			}
			if err != nil {
				return res, fmt.Errorf("%s at %d loops, round %d: %w", lv.Client, lv.Loops, r+1, err)
			}
			lv.Rounds = append(lv.Rounds, round)
			if p.Progress != nil {
				fmt.Fprintf(p.Progress, "bench scaling: %s, %d %s on CPU %s, round %d: %.0f req/s, client CPU %.0f %%\n",
					lv.Client, lv.Loops, Plural(lv.Loops, "loop", "loops"), lv.CPUs, r+1, round.RPS, round.ClientCPU)
			}
		}
	}
	return res, nil
}

// scalingRound runs one round of lv's client for d: the engine in this process, pinned to
// the count's CPUs, or wrk -t N on them. A counted wrk round may not have timeouts (a
// warm-up may).
func scalingRound(ctx context.Context, p ScalingPlan, wrk string, lv *ScalingLevel, d time.Duration, isCounted bool) (ScalingRound, error) {
	cpus := LoopCPUs(p.ClientCPUs, lv.Loops)
	if lv.Client == "wrk" {
		w, err := runWrkThreads(ctx, wrk, lv.Loops, p.Target, p.Path, p.Connections, d, lab.FormatCPUs(cpus), p.ServerPid)
		if isCounted {
			w, err = counted(w, err)
		}
		if err != nil {
			return ScalingRound{}, err
		}
		r := ScalingRound{RPS: w.RPS, ClientCPU: w.ClientCPU, ServerCPU: w.ServerCPU, P99: w.P99ms, Errors: int64(w.Timeouts)}
		if w.RPS > 0 {
			r.CPUMicros = w.ClientCPU / 100 / w.RPS * 1e6
		}
		return r, nil
	}
	if err := lab.PinSelf(cpus); err != nil {
		return ScalingRound{}, err
	}
	eng, err := engine.New(p.Target, engine.Options{Loops: lv.Loops})
	if err != nil {
		return ScalingRound{}, err
	}
	defer eng.Close()
	lr, err := closedRound(ctx, eng, p.Target, p.Path, p.ServerPid, p.Connections, d)
	r := ScalingRound{RPS: lr.RPS, ClientCPU: lr.ClientCPU, ServerCPU: lr.ServerCPU, P99: lr.Service.P99, Errors: lr.Errors}
	if lr.Completed > 0 {
		r.CPUMicros = lr.ClientCPUSeconds / float64(lr.Completed) * 1e6
	}
	return r, err
}
