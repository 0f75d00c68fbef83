package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/bench"
)

func TestBenchScalingRejectsBadInput(t *testing.T) {
	setup(t)
	const limits = "--rounds 1..20, --duration ≥ 1s and --warmup ≥ 0"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--loops", "0"}, "--loops 0: 0 is not a count of 1 to 64 event loops; give counts like 1,2,3"},
		{[]string{"--loops", "65"}, "65 is not a count"},
		{[]string{"--loops", "2,1"}, "in increasing order"},
		{[]string{"--loops", "1,x"}, `invalid argument "1,x" for "--loops" flag`},
		{[]string{"--connections", "2"}, "--connections 3..10000 (one at least per loop), " + limits},
		{[]string{"--loops", "1", "--connections", "0"}, "--connections 1..10000"},
		{[]string{"--connections", "10001"}, limits},
		{[]string{"--rounds", "0"}, limits},
		{[]string{"--rounds", "21"}, limits},
		{[]string{"--duration", "500ms"}, limits},
		{[]string{"--warmup", "-1s"}, limits},
		{[]string{"--path", "resources"}, `--path "resources": it must start with /`},
		{[]string{"--client-cpus", "9999"}, "--client-cpus: CPU list \"9999\": CPU 9999 is not available here"},
		{[]string{"--client-cpus", "x"}, "--client-cpus"},
		{[]string{"--client-cpus", "0", "--server-cpus", "9999"}, "--server-cpus: "},
	} {
		refused(t, append([]string{"bench", "scaling"}, c.args...), c.want)
	}
	refused(t, []string{"bench", "scaling", "extra"}, `unknown command "extra" for "arena bench scaling"`)
}

func TestBenchScalingWithoutWrk(t *testing.T) {
	setup(t)
	t.Setenv("PATH", t.TempDir())
	refused(t, []string{"bench", "scaling", "--client-cpus", "0", "--server-cpus", "0"}, "wrk is not installed", "--wrk=false")
}

func TestPrintScaling(t *testing.T) {
	s := bench.Scaling{Path: "/resources/data1.json", Connections: 64, Seconds: 10,
		Layout:   "server on CPU 1; 1 loop on CPU 0; 2 loops on CPU 0,1; 3 loops on CPU 0,1,0",
		Warnings: []string{"3 loops on 2 CPUs: simulated, loops share cores"},
		Levels: []bench.ScalingLevel{
			{Loops: 1, Client: "arena", CPUs: "0", Rounds: []bench.ScalingRound{
				{RPS: 90123.4, ClientCPU: 97.2, ServerCPU: 80.4, CPUMicros: 10.789, P99: 2.345},
				{RPS: 89876.6, ClientCPU: 96.8, ServerCPU: 79.6, CPUMicros: 10.771, P99: 2.5}}},
			{Loops: 1, Client: "wrk", CPUs: "0", Rounds: []bench.ScalingRound{
				{RPS: 110000, ClientCPU: 90, ServerCPU: 95, CPUMicros: 8.18, P99: 1.9},
				{RPS: 112000, ClientCPU: 91, ServerCPU: 96, CPUMicros: 8.13, P99: 1.8}}},
			{Loops: 2, Client: "arena", CPUs: "0,1", Rounds: []bench.ScalingRound{
				{RPS: 120000, ClientCPU: 150, ServerCPU: 60, CPUMicros: 12.5, P99: 3, Errors: 2},
				{RPS: 126000, ClientCPU: 154, ServerCPU: 62, CPUMicros: 12.2, P99: 3.1}}},
			{Loops: 2, Client: "wrk", CPUs: "0,1"}, // interrupted before its first round
		}}
	var out bytes.Buffer
	printScaling(&out, s)
	want := `
### Scaling: lab-downstream /resources/data1.json, 64 connections in all, 10 s rounds

Layout: server on CPU 1; 1 loop on CPU 0; 2 loops on CPU 0,1; 3 loops on CPU 0,1,0.
Warning: 3 loops on 2 CPUs: simulated, loops share cores.

| loops | client | CPUs | round | requests/s | client CPU % | server CPU % | client µs/request | p99 ms | errors |
| ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 1 | arena | 0 | 1 | 90123 | 97 | 80 | 10.79 | 2.35 | 0 |
| 1 | arena | 0 | 2 | 89877 | 97 | 80 | 10.77 | 2.50 | 0 |
| 1 | wrk | 0 | 1 | 110000 | 90 | 95 | 8.18 | 1.90 | 0 |
| 1 | wrk | 0 | 2 | 112000 | 91 | 96 | 8.13 | 1.80 | 0 |
| 2 | arena | 0,1 | 1 | 120000 | 150 | 60 | 12.50 | 3.00 | 2 |
| 2 | arena | 0,1 | 2 | 126000 | 154 | 62 | 12.20 | 3.10 | 0 |

| loops | client | requests/s (mean) | per round | client CPU % | server CPU % | client µs/request | × 1 loop |
| ---: | --- | ---: | --- | ---: | ---: | ---: | ---: |
| 1 | arena | 90000 | 90123 / 89877 | 97 | 80 | 10.78 | 1.00× |
| 1 | wrk | 111000 | 110000 / 112000 | 90 | 96 | 8.16 | 1.00× |
| 2 | arena | 123000 | 120000 / 126000 | 152 | 61 | 12.35 | 1.37× |

arena/wrk: 1 loop 0.81×
`
	if got := out.String(); got != want {
		t.Errorf("scaling printed as\n%s\nwant\n%s", got, want)
	}
	markdownTables(t, out.String())
}

// A short real run against the lab's downstream: every count of loops, each client once,
// the warnings of shared cores, and no process left behind.
func TestBenchScalingRuns(t *testing.T) {
	asArena(t)
	args := []string{"bench", "scaling", "--loops", "1,2,3", "--client-cpus", "0,1", "--server-cpus", "1",
		"--duration", "1s", "--warmup", "0s", "--rounds", "1", "--connections", "8", "--json"}
	clients := []string{"arena", "wrk"}
	if _, err := bench.WrkPath(); err != nil {
		args = append(args, "--wrk=false")
		clients = clients[:1]
	}
	var stdout, stderr bytes.Buffer
	if code := runArena(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var res bench.Scaling
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	for _, w := range []string{"3 loops on 2 CPUs: simulated, loops share cores", "the client shares CPU 1 with the server from 2 loops on"} {
		if !slices.ContainsFunc(res.Warnings, func(s string) bool { return strings.HasPrefix(s, w) }) {
			t.Errorf("no warning %q in %q", w, res.Warnings)
		}
		if !strings.Contains(stderr.String(), "bench scaling: warning: "+w) {
			t.Errorf("no warning %q on stderr:\n%s", w, stderr.String())
		}
	}
	if len(res.Levels) != 3*len(clients) {
		t.Fatalf("%d levels, want %d: %+v", len(res.Levels), 3*len(clients), res.Levels)
	}
	for i, lv := range res.Levels {
		n, client := i/len(clients)+1, clients[i%len(clients)]
		cpus := map[int]string{1: "0", 2: "0,1", 3: "0,1"}[n]
		if lv.Loops != n || lv.Client != client || lv.CPUs != cpus || len(lv.Rounds) != 1 {
			t.Fatalf("level %d: %s at %d loops on CPU %s, %d rounds; want %s at %d on %s, 1 round", i, lv.Client, lv.Loops, lv.CPUs, len(lv.Rounds), client, n, cpus)
		}
		r := lv.Rounds[0]
		if r.RPS <= 0 || r.ClientCPU <= 0 || r.CPUMicros <= 0 || r.Errors != 0 {
			t.Errorf("%s at %d loops: %+v", lv.Client, lv.Loops, r)
		}
	}
	noneLeft(t)
}
