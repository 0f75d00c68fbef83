package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/lab"
)

// asArenaEnv makes this test binary arena itself: arena bench agents starts the downstream
// and the agents from its own executable, and an agent answers only a coordinator of its own
// build, so in a test both sides must be this binary.
const asArenaEnv = "ARENA_TEST_AS_ARENA"

func TestMain(m *testing.M) {
	if os.Getenv(asArenaEnv) == "1" {
		os.Exit(runArena(interrupts(os.Stderr, os.Interrupt, syscall.SIGTERM), os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

func TestBenchAgentsRejectsBadInput(t *testing.T) {
	setup(t)
	const limits = "--rounds 1..20, --duration ≥ 1s and --warmup ≥ 0"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--agents", "0"}, "--agents 0: 0 is not a count of 1 to 16 agents; give counts like 1,2,3"},
		{[]string{"--agents", "1,x"}, `invalid argument "1,x" for "--agents" flag`},
		{[]string{"--agents", "17"}, "17 is not a count"},
		{[]string{"--agents", "2,1"}, "in increasing order"},
		{[]string{"--agents", "1,1"}, "in increasing order"},
		{[]string{"--agents", "1,2,3,4"}, "--agents up to 4: give --agent-cpus, one CPU per agent"},
		{[]string{"--agent-cpus", "0,0"}, "--agent-cpus 0,0 has 2 entries for 3 agents: give one CPU per agent, e.g. 0,0,0"},
		{[]string{"--agents", "1,2", "--agent-cpus", "0,0,1"}, "has 3 entries for 2 agents"},
		{[]string{"--agents", "1", "--agent-cpus", "x"}, `invalid argument "x" for "--agent-cpus" flag`},
		{[]string{"--agents", "1", "--agent-cpus", "9999"}, "CPU 9999 is not available here"},
		{[]string{"--agents", "1", "--agent-cpus", "0", "--server-cpus", "9999"}, "--server-cpus: "},
		{[]string{"--connections", "2"}, "--connections 3..10000 (one at least per agent), " + limits},
		{[]string{"--connections", "10001"}, limits},
		{[]string{"--rounds", "0"}, limits},
		{[]string{"--rounds", "21"}, limits},
		{[]string{"--duration", "500ms"}, limits},
		{[]string{"--warmup", "-1s"}, limits},
		{[]string{"--path", "resources"}, `--path "resources": it must start with /`},
	} {
		refused(t, append([]string{"bench", "agents"}, c.args...), c.want)
	}
	refused(t, []string{"bench", "agents", "extra"}, `unknown command "extra" for "arena bench agents"`)
}

func TestPrintAgents(t *testing.T) {
	a := bench.Agents{Path: "/resources/data1.json", Connections: 64, Seconds: 10, Levels: []bench.AgentsLevel{
		{Agents: 1, Via: "in-process", Rounds: []bench.AgentsRound{{RPS: 90123.4, AgentCPU: []float64{97.2}, ServerCPU: 80.4, P50: 0.61, P99: 2.345, MergeMs: 0.4123, ShareBytes: 7800}}},
		{Agents: 1, Via: "http", Rounds: []bench.AgentsRound{
			{RPS: 88000, AgentCPU: []float64{96}, ServerCPU: 79, P50: 0.6, P99: 2.4, MergeMs: 0.5, ShareBytes: 7900},
			{RPS: 90000, AgentCPU: []float64{97}, ServerCPU: 80, P50: 0.6, P99: 2.5, MergeMs: 0.7, ShareBytes: 8100}}},
		{Agents: 2, Via: "http", Rounds: []bench.AgentsRound{{RPS: 120000, AgentCPU: []float64{60, 58.6}, ServerCPU: 99, P50: 0.4, P99: 3, Errors: 2, MergeMs: 1.25, ShareBytes: 16384}}},
		{Agents: 3, Via: "http"}, // interrupted before its first round
	}}
	var out bytes.Buffer
	printAgents(&out, a, "downstream on CPU 1; agent 1 on CPU 0, agent 2 on CPU 0", []string{"agents 1 and 2 share CPU 0"})
	want := `
### Agents: lab-downstream /resources/data1.json, 64 connections in all, 10 s rounds

Layout: downstream on CPU 1; agent 1 on CPU 0, agent 2 on CPU 0.
Warning: agents 1 and 2 share CPU 0.

| agents | via | round | requests/s | agent CPU % | server CPU % | p50 ms | p99 ms | errors | merge ms | shares KB |
| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |
| 1 | in-process | 1 | 90123 | 97 | 80 | 0.61 | 2.35 | 0 | 0.412 | 7.6 |
| 1 | http | 1 | 88000 | 96 | 79 | 0.60 | 2.40 | 0 | 0.500 | 7.7 |
| 1 | http | 2 | 90000 | 97 | 80 | 0.60 | 2.50 | 0 | 0.700 | 7.9 |
| 2 | http | 1 | 120000 | 60 / 59 | 99 | 0.40 | 3.00 | 2 | 1.250 | 16.0 |

| agents | via | requests/s (mean) | × 1 agent over HTTP | merge ms (mean) | shares KB (mean) |
| ---: | --- | ---: | ---: | ---: | ---: |
| 1 | in-process | 90123 | 1.01× | 0.412 | 7.6 |
| 1 | http | 89000 | 1.00× | 0.600 | 7.8 |
| 2 | http | 120000 | 1.35× | 1.250 | 16.0 |
`
	if got := out.String(); got != want {
		t.Errorf("agents printed as\n%s\nwant\n%s", got, want)
	}
	markdownTables(t, out.String())
}

// children is this process's child processes, by pid, with their command lines.
func children() map[int]string {
	entries, _ := os.ReadDir("/proc")
	out := map[int]string{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid …; comm may hold spaces and parentheses.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(os.Getpid()) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out[pid] = strings.Join(strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00"), " ")
	}
	return out
}

// asArena prepares a real run of arena bench agents in this process: children that are
// arena, an empty lab for the logs, and this process's CPUs given back afterwards (the
// command pins its coordinator).
func asArena(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the downstream and agents, and drives load")
	}
	if _, err := lab.ParseCPUs("0-1"); err != nil {
		t.Skipf("needs CPUs 0 and 1: %v", err)
	}
	if left := children(); len(left) > 0 {
		t.Fatalf("children before the test: %v", left)
	}
	fixtureLab(t)
	t.Setenv(asArenaEnv, "1")
	cpus, err := lab.AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.PinSelf(cpus); err != nil {
			t.Error(err)
		}
	})
}

// noneLeft fails the test if the command left a child process, or any of pids, behind.
func noneLeft(t *testing.T, pids ...int) {
	t.Helper()
	if left := children(); len(left) > 0 {
		t.Errorf("processes left behind: %v", left)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("process %d is still there (kill 0: %v)", pid, err)
		}
	}
}

// A short real run: 1 and 2 agents beside the in-process one, each drives the downstream,
// the agents' counts add up to the merged count, and every process is gone afterwards.
func TestBenchAgentsRuns(t *testing.T) {
	asArena(t)
	var stdout, stderr bytes.Buffer
	code := runArena(context.Background(), []string{"bench", "agents", "--agents", "1,2", "--agent-cpus", "0,0", "--server-cpus", "1",
		"--duration", "1s", "--warmup", "0", "--rounds", "1", "--connections", "4", "--json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	var res bench.Agents
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if !strings.Contains(stderr.String(), "warning: agents 1 and 2 share CPU 0") {
		t.Errorf("no warning of the shared CPU in\n%s", stderr.String())
	}
	if len(res.Agents) != 2 || len(res.Levels) != 3 {
		t.Fatalf("%d agents, %d levels: %+v", len(res.Agents), len(res.Levels), res)
	}
	for i, want := range []struct {
		agents int
		via    string
	}{{1, "in-process"}, {1, "http"}, {2, "http"}} {
		lv := res.Levels[i]
		if lv.Agents != want.agents || lv.Via != want.via || len(lv.Rounds) != 1 {
			t.Fatalf("level %d: %d agents over %s, %d rounds; want %d over %s, 1 round", i, lv.Agents, lv.Via, len(lv.Rounds), want.agents, want.via)
		}
		r := lv.Rounds[0]
		var sum int64
		for _, n := range r.AgentCompleted {
			sum += n
		}
		switch {
		case r.Completed <= 0 || r.RPS <= 0:
			t.Errorf("%d agents over %s completed %d requests (%.0f/s)", lv.Agents, lv.Via, r.Completed, r.RPS)
		case len(r.AgentCompleted) != lv.Agents || len(r.AgentCPU) != lv.Agents:
			t.Errorf("%d agents over %s: counts of %d agents, CPU of %d", lv.Agents, lv.Via, len(r.AgentCompleted), len(r.AgentCPU))
		case sum != r.Completed:
			t.Errorf("%d agents over %s: the agents' counts %v add up to %d, merged %d", lv.Agents, lv.Via, r.AgentCompleted, sum, r.Completed)
		case r.Errors != 0:
			t.Errorf("%d agents over %s: %d errors", lv.Agents, lv.Via, r.Errors)
		case r.MergeMs <= 0 || r.ShareBytes <= 0 || r.P99 <= 0:
			t.Errorf("%d agents over %s: merge %.3f ms, %d bytes, p99 %.2f ms", lv.Agents, lv.Via, r.MergeMs, r.ShareBytes, r.P99)
		}
		for _, n := range r.AgentCompleted {
			if n <= 0 {
				t.Errorf("%d agents over %s: an agent completed nothing: %v", lv.Agents, lv.Via, r.AgentCompleted)
			}
		}
	}
	pids := []int{res.ServerPid}
	for _, a := range res.Agents {
		pids = append(pids, a.Pid)
	}
	noneLeft(t, pids...)
}

// Ctrl-C during a round ends the command as interrupted, with no agent or downstream left.
func TestBenchAgentsInterrupted(t *testing.T) {
	asArena(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		// Once both agents run, and a little more: inside the first round.
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			agents := 0
			for _, cmdline := range children() {
				if strings.Contains(cmdline, " agent --listen ") {
					agents++
				}
			}
			if agents == 2 {
				time.Sleep(1500 * time.Millisecond)
				break
			}
		}
		cancel()
	}()
	var stdout, stderr bytes.Buffer
	code := runArena(ctx, []string{"bench", "agents", "--agents", "1,2", "--agent-cpus", "0,0", "--server-cpus", "1",
		"--duration", "20s", "--warmup", "0", "--rounds", "1", "--connections", "4"}, &stdout, &stderr)
	if code != exitInterrupted {
		t.Errorf("exit %d, want %d\n%s", code, exitInterrupted, stderr.String())
	}
	noneLeft(t)
}
