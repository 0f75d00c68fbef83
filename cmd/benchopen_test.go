package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/results"
)

func TestBenchOpenRejectsBadInput(t *testing.T) {
	setup(t)
	const limits = "--rate 1..2000000, --rounds 1..20, --duration ≥ 1s, --warmup ≥ 0 and --connections 0..10000"
	for _, args := range [][]string{
		{"--rate", "0"}, {"--rate", "2000001"}, {"--rounds", "0"}, {"--rounds", "21"},
		{"--duration", "500ms"}, {"--warmup", "-1s"}, {"--connections", "-1"}, {"--connections", "10001"},
	} {
		refused(t, append([]string{"bench", "open"}, args...), limits)
	}
	refused(t, []string{"bench", "open", "--rate", "many"}, `invalid argument "many" for "--rate" flag`)
	refused(t, []string{"bench", "open", "--path", "resources"}, `--path "resources": it must start with /`)
	refused(t, []string{"bench", "open", "--path", "/x@evil.example"}, "a path on the target")
	refused(t, []string{"bench", "open", "--server-cpus", "9999", "--client-cpus", "0"}, "--server-cpus", "not available")
	refused(t, []string{"bench", "open", "--client-cpus", "x"}, "--client-cpus")
	refused(t, []string{"bench", "open", "extra"}, `unknown command "extra" for "arena bench open"`)
}

func TestBenchOpenUnknownContender(t *testing.T) {
	unknownContender(t, "bench", "open", "--against", "nosuch", "--server-cpus", "0", "--client-cpus", "0")
}

func TestPrintOpen(t *testing.T) {
	o := bench.OpenClosed{Target: "127.0.0.1:4000", Path: "/resources/data1.json", Rate: 100000, OpenConnections: 64, Seconds: 10, LateAfterMs: 1, ClientLoops: 1,
		Open: []bench.LoadRound{
			{RPS: 99871.2, Scheduled: 1000000, Sent: 1000000, Completed: 998712, Late: 1234, ClientLate: 12, MaxLateMs: 4.567, Errors: 0,
				Response: results.Latency{P50: 0.091, P99: 1.234, P999: 3.456, Max: 7.89}, Service: results.Latency{P50: 0.061, P99: 0.456},
				ClientCPU: 97.4, ServerCPU: 88.6},
			{RPS: 99900, Scheduled: 1000000, Sent: 999990, Completed: 999000, Late: 766, MaxLateMs: 2.5, Errors: 3,
				Response: results.Latency{P50: 0.09, P99: 1.1, P999: 3, Max: 6}, Service: results.Latency{P50: 0.06, P99: 0.4},
				ClientCPU: 96, ServerCPU: 89},
		},
		Matched: 99885.6, ProbeSeconds: 2,
		Probes:      []bench.ConnProbe{{Connections: 1, RPS: 18000}, {Connections: 2, RPS: 52000.4}, {Connections: 4, RPS: 101000}},
		Connections: 4, Reached: true,
		Closed: []bench.LoadRound{
			{RPS: 101234.6, Sent: 1012350, Completed: 1012345, Response: results.Latency{P50: 0.035, P99: 0.12, P999: 0.3, Max: 2.6},
				Service: results.Latency{P50: 0.035, P99: 0.12}, ClientCPU: 99, ServerCPU: 92},
		},
	}
	var out bytes.Buffer
	printOpen(&out, "lab-downstream", "lab-downstream on CPU 1, client on CPU 0", o)
	want := `
### Open loop: lab-downstream /resources/data1.json, 100000 req/s, 10 s rounds

Layout: lab-downstream on CPU 1, client on CPU 0 (1 event loop); 64 connections (a hit waits for a free one, its wait counted); late: sent more than 1 ms past the intended time.

| round | requests/s | sent / scheduled | late % | engine late % | max late ms | response p50 ms | p99 ms | p99.9 ms | max ms | service p50 ms | p99 ms | errors | client CPU % | server CPU % |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 1 | 99871 | 1000000 / 1000000 | 0.12 | 0.001 | 4.57 | 0.09 | 1.23 | 3.46 | 7.89 | 0.06 | 0.46 | 0 | 97 | 89 |
| 2 | 99900 | 999990 / 1000000 | 0.08 | 0.000 | 2.50 | 0.09 | 1.10 | 3.00 | 6.00 | 0.06 | 0.40 | 3 | 96 | 89 |

### Closed loop's connections: probes of 2 s, against the open loop's 99886 req/s

| connections | requests/s | × open loop |
| ---: | ---: | ---: |
| 1 | 18000 | 0.18× |
| 2 | 52000 | 0.52× |
| 4 | 101000 | 1.01× |

Closed loop at 4 connections: the fewest whose probe reached the open loop's 99886 req/s (within 2 %): 101000 req/s.

### Closed loop: lab-downstream /resources/data1.json, 4 connections, 10 s rounds (latency is service time only)

| round | requests/s | sent / scheduled | late % | engine late % | max late ms | response p50 ms | p99 ms | p99.9 ms | max ms | service p50 ms | p99 ms | errors | client CPU % | server CPU % |
| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 1 | 101235 | 1012350 / – | – | – | – | 0.04 | 0.12 | 0.30 | 2.60 | 0.04 | 0.12 | 0 | 99 | 92 |

open loop at 100000 req/s: 0.10 % of sends late (> 1 ms), 0.001 % taken up late by the engine itself; max lateness 4.57 ms; closed loop at 4 connections: 101235 req/s
`
	if got := out.String(); got != want {
		t.Errorf("open printed as\n%s\nwant\n%s", got, want)
	}
	markdownTables(t, out.String())

	// No count reached the rate: the nearest, said so.
	o.Probes, o.Connections, o.Reached = []bench.ConnProbe{{Connections: 1, RPS: 18000}, {Connections: 64, RPS: 61000}}, 64, false
	out.Reset()
	printOpen(&out, "lab-downstream", "", o)
	if want := "Closed loop at 64 connections: none of 1, 64 connections reached the open loop's 99886 req/s; 64 came nearest, at 61000 req/s."; !strings.Contains(out.String(), want) {
		t.Errorf("no %q in\n%s", want, out.String())
	}
	// Interrupted during the open rounds: what finished, and a summary without a closed loop.
	out.Reset()
	printOpen(&out, "lab-downstream", "", bench.OpenClosed{Path: "/p", Rate: 10, Seconds: 1, LateAfterMs: 1, ClientLoops: 2,
		Open: []bench.LoadRound{{RPS: 10, Scheduled: 10, Sent: 10, Completed: 10}}})
	hiccupsOf := func(h bench.Hiccups) string {
		var b bytes.Buffer
		printOpen(&b, "lab-downstream", "", bench.OpenClosed{Path: "/p", Rate: 10, Seconds: 1, LateAfterMs: 1, Hiccups: &h})
		return b.String()
	}
	if got := hiccupsOf(bench.Hiccups{CPU: 0, Seconds: 10, Loaded: true, Over100: 40, Over1ms: 5, Over5ms: 1, MaxMs: 6.25, LostMs: 14.5}); !strings.Contains(got,
		"A thread doing nothing but read the clock on CPU 0 for 10 s, while wrk, pinned to the server's CPUs, drove the server: 40 gaps over 100 µs, 5 over 1 ms, 1 over 5 ms, the worst 6.25 ms, 14.5 ms lost in gaps over 1 ms.") {
		t.Errorf("hiccups printed as\n%s", got)
	}
	if got := hiccupsOf(bench.Hiccups{CPU: 0, Seconds: 10}); !strings.Contains(got, "with the machine otherwise idle (no wrk to drive the server)") {
		t.Errorf("hiccups without wrk printed as\n%s", got)
	}
	if got := out.String(); !strings.Contains(got, "(2 event loops)") || !strings.HasSuffix(got, "\nopen loop at 10 req/s: 0.00 % of sends late (> 1 ms), 0.000 % taken up late by the engine itself; max lateness 0.00 ms\n") ||
		strings.Contains(got, "Closed loop") {
		t.Errorf("interrupted before the closed loop, printed as\n%s", got)
	}
	markdownTables(t, out.String())
}

// A short real run against the lab's downstream: the open loop sends its schedule and every
// request is answered, the probes choose a count, the closed loop runs at it, and no
// process is left behind.
func TestBenchOpenRuns(t *testing.T) {
	asArena(t)
	var stdout, stderr bytes.Buffer
	code := runArena(context.Background(), []string{"bench", "open", "--rate", "2000", "--duration", "1s", "--warmup", "0s", "--rounds", "1",
		"--server-cpus", "1", "--client-cpus", "0", "--json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var res bench.OpenClosed
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if res.Path != "/resources/data1.json" || res.Rate != 2000 || res.ClientLoops != 1 || len(res.Open) != 1 || len(res.Closed) != 1 {
		t.Fatalf("path %s, rate %d, %d loops, %d open and %d closed rounds: %+v", res.Path, res.Rate, res.ClientLoops, len(res.Open), len(res.Closed), res)
	}
	op := res.Open[0]
	if op.Scheduled != 2000 || op.Sent != op.Scheduled || op.Completed != op.Sent || op.Errors != 0 {
		t.Errorf("open loop: scheduled %d, sent %d, completed %d, errors %d; want 2000 of each and no error", op.Scheduled, op.Sent, op.Completed, op.Errors)
	}
	// 2000 req/s is far below what the downstream serves: wide margins only.
	if op.RPS < 1000 || op.Response.P50 <= 0 || op.Service.P50 <= 0 || op.ServerCPU <= 0 || op.ClientCPU <= 0 {
		t.Errorf("open loop: %+v", op)
	}
	if len(res.Probes) == 0 || res.Connections != res.Probes[len(res.Probes)-1].Connections {
		t.Errorf("closed loop at %d connections after probes %v: want the last probed, where the probing stopped", res.Connections, res.Probes)
	}
	cl := res.Closed[0]
	if cl.Completed <= 0 || cl.Scheduled != 0 || cl.Late != 0 || cl.Errors != 0 {
		t.Errorf("closed loop: %+v", cl)
	}
	for _, want := range []string{"bench open: lab-downstream on CPU 1, client on CPU 0", "open loop, round 1", "probe of 1 connections"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("no %q in the progress:\n%s", want, stderr.String())
		}
	}
	noneLeft(t)
}
