package cmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
)

func TestBenchFloorRejectsBadInput(t *testing.T) {
	setup(t)
	fakeWrk(t)
	const limits = "--connections 1..10000, --rounds 1..20, --duration ≥ 1s and --warmup ≥ 0"
	for _, args := range [][]string{
		{"--connections", "0"}, {"--rounds", "21"}, {"--duration", "500ms"}, {"--warmup", "-1s"},
	} {
		refused(t, append([]string{"bench", "floor", "go-nethttp", "go-nethttp-hello"}, args...), limits)
	}
	refused(t, []string{"bench", "floor", "go-nethttp"}, "accepts 2 arg(s), received 1")
	refused(t, []string{"bench", "floor", "go-nethttp", "go-nethttp-hello", "--path", "instant"}, "must start with /")
	refused(t, []string{"bench", "floor", "go-nethttp", "nosuch", "--server-cpus", "0", "--client-cpus", "0"}, `no baseline "nosuch"`, "known:", "go-nethttp-hello")
	refused(t, []string{"bench", "floor", "go-nethttp", "../contenders/go-nethttp", "--server-cpus", "0", "--client-cpus", "0"}, `no baseline "../contenders/go-nethttp"`)
}

func TestBenchFloorUnknownContender(t *testing.T) {
	fakeWrk(t)
	unknownContender(t, "bench", "floor", "nosuch", "go-nethttp-hello", "--server-cpus", "0", "--client-cpus", "0")
}

// Every baseline is a manifest the lab can build and start, named as its folder, for a stack
// one of the contenders runs on.
func TestBaselinesAreManifests(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(labRoot, baselinesDir))
	if err != nil {
		t.Fatal(err)
	}
	contenders, err := contender.Discover(filepath.Join(labRoot, "contenders"))
	if err != nil {
		t.Fatal(err)
	}
	runtimes := map[string]bool{}
	for _, c := range contenders {
		runtimes[c.Runtime] = true
	}
	n := 0
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), "_") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		n++
		m, err := contender.Load(filepath.Join(labRoot, baselinesDir, e.Name()))
		if err != nil {
			t.Errorf("%s: %v", e.Name(), err)
			continue
		}
		if !runtimes[m.Runtime] || len(m.Features) > 0 {
			t.Errorf("%s: runtime %q, features %v; want a contender's runtime and no features beyond /instant", m.Name, m.Runtime, m.Features)
		}
	}
	if n == 0 {
		t.Fatal("no baselines")
	}
}

func TestPrintFloor(t *testing.T) {
	var out bytes.Buffer
	fl := bench.Floor{Path: "/instant", Connections: 64, Seconds: 10, Rounds: []bench.FloorRound{
		{Server: "vertx", Round: bench.Round{Client: "wrk", RPS: 30000, ServerCPU: 99, P99ms: 3.1}},
		{Server: "vertx-hello", Round: bench.Round{Client: "wrk", RPS: 40000, ServerCPU: 100, P99ms: 2.2}},
		{Server: "vertx", Round: bench.Round{Client: "wrk", RPS: 32000, ServerCPU: 99, P99ms: 3.0}},
		{Server: "vertx-hello", Round: bench.Round{Client: "wrk", RPS: 42000, ServerCPU: 100, P99ms: 2.1}},
	}}
	printFloor(&out, "vertx", "vertx-hello", fl)
	want := `
### Floor: vertx beside vertx-hello, /instant, 64 connections, 10 s rounds (wrk -t1)

| round | server | requests/s | server CPU % | wrk p99 ms |
| --- | --- | ---: | ---: | ---: |
| 1 | vertx | 30000 | 99 | 3.10 |
| 1 | vertx-hello | 40000 | 100 | 2.20 |
| 2 | vertx | 32000 | 99 | 3.00 |
| 2 | vertx-hello | 42000 | 100 | 2.10 |

vertx 31000 req/s, vertx-hello 41000 req/s: 0.76× (below its stack's floor)
`
	if got := out.String(); got != want {
		t.Errorf("floor printed as\n%s\nwant\n%s", got, want)
	}
	markdownTables(t, out.String())
	out.Reset()
	fl.Rounds[0].RPS, fl.Rounds[2].RPS = 40000, 39000 // within 5 %: the rounds' spread, no cost
	printFloor(&out, "vertx", "vertx-hello", fl)
	if !strings.Contains(out.String(), "0.96× (at or above its stack's floor)") {
		t.Errorf("within 5 %%:\n%s", out.String())
	}
}

func TestPrintCarriedTable(t *testing.T) {
	var out bytes.Buffer
	printCarriedTable(&out, "vertx", "vertx-hello",
		results.Stacks{"run;loop;Router.handle;end": 3, "run;loop;epoll": 1},
		results.Stacks{"run;loop;end": 3, "run;loop;epoll": 1})
	want := `
What vertx carries beyond vertx-hello: the frames with the largest excess share of its samples, in them or below
them (total); self is the share in the frame alone, small for a wrapper whose callees are the cost.

| frame | vertx total % | vertx-hello total % | vertx self % | vertx-hello self % |
| --- | ---: | ---: | ---: | ---: |
| Router.handle | 75.0 | 0.0 | 0.0 | 0.0 |
`
	if out.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", out.String(), want)
	}
}
