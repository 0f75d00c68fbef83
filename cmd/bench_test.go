package cmd

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arena-lab/arena/internal/bench"
	"github.com/arena-lab/arena/internal/results"
)

// fakeWrk puts a wrk that does nothing first on PATH, so that a test of what comes after
// the check for wrk does not depend on the machine having it.
func fakeWrk(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wrk"), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func TestBenchRejectsBadInput(t *testing.T) {
	setup(t)
	fakeWrk(t)
	const limits = "--connections 1..10000, --rounds 1..20, --rate ≥ 1 and --duration ≥ 1s"
	for _, args := range [][]string{
		{"--connections", "0"}, {"--connections", "10001"}, {"--rounds", "0"}, {"--rounds", "21"},
		{"--rate", "0"}, {"--duration", "500ms"}, {"--warmup", "-1s"},
	} {
		refused(t, append([]string{"bench"}, args...), limits)
	}
	refused(t, []string{"bench", "--against", labDownstream, "--server-cpus", "99", "--client-cpus", "0"}, "--server-cpus", "not available")
	refused(t, []string{"bench", "extra"}, `unknown command "extra" for "arena bench"`)
}

func TestBenchWithoutWrk(t *testing.T) {
	setup(t)
	t.Setenv("PATH", t.TempDir())
	refused(t, []string{"bench", "--against", labDownstream}, "wrk is not installed", "apt-get install wrk")
}

func TestBenchUnknownContender(t *testing.T) {
	fakeWrk(t)
	unknownContender(t, "bench", "--against", "nosuch", "--server-cpus", "0", "--client-cpus", "0")
}

// markdownTables checks that every table in out has as many cells in each row as in its
// header: the tables are meant to be pasted into docs/performance.md.
func markdownTables(t *testing.T, out string) {
	t.Helper()
	tables, columns := 0, 0
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			columns = 0
			continue
		}
		n := strings.Count(line, "|")
		if columns == 0 {
			tables++
			columns = n
		}
		if n != columns || !strings.HasSuffix(line, "|") {
			t.Errorf("row %q has %d cells, its header %d", line, n-1, columns-1)
		}
	}
	if tables == 0 {
		t.Errorf("no table in\n%s", out)
	}
}

func TestPrintThroughput(t *testing.T) {
	var out bytes.Buffer
	printThroughput(&out, "spring-webflux", "/instant", 64, 10*time.Second, bench.Throughput{Rounds: []bench.Round{
		{Client: "arena", RPS: 43677.4, ClientCPU: 73.2, ServerCPU: 99.4, P99ms: 13.061},
		{Client: "wrk", RPS: 38785, ClientCPU: 48, ServerCPU: 99, P99ms: 14.88},
		{Client: "arena", RPS: 39535, ClientCPU: 72, ServerCPU: 99, P99ms: 16.4},
		{Client: "wrk", RPS: 38813, ClientCPU: 48, ServerCPU: 99, P99ms: 14.81},
	}})
	want := `
### Throughput: spring-webflux /instant, 64 connections, 10s rounds

| round | client | requests/s | client CPU % | server CPU % | client p99 ms |
| --- | --- | ---: | ---: | ---: | ---: |
| 1 | arena | 43677 | 73 | 99 | 13.06 |
| 1 | wrk | 38785 | 48 | 99 | 14.88 |
| 2 | arena | 39535 | 72 | 99 | 16.40 |
| 2 | wrk | 38813 | 48 | 99 | 14.81 |

arena 41606 req/s at 73% CPU, wrk 38799 req/s at 48% CPU: arena/wrk = 1.07×
per client core: arena 57309 req/s, wrk 80831 req/s: arena/wrk = 0.71×
`
	if got := out.String(); got != want {
		t.Errorf("throughput printed as\n%s\nwant\n%s", got, want)
	}
	markdownTables(t, out.String())
}

func TestPrintStall(t *testing.T) {
	var out bytes.Buffer
	printStall(&out, bench.Stall{Rate: 1000, Connections: 16, Seconds: 20, StallS: 1, BaselineMs: 1.2, PredictedMs: 801.2,
		Response: results.Latency{P50: 0.68, P99: 807.4, P999: 983, Max: 1012.4},
		Service:  results.Latency{P50: 0.11, P99: 0.3, P999: 12.2, Max: 1012.4}})
	want := `
### Stall: 1000 req/s for 20 s, 16 connections, server frozen 1.0 s at a third

| figure | p50 ms | p99 ms | p99.9 ms | max ms |
| --- | ---: | ---: | ---: | ---: |
| response time (from intended send) | 0.68 | 807.4 | 983.0 | 1012.4 |
| service time (what a closed-loop tool sees) | 0.11 | 0.3 | 12.2 | 1012.4 |

predicted response p99 = stall − 1% of the run + baseline p99 = 1000 − 200 + 1.2 = 801 ms; measured 807 ms (1.01×)
`
	if got := out.String(); got != want {
		t.Errorf("stall printed as\n%s\nwant\n%s", got, want)
	}
	markdownTables(t, out.String())
}

// --path is appended to the target's address by both clients: whatever it holds, they send
// to 127.0.0.1, or it is refused before anything starts.
func TestBenchPathStaysOnTheTarget(t *testing.T) {
	setup(t)
	fakeWrk(t)
	for _, bad := range []string{"instant", "@evil.example/", "/x@evil.example", "//user@evil.example/", "/a b", "/a\tb", "/a\r\nHost: evil", "/a\x00", "http://evil.example/", ""} {
		refused(t, []string{"bench", "--against", labDownstream, "--path", bad}, "--path", "a path on the target")
	}
	for _, good := range []string{"/instant", "/resources/data1.json", "/delayed?ms=10&x=%40", "//evil.example/x", "/x#frag", "/%2F%2Fevil"} {
		if err := checkPath(good); err != nil {
			t.Errorf("--path %q refused: %v", good, err)
			continue
		}
		// the URL wrk is given, and the host it names
		u, err := url.Parse("http://127.0.0.1:8080" + good)
		if err != nil || u.Hostname() != "127.0.0.1" {
			t.Errorf("--path %q sends to %v (%v)", good, u, err)
		}
	}
}

// No flag of any command can make a client send anywhere but the lab's own servers on
// 127.0.0.1: the flags that take text are listed here with why they cannot name an address,
// so that a new one is reviewed before it ships.
func TestNoFlagNamesAnAddress(t *testing.T) {
	reviewed := map[string]string{
		"against":      "a contender's name or lab-downstream, started by the lab on 127.0.0.1",
		"path":         "checked by checkPath: a path appended to 127.0.0.1:port",
		"contenders":   "names, looked up among the lab's contenders",
		"levels":       "names, looked up in the plan",
		"preset":       "a name, looked up among the scenario's presets",
		"out":          "a folder for the results",
		"output":       "a file for the report or matrix",
		"server-cpus":  "a CPU list",
		"client-cpus":  "a CPU list",
		"cpus":         "a CPU list (arena db pins its PostgreSQL there; it listens on 127.0.0.1)",
		"backpressure": "on or off",
		"env":          "contract variables: DOWNSTREAM_URL, the one that names an address, is refused (checkEnv)",
		"only":         "names of scenarios and parts",
		"add":          "names of scenarios, looked up in the registry",
		"resume":       "a reproduction's folder to read",
		"markdown":     "a file for the findings",
		// Judging for CI (issue 25): words and expressions read against the run's own figures.
		"fail-on":   "words, each one of gate.Words, refused otherwise",
		"threshold": "arena run and reproduce: [stream:]figure<value, the stream one of the plan's tags (gate.ParseThreshold); arena compare: a per cent",
		"junit":     "a file the checks are written to",
		// Multi-host runs (issue 13): control traffic goes to agents; load goes only to the
		// contender, which listens on this host (place.CheckLocalAddress binds the address first).
		"listen":            "the agent's own listening address; it sends load only to its --server-address (loopback without one), whatever a job says",
		"name":              "the agent's name in the results",
		"agent-addrs":       "control connections to arena agents of this very build (refused otherwise); their load goes to the contender on server-address",
		"server-address":    "arena run: must be an address of this host (place.CheckLocalAddress binds it first); arena agent: the only address it sends load to, given by whoever started it",
		"role":              "load or server, nothing else",
		"secret-file":       "a file the secret is read from",
		"agent-secret-file": "a file the secret is read from",
		"coordinator-cidr":  "an address block written into a NetworkPolicy as allowed to call the agents; nothing is sent there",
		"hosts":             "ssh destinations of the user's own client hosts, and a server address that must be this host's (place.CheckLocalAddress)",
		"id":                "a run folder's name, checked by the server agent (letters, digits, '.', '_', '-')",
		"runs":              "a folder for a server agent's runs",
		// A server arena did not start (issue 24): the one address the user points the run at.
		"target":        "arena run: the user's server, http://IP:port alone (targetAddr): every load, the watchdog and verify go to that one address and nowhere else; agents still send only to their own --server-address",
		"target-name":   "a name, a-z, 0-9 and - (checkTarget)",
		"target-env":    "contract variables the target was started with, as the user says: recorded and compared with the levels', never sent anywhere",
		"target-knobs":  "names of contract variables, or none (checkTarget)",
		"target-cgroup": "a folder on this host whose cgroup.procs files are read (probe.CgroupProcs): nothing is sent anywhere",
		"target-ready":  "a path beginning with / (checkTarget), asked of the target's own address",
		// Export (issue 25): where the user's own dashboard listens.
		"export": "KIND=URL of a metrics receiver the user names (Prometheus remote write, OTLP/HTTP): each saved cell's figures are sent there once, a request or few, never load; http(s) with a host and no credentials",
		// arena k8s manifests writes YAML and sends nothing.
		"image":       "an image reference written into the manifests",
		"load-image":  "an image reference written into the manifests",
		"namespace":   "a Kubernetes namespace written into the manifests",
		"run-id":      "a label value written into the manifests",
		"agent-node":  "node-selector labels written into the manifests",
		"server-node": "node-selector labels written into the manifests",
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			switch f.Value.Type() {
			case "int", "bool", "duration", "intSlice", "float64":
				return // numbers cannot name a host; ports are on 127.0.0.1
			}
			if _, ok := reviewed[f.Name]; !ok && f.Name != "help" {
				t.Errorf("%s --%s (%s) takes text no test has reviewed: could it name an address?", c.CommandPath(), f.Name, f.Value.Type())
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
	if err := checkEnv(map[string]string{"DOWNSTREAM_URL": "http://evil.example/"}); err == nil {
		t.Error("--env DOWNSTREAM_URL=http://evil.example/ is accepted: a contender would call outside the lab")
	}
}
