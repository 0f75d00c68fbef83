package cmd

import (
	"bytes"
	"net"
	"slices"
	"strconv"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

func TestRunRejectsBadInput(t *testing.T) {
	setup(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := strconv.Itoa(held.Addr().(*net.TCPAddr).Port)

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"repeat 0", []string{"--repeat", "0"}, []string{"--repeat 0: give 1 to 100"}},
		{"repeat 101", []string{"--repeat", "101"}, []string{"--repeat 101: give 1 to 100"}},
		{"repeat not a number", []string{"--repeat", "abc"}, []string{`invalid argument "abc"`, "--repeat"}},
		{"unknown scenario", []string{"nosuch"}, []string{`no scenario "nosuch"`, "scenarios: isolation"}},
		{"two scenarios", []string{"isolation", "isolation"}, []string{"accepts at most 1 arg"}},
		{"unknown preset", []string{"--preset", "nosuch"}, []string{`no preset "nosuch"`, "seed, default"}},
		{"unknown level", []string{"--levels", "nosuch"}, []string{"nosuch"}},
		{"server CPU not here", []string{"--server-cpus", "99", "--client-cpus", "0"}, []string{"--server-cpus", `"99"`, "not available"}},
		{"server CPUs not a list", []string{"--server-cpus", "one"}, []string{"--server-cpus", `"one" is not a CPU number`}},
		{"client CPUs not a list", []string{"--server-cpus", "0", "--client-cpus", "2-1"}, []string{"--client-cpus", `"2-1"`}},
		{"heap too small", []string{"--heap", "10", "--server-cpus", "0", "--client-cpus", "0"}, []string{"--heap 10", "between 64 and 65536"}},
		{"heap too large", []string{"--heap", "100000", "--server-cpus", "0", "--client-cpus", "0"}, []string{"--heap 100000"}},
		{"privileged port", []string{"--port", "80"}, []string{"--port 80: give 1024 to 65535"}},
		{"port too large", []string{"--port", "70000"}, []string{"--port 70000"}},
		{"port taken", []string{"--port", heldPort}, []string{"port " + heldPort + " is already in use"}},
		{"negative duration", []string{"--duration", "-1s"}, []string{"--duration and --timeout must be positive"}},
		{"negative timeout", []string{"--timeout", "-5s"}, []string{"--duration and --timeout must be positive"}},
		{"duration not a duration", []string{"--duration", "soon"}, []string{`invalid argument "soon"`, "--duration"}},
		{"unknown flag", []string{"--repeats", "2"}, []string{"unknown flag: --repeats"}},
		{"env the lab sets", []string{"--env", "PORT=80"}, []string{"--env PORT: the lab sets it itself"}},
		{"env opening the contender", []string{"--env", "BIND_ADDRESS=0.0.0.0"}, []string{"--env BIND_ADDRESS: the lab sets it itself"}},
		{"env pprof off loopback", []string{"--env", "PPROF_ADDR=0.0.0.0:6060"}, []string{"--env PPROF_ADDR=0.0.0.0:6060: give a loopback IP:port"}},
		{"env pprof a name", []string{"--env", "PPROF_ADDR=localhost:6060"}, []string{"--env PPROF_ADDR=localhost:6060: give a loopback IP:port"}},
		{"env not a name", []string{"--env", "worker threads=11"}, []string{`--env "worker threads": a contract variable is named in capitals`}},
		{"env not a pair", []string{"--env", "WORKER_THREADS"}, []string{`invalid argument "WORKER_THREADS"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			refused(t, append(append([]string{"run"}, tt.args...), "--out", out), tt.want...)
			noWork(t, out)
		})
	}
}

func TestRunUnknownContender(t *testing.T) {
	for _, list := range []string{"nosuch", "nosuch,other"} {
		t.Run(list, func(t *testing.T) {
			out := t.TempDir()
			unknownContender(t, "run", "--contenders", list, "--server-cpus", "0", "--client-cpus", "0", "--out", out)
			noWork(t, out)
		})
	}
}

// summaryRun is a finished run as printSummary sees it: two contenders at one level, the
// first with a crashed repeat, failed requests and noisy figures, the second client-bound.
func summaryRun() *results.Run {
	// errs counts every attempt with no correct answer, the non-2xx among them
	tag := func(name string, p50, p99, rps float64, errs, non2xx int64) results.TagSummary {
		return results.TagSummary{Tag: name, Merged: results.Latency{Count: 100, P50: p50, P99: p99},
			RPS: results.Spread{Median: rps}, Errors: errs, Non2xx: non2xx}
	}
	return &results.Run{
		Summary: []results.CellSummary{
			{Contender: "spring-mvc", Level: "study", Outcomes: []string{"ok", "crashed", "crashed"}, Noisy: true,
				Tags:   []results.TagSummary{tag("instant", 4.2, 41000, 9.6, 5, 2), tag("delayed", 10000, 52000, 9.1, 1, 0)},
				CPUPct: results.Spread{Median: 61.4}, RSSMB: results.Spread{Median: 312.6}, Threads: results.Spread{Median: 210}},
			{Contender: "spring-webflux", Level: "study", Outcomes: []string{"ok"}, ClientBnd: true,
				Tags:   []results.TagSummary{tag("instant", 0.81, 6.1, 10, 0, 0), {Tag: "delayed"}},
				CPUPct: results.Spread{Median: 24}, RSSMB: results.Spread{Median: 180}, Threads: results.Spread{Median: 40}},
		},
		Verdicts: []results.Verdict{
			{Contender: "spring-mvc", Level: "study", Verdict: "starved"},
			{Contender: "spring-webflux", Verdict: "isolated"}, // on the contender as a whole
		},
		Claims: []results.Claim{{ID: "a", Text: "A synchronous servlet degrades.", Verdict: "holds", Why: "instant p99 41 s"}},
	}
}

// The table a run ends with: a row per contender and level with its verdict, each tag's
// p50/p99, the rate, every failed request, resources and what to beware of; then the claims.
func TestPrintSummary(t *testing.T) {
	var out bytes.Buffer
	if err := printSummary(&out, summaryRun()); err != nil {
		t.Fatal(err)
	}
	want := `
CONTENDER       LEVEL  VERDICT   INSTANT p50/p99    DELAYED p50/p99    PER S  ERRORS  CPU%  RSS MB  THREADS  NOTE
spring-mvc      study  starved   4.20 ms / 41.00 s  10.00 s / 52.00 s  10     6       61    313     210      crashed,noisy
spring-webflux  study  isolated  0.81 ms / 6.10 ms  -                  10     0       24    180     40       client-bound

The study's claims:
  (a) A synchronous servlet degrades.
      HOLDS: instant p99 41 s
`
	if got := out.String(); got != want {
		t.Errorf("summary:\n%s\nwant:\n%s", got, want)
	}
}

// A run that measured nothing prints nothing.
func TestPrintSummaryOfNothing(t *testing.T) {
	var out bytes.Buffer
	if err := printSummary(&out, &results.Run{Claims: []results.Claim{{ID: "a"}}}); err != nil {
		t.Fatal(err)
	}
	if out.Len() > 0 {
		t.Errorf("an empty run printed %q", out.String())
	}
}

// With no scenario, arena run is the first look: isolation on four models in the quick form;
// a flag given for either overrides it, and a named scenario runs every contender.
func TestRunFirstLook(t *testing.T) {
	cases := []struct {
		args       []string
		scenario   string
		contenders []string
		quick      bool
	}{
		{nil, "isolation", firstLook, true},
		{[]string{"--contenders", "netty"}, "isolation", []string{"netty"}, true},
		{[]string{"--duration", "60s"}, "isolation", firstLook, false},
		{[]string{"--preset", "default"}, "isolation", firstLook, false},
		{[]string{"sleep"}, "sleep", nil, false},
		{[]string{"isolation"}, "isolation", nil, false},
	}
	for _, tt := range cases {
		cmd := newRunCmd()
		if err := cmd.ParseFlags(tt.args); err != nil {
			t.Fatal(err)
		}
		var contenders []string
		if c, err := cmd.Flags().GetStringSlice("contenders"); err == nil {
			contenders = c
		}
		quick := false
		name := firstLookDefaults(cmd, cmd.Flags().Args(), &contenders, &quick)
		if name != tt.scenario || !slices.Equal(contenders, tt.contenders) || quick != tt.quick {
			t.Errorf("arena run %v: %s on %v, quick %v; want %s on %v, quick %v", tt.args, name, contenders, quick, tt.scenario, tt.contenders, tt.quick)
		}
	}
	if len(firstLook) != 4 || !slices.Contains(firstLook, "spring-mvc") || !slices.Contains(firstLook, "spring-mvc-virtual") {
		t.Errorf("the first look %v: the blocking servlet and the three models that stay isolated", firstLook)
	}
}
