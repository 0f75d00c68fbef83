// Package bench measures the lab's own instruments: the load engine's closed-loop
// throughput beside wrk's on the same core against the same server, and the engine's
// coordinated-omission correction against a server frozen with SIGSTOP.
package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"syscall"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/load/engine"
	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/results"
)

// Round is one measured run of one client.
type Round struct {
	Client    string  // "arena" or "wrk"
	RPS       float64 // requests per second
	ClientCPU float64 // the client's own CPU, % of one core
	ServerCPU float64 // the server's, % of one core
	P99ms     float64 // the client's own p99 (wrk's is its closed-loop latency)
	Timeouts  int     // wrk's requests unanswered within its 2 s
}

// counted refuses a counted round in which requests timed out: its requests/s is a server
// stalling, not its throughput. A warm-up may have them (a JVM still compiling).
func counted(r Round, err error) (Round, error) {
	if err == nil && r.Timeouts > 0 {
		return r, fmt.Errorf("wrk saw %d requests time out (2 s) in a counted round: the target is not healthy", r.Timeouts)
	}
	return r, err
}

// Throughput is the engine-versus-wrk comparison.
type Throughput struct {
	Target      string
	Path        string
	Connections int
	Seconds     float64
	Rounds      []Round
}

// Mean is the mean RPS of one client's rounds.
func (t Throughput) Mean(client string) (rps, cpu float64) {
	return meanOf(t.Rounds, func(r Round) (bool, float64, float64) { return r.Client == client, r.RPS, r.ClientCPU })
}

// meanOf is the mean of the two figures pick gives for the rounds it keeps.
func meanOf[R any](rounds []R, pick func(R) (keep bool, a, b float64)) (float64, float64) {
	var sa, sb, n float64
	for _, r := range rounds {
		if keep, a, b := pick(r); keep {
			sa, sb, n = sa+a, sb+b, n+1
		}
	}
	if n == 0 {
		return 0, 0
	}
	return sa / n, sb / n
}

// WrkPath finds wrk, with a hint on how to install it.
func WrkPath() (string, error) {
	p, err := exec.LookPath("wrk")
	if err != nil {
		return "", fmt.Errorf("wrk is not installed (Debian: apt-get install wrk)")
	}
	return p, nil
}

// CompareWithWrk alternates rounds of the engine and of wrk (one thread, the same
// connections, the same client CPUs) against addr, so drift in the server hits both alike.
// The engine runs in this process, which must already be pinned to clientCPUs.
func CompareWithWrk(ctx context.Context, addr, path string, serverPid int, conns int, d, warmup time.Duration, rounds int, clientCPUs string) (Throughput, error) {
	wrk, err := WrkPath()
	if err != nil {
		return Throughput{}, err
	}
	res := Throughput{Target: addr, Path: path, Connections: conns, Seconds: d.Seconds()}
	// Warm the server (JIT, pools) with both clients before anything is counted: a JVM on
	// one core needs tens of seconds to reach its compiled steady state.
	if warmup > 0 {
		if _, err := runEngine(ctx, addr, path, serverPid, conns, warmup/2); err != nil {
			return res, err
		}
		if _, err := runWrk(ctx, wrk, addr, path, conns, warmup/2, clientCPUs, serverPid); err != nil {
			return res, err
		}
	}
	for i := 0; i < rounds; i++ {
		r, err := runEngine(ctx, addr, path, serverPid, conns, d)
		if err != nil {
			return res, err
		}
		res.Rounds = append(res.Rounds, r)
		w, err := counted(runWrk(ctx, wrk, addr, path, conns, d, clientCPUs, serverPid))
		if err != nil {
			return res, err
		}
		res.Rounds = append(res.Rounds, w)
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
	}
	return res, nil
}

func runEngine(ctx context.Context, addr, path string, serverPid, conns int, d time.Duration) (Round, error) {
	eng, err := engine.New(addr, engine.Options{})
	if err != nil {
		return Round{}, err
	}
	defer eng.Close()
	start := time.Now()
	rec := load.NewRecorder(start, nil)
	sp := probe.Start(serverPid, start, 250*time.Millisecond)
	cp := probe.StartAlone(os.Getpid(), start, 250*time.Millisecond)
	_, err = load.ClosedLoop{Tag: "bench", Request: load.Request{Path: path}, Connections: conns, Duration: d, Timeout: 10 * time.Second}.
		Run(ctx, load.Target{Addr: addr, Driver: eng}, rec)
	el := time.Since(start)
	server, client := results.UsageOf(sp.Stop(), 0, 0), results.UsageOf(cp.Stop(), 0, 0)
	if err != nil {
		return Round{}, err
	}
	t := rec.Results()[0]
	return Round{Client: "arena", RPS: float64(t.Completed) / el.Seconds(), ClientCPU: client.CPUPctMean,
		ServerCPU: server.CPUPctMean, P99ms: results.LatencyOf(t.Service).P99}, nil
}

var (
	wrkRPS  = regexp.MustCompile(`Requests/sec:\s+([0-9.]+)`)
	wrkP99  = regexp.MustCompile(`(?m)^\s+99%\s+([0-9.]+)(us|ms|s)`)
	wrkNon2 = regexp.MustCompile(`Non-2xx or 3xx responses:\s+(\d+)`)
	// wrk's own request timeout is 2 s unless --timeout says otherwise.
	wrkTimeouts = regexp.MustCompile(`Socket errors:.*timeout (\d+)`)
)

func runWrk(ctx context.Context, wrk, addr, path string, conns int, d time.Duration, cpus string, serverPid int) (Round, error) {
	return runWrkThreads(ctx, wrk, 1, addr, path, conns, d, cpus, serverPid)
}

// runWrkThreads runs wrk with threads threads (-t), pinned with taskset to cpus.
func runWrkThreads(ctx context.Context, wrk string, threads int, addr, path string, conns int, d time.Duration, cpus string, serverPid int) (Round, error) {
	secs := strconv.Itoa(int(d.Seconds()))
	cmd := exec.CommandContext(ctx, "taskset", "-c", cpus, wrk, "-t"+strconv.Itoa(threads), "-c"+strconv.Itoa(conns), "-d"+secs+"s", "--latency", "http://"+addr+path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Round{}, err
	}
	sp := probe.Start(serverPid, start, 250*time.Millisecond)
	cp := probe.Start(cmd.Process.Pid, start, 250*time.Millisecond)
	err := cmd.Wait()
	server, client := results.UsageOf(sp.Stop(), 0, 0), results.UsageOf(cp.Stop(), 0, 0)
	if err != nil {
		return Round{}, fmt.Errorf("wrk: %v\n%s", err, out.String())
	}
	r, err := wrkRound(out.String())
	if err != nil {
		return Round{}, err
	}
	r.ClientCPU, r.ServerCPU = client.CPUPctMean, server.CPUPctMean
	return r, nil
}

// wrkRound reads wrk's report. A round that completed no request, or got an answer other
// than 2xx/3xx, measured a server that is not serving, not its throughput.
func wrkRound(out string) (Round, error) {
	m := wrkRPS.FindStringSubmatch(out)
	if m == nil {
		return Round{}, fmt.Errorf("wrk printed no Requests/sec:\n%s", out)
	}
	if n := wrkNon2.FindStringSubmatch(out); n != nil {
		return Round{}, fmt.Errorf("wrk saw %s non-2xx responses: the target is not healthy", n[1])
	}
	rps, _ := strconv.ParseFloat(m[1], 64)
	if rps == 0 {
		return Round{}, fmt.Errorf("wrk completed no request: the target is not serving\n%s", out)
	}
	r := Round{Client: "wrk", RPS: rps}
	if t := wrkTimeouts.FindStringSubmatch(out); t != nil {
		r.Timeouts, _ = strconv.Atoi(t[1])
	}
	if p := wrkP99.FindStringSubmatch(out); p != nil {
		v, _ := strconv.ParseFloat(p[1], 64)
		r.P99ms = v * map[string]float64{"us": 0.001, "ms": 1, "s": 1000}[p[2]]
	}
	return r, nil
}

// Stall is the coordinated-omission check: a constant-rate run during which the server is
// frozen (SIGSTOP) for a while.
type Stall struct {
	Rate        int
	Connections int
	Seconds     float64
	StallS      float64
	Response    results.Latency // from intended send times
	Service     results.Latency // from actual sends: what a closed-loop tool reports
	PredictedMs float64         // p99 the arithmetic predicts: stall − 1 % of the run, plus the normal p99
	BaselineMs  float64         // p99 of a run without stall
}

// StallCheck runs rate req/s on path for d with conns connections, once without and once
// with the server frozen for stall at d/3; freeze and thaw are the group signals.
func StallCheck(ctx context.Context, addr, path string, rate, conns int, d, stall time.Duration, freeze, thaw func() error) (Stall, error) {
	res := Stall{Rate: rate, Connections: conns, Seconds: d.Seconds(), StallS: stall.Seconds()}
	run := func(withStall bool) (load.TagResult, error) {
		eng, err := engine.New(addr, engine.Options{})
		if err != nil {
			return load.TagResult{}, err
		}
		defer eng.Close()
		start := time.Now()
		rec := load.NewRecorder(start, nil)
		errc := make(chan error, 1)
		if withStall {
			go func() {
				select {
				case <-time.After(d / 3):
				case <-ctx.Done():
					errc <- ctx.Err()
					return
				}
				if err := freeze(); err != nil {
					errc <- err
					return
				}
				time.Sleep(stall)
				errc <- thaw()
			}()
		} else {
			errc <- nil
		}
		_, runErr := load.OpenLoop{
			Streams:  []load.Stream{{Tag: "stall", Request: load.Request{Path: path}, Pacer: load.PerSecond(rate), Connections: conns}},
			Duration: d, Timeout: 30 * time.Second,
		}.Run(ctx, load.Target{Addr: addr, Driver: eng}, rec)
		if err := <-errc; err != nil {
			return load.TagResult{}, err
		}
		if runErr != nil {
			return load.TagResult{}, runErr
		}
		return rec.Results()[0], nil
	}
	base, err := run(false)
	if err != nil {
		return res, err
	}
	res.BaselineMs = results.LatencyOf(base.Response).P99
	st, err := run(true)
	if err != nil {
		return res, err
	}
	res.Response, res.Service = results.LatencyOf(st.Response), results.LatencyOf(st.Service)
	res.PredictedMs = (stall.Seconds()-0.01*d.Seconds())*1000 + res.BaselineMs
	return res, nil
}
