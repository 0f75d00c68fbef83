package main

// End-to-end tests: the real arena binary against the real contenders, as a user runs it.
// They need a JDK 21+, Maven (the builds) and Chromium (the report); `go test -short` skips
// them. Contenders are pinned to CPU 1 and the client to CPU 0, so the suite must not run
// packages in parallel (the Makefile passes -p 1).

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/results/schemadoc"
	streamload "github.com/arena-lab/arena/internal/stream"
	"github.com/arena-lab/arena/report"
	streamscenario "github.com/arena-lab/arena/scenarios/stream"
)

var arenaBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "arena-e2e-")
	if err != nil {
		panic(err)
	}
	arenaBin = filepath.Join(dir, "arena")
	if out, err := exec.Command("go", "build", "-o", arenaBin, ".").CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// e2e skips t under -short; otherwise it prints t's duration when it ends, to stderr: go test
// shows it with -v, or in a failed run's log, where it says where CI's minutes went.
func e2e(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: builds and runs real contenders")
	}
	start := time.Now()
	t.Cleanup(func() {
		fmt.Fprintf(os.Stderr, "e2e %s: %s\n", t.Name(), time.Since(start).Round(time.Second))
	})
}

// arena runs the binary with a deadline and returns its combined output and exit code.
func arena(t *testing.T, timeout time.Duration, args ...string) (string, int) {
	t.Helper()
	return arenaAt(t, mustAbs(t, "."), timeout, args...)
}

// arenaAt is arena with the lab at root.
func arenaAt(t *testing.T, root string, timeout time.Duration, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, arenaBin, args...)
	cmd.Env = append(os.Environ(), "ARENA_ROOT="+root)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.String(), 0
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	}
	t.Fatalf("arena %s: %v\n%s", strings.Join(args, " "), err, out.String())
	return "", -1
}

// interruptAt runs cmd (the arena binary, ARENA_ROOT set), logging its stderr, sends it a
// Ctrl-C delay after a line of its stderr begins with prefix, and returns how it ended.
func interruptAt(t *testing.T, cmd *exec.Cmd, prefix string, delay time.Duration) error {
	t.Helper()
	cmd.Env = append(os.Environ(), "ARENA_ROOT="+mustAbs(t, "."))
	stderr, _ := cmd.StderrPipe()
	cmd.Stdout = os.Stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sent := false
		for sc.Scan() {
			t.Log(sc.Text())
			if !sent && strings.HasPrefix(sc.Text(), prefix) {
				time.Sleep(delay)
				_ = cmd.Process.Signal(os.Interrupt)
				sent = true
			}
		}
		done <- cmd.Wait()
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatal("arena did not stop after Ctrl-C")
	}
	return nil
}

func mustAbs(t *testing.T, p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestEveryContenderKeepsTheContract(t *testing.T) {
	e2e(t)
	all, err := contender.Discover("contenders")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 5 {
		t.Fatalf("found %d contenders; the isolation study alone has five", len(all))
	}
	// Two at a time: verify mostly waits, and CI's time is bounded.
	out, code := arena(t, 20*time.Minute, "verify", "--jobs", "2")
	if code != 0 {
		t.Fatalf("arena verify exited %d:\n%s", code, out)
	}
	for _, m := range all {
		if !strings.Contains(out, m.Name+" (") {
			t.Errorf("verify output does not mention %s", m.Name)
		}
		// Its progress, group by group: verify is minutes of a first run.
		if !strings.Contains(out, "verify "+m.Name+": http ") {
			t.Errorf("verify's progress has no tally of %s's groups", m.Name)
		}
	}
	if strings.Contains(out, "FAIL") {
		t.Fatalf("a check failed:\n%s", out)
	}
}

// The study's finding, measured: with 11 request threads the blocking servlet starves
// /instant and the probes, while WebFlux keeps them fast. Wide margins: only the order of
// magnitude is asserted, never a speed. The same run is CI's gate (issue 25): with
// --fail-on fails, the starved cell fails it (exit 2, named in the output, summary.json and
// the JUnit file) and the isolated one passes it; one run serves both, as CI's time is bounded.
func TestIsolationStarvesTheSyncServletOnly(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	log, code := arena(t, 15*time.Minute, "run", "isolation", "--contenders", "spring-mvc,spring-webflux",
		"--quick", "--duration", "12s", "--timeout", "12s", "--fail-on", "fails", "--junit", junit, "--out", out)
	if code != 2 {
		t.Fatalf("arena run exited %d, want 2 (the starved cell fails --fail-on fails):\n%s", code, log)
	}
	run := loadOnlyRun(t, out)
	checkGate(t, log, readSummary(t, filepath.Join(out, run.ID)), readJUnit(t, junit))
	if run.Status != "complete" || len(run.Cells) != 2 {
		t.Fatalf("status %s with %d cells:\n%s", run.Status, len(run.Cells), log)
	}
	verdict := map[string]string{}
	for _, v := range run.Verdicts {
		verdict[v.Contender] = v.Verdict
	}
	if verdict["spring-mvc"] != "starved" || verdict["spring-webflux"] != "isolated" {
		t.Fatalf("verdicts %v; want spring-mvc starved, spring-webflux isolated\n%s", verdict, log)
	}
	p99 := map[string]float64{}
	for _, s := range run.Summary {
		for _, tag := range s.Tags {
			if tag.Tag == "instant" {
				p99[s.Contender] = tag.Merged.P99
			}
		}
	}
	if p99["spring-mvc"] < 10*p99["spring-webflux"] {
		t.Fatalf("/instant p99: spring-mvc %.1f ms, spring-webflux %.1f ms; want ≥ 10×", p99["spring-mvc"], p99["spring-webflux"])
	}
	for _, c := range run.Cells {
		if c.Env["WORKER_THREADS"] != "11" && c.Contender == "spring-mvc" {
			t.Errorf("spring-mvc ran with env %v; want WORKER_THREADS=11 (preset seed)", c.Env)
		}
		if c.Server.Summary.Samples < 20 || c.Server.Summary.ThreadsMax == 0 || c.Client.Summary.Samples < 20 {
			t.Errorf("%s: probe summaries %+v / %+v; want ≥ 4 samples a second", c.Contender, c.Server.Summary, c.Client.Summary)
		}
		raw, err := os.ReadFile(filepath.Join(out, run.ID, c.Hlog))
		if err != nil || !bytes.Contains(raw, []byte("Tag=instant,")) {
			t.Errorf("%s: .hlog %s missing or without tagged intervals (%v)", c.Contender, c.Hlog, err)
		}
	}
	csv, err := os.ReadFile(filepath.Join(out, run.ID, results.CSVFile))
	if err != nil || bytes.Count(csv, []byte("\n")) != 1+2*4 {
		t.Fatalf("results.csv: want a header and 8 rows (2 cells × 4 tags); %v\n%s", err, csv)
	}
	checkReportDraws(t, filepath.Join(out, run.ID, "report.html"))

	// Re-rendering from results.json gives a report too.
	again := filepath.Join(t.TempDir(), "again.html")
	if o, code := arena(t, time.Minute, "report", filepath.Join(out, run.ID), "-o", again); code != 0 {
		t.Fatalf("arena report exited %d: %s", code, o)
	}
	checkReportDraws(t, again)
}

func checkReportDraws(t *testing.T, path string) {
	t.Helper()
	if _, err := report.FindChromium(); err != nil && os.Getenv("CI") != "true" {
		t.Logf("report not checked in a browser: %v", err)
		return
	}
	if err := report.CheckInBrowser(path); err != nil {
		t.Fatalf("report %s: %v", path, err)
	}
}

func loadOnlyRun(t *testing.T, out string) *results.Run { return loadRun(t, out, "isolation") }

func loadRun(t *testing.T, out, scenario string) *results.Run {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(out, "*-"+scenario))
	if len(dirs) != 1 {
		t.Fatalf("want one run folder in %s, found %v", out, dirs)
	}
	run, err := results.Load(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	checkSchemaDocumented(t, filepath.Join(dirs[0], results.JSONFile))
	return run
}

// Ctrl-C during the second cell: the first cell stays in the results, the second is
// marked interrupted, arena exits 130, and no contender process is left.
func TestCtrlCKeepsFinishedCellsAndLeavesNoProcess(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	cmd := exec.Command(arenaBin, "run", "isolation", "--contenders", "spring-webflux,spring-mvc-virtual",
		"--quick", "--duration", "5s", "--timeout", "5s", "--out", out)
	err := interruptAt(t, cmd, "[2/2]", 4*time.Second) // into the second cell's start-up or load
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v; want 130 after Ctrl-C", err)
	}
	run := loadOnlyRun(t, out)
	if run.Status != "interrupted" || len(run.Cells) != 2 {
		t.Fatalf("status %s, %d cells; want interrupted with both cells recorded", run.Status, len(run.Cells))
	}
	if run.Cells[0].Outcome.Status != results.OutcomeOK || run.Cells[1].Outcome.Status != results.OutcomeInterrupted {
		t.Fatalf("outcomes %s, %s; want ok then interrupted", run.Cells[0].Outcome.Status, run.Cells[1].Outcome.Status)
	}
	assertNoContenderLeft(t)
	if err := contender.PortFree(run.Cells[1].Port); run.Cells[1].Port != 0 && err != nil {
		t.Fatalf("the interrupted cell's port is still held: %v", err)
	}
}

// A contender that dies mid-run is that cell's outcome; the run goes on and completes.
func TestAContenderKilledMidRunIsRecorded(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	cmd := exec.Command(arenaBin, "run", "isolation", "--contenders", "spring-webflux",
		"--quick", "--duration", "8s", "--timeout", "5s", "--out", out)
	cmd.Env = append(os.Environ(), "ARENA_ROOT="+mustAbs(t, "."))
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "[1/1]") {
				// Wait for readiness and some load, then kill the JVM (not its group).
				time.Sleep(12 * time.Second)
				for _, pid := range contenderProcs(t, "spring-webflux") {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			}
		}
	}()
	err := cmd.Wait()
	if err != nil {
		t.Fatalf("arena run: %v; want it to complete despite the crash", err)
	}
	run := loadOnlyRun(t, out)
	c := run.Cells[0]
	if c.Outcome.Status != results.OutcomeCrashed || c.Outcome.Signal != syscall.SIGKILL.String() {
		t.Fatalf("outcome %+v; want crashed by SIGKILL", c.Outcome)
	}
	if len(c.Outcome.LogTail) == 0 {
		t.Fatal("no log tail recorded for the crash")
	}
	if run.Verdicts[0].Verdict != results.OutcomeCrashed {
		t.Fatalf("verdict %+v; want crashed", run.Verdicts[0])
	}
	assertNoContenderLeft(t)
}

// dropped is the most a /stream server said it dropped at any poll it answered: a server
// busy at its one core may leave the last poll, after the clients closed, unanswered.
func dropped(st *streamload.Figures) int64 {
	var n int64
	for _, s := range st.StatsTimeline {
		if s.OK {
			n = max(n, s.Dropped)
		}
	}
	return n
}

func assertNoContenderLeft(t *testing.T) {
	t.Helper()
	if left := contenderProcs(t, ""); len(left) > 0 {
		t.Fatalf("contender processes left behind: %v", left)
	}
}

// contenderProcs lists the pids of processes running in this lab's contenders/<name>
// folders (any contender when name is ""), by working directory: other labs on the machine
// are not ours to count.
func contenderProcs(t *testing.T, name string) []int {
	t.Helper()
	return procsIn(t, filepath.Join(mustAbs(t, "contenders"), name))
}

// procsIn lists the pids of processes whose working directory is dir or below it.
func procsIn(t *testing.T, dir string) []int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err == nil && (cwd == dir || strings.HasPrefix(cwd, dir+"/")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func TestBadInputFailsClearly(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"run", "--repeat", "0"}, "--repeat"},
		{[]string{"run", "nosuch"}, "no scenario"},
		{[]string{"run", "--contenders", "nosuch"}, "no contender"},
		{[]string{"run", "--server-cpus", "99"}, "not available"},
		{[]string{"run", "--bogus"}, "unknown flag"},
	}
	for _, c := range cases {
		out, code := arena(t, 30*time.Second, c.args...)
		if code == 0 || !strings.Contains(out, c.want) {
			t.Errorf("arena %s: exit %d, output %q; want an error mentioning %q", strings.Join(c.args, " "), code, out, c.want)
		}
	}
}

// checkSchemaDocumented: every key of a real results.json must be documented in
// docs/results.md, so the schema page cannot fall behind the code. Every scenario's run
// is checked, so every scenario's keys are.
func checkSchemaDocumented(t *testing.T, resultsJSON string) {
	t.Helper()
	raw, err := os.ReadFile(resultsJSON)
	if err != nil {
		t.Fatal(err)
	}
	schemadoc.Check(t, resultsJSON, raw, "docs/results.md")
}

// Study 001's shape, measured: at 800 connections the 200-thread Tomcat queues (its mean
// near 400 ms) while Netty stays near the 100 ms sleep. Asserted with a wide margin: ≥ 2×.
func TestSleepShowsTheThreadPoolQueueing(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	log, code := arena(t, 15*time.Minute, "run", "sleep", "--contenders", "spring-mvc,netty", "--quick",
		"--levels", "sleep-c200,sleep-c800", "--out", out)
	if code != 0 {
		t.Fatalf("arena run sleep exited %d:\n%s", code, log)
	}
	run := loadRun(t, out, "sleep")
	mean, p99 := map[string]float64{}, map[string]float64{}
	for _, s := range run.Summary {
		for _, tag := range s.Tags {
			mean[s.Contender+"/"+s.Level] = tag.Merged.Mean
			p99[s.Contender+"/"+s.Level] = tag.Merged.P99
			if tag.Errors > 0 || tag.Non2xx > 0 {
				t.Errorf("%s %s: %d errors, %d non-2xx", s.Contender, s.Level, tag.Errors, tag.Non2xx)
			}
		}
	}
	for _, c := range []string{"spring-mvc", "netty"} {
		if m := mean[c+"/sleep-c200"]; m < 100 || m > 200 {
			t.Errorf("%s at 200 connections: mean %.0f ms; want near the 100 ms sleep", c, m)
		}
	}
	// Predicted: Tomcat's mean 4× Netty's. Tomcat serves its busiest connections first, so
	// the queue shows most in the tail; both are asserted with room for a noisy machine.
	if tomcat, netty := mean["spring-mvc/sleep-c800"], mean["netty/sleep-c800"]; tomcat < 1.5*netty {
		t.Errorf("at 800 connections: mean spring-mvc %.0f ms, netty %.0f ms; want Tomcat's queue to show (≥ 1.5×)", tomcat, netty)
	}
	if tomcat, netty := p99["spring-mvc/sleep-c800"], p99["netty/sleep-c800"]; tomcat < 2*netty {
		t.Errorf("at 800 connections: p99 spring-mvc %.0f ms, netty %.0f ms; want Tomcat's queue to show (≥ 2×)", tomcat, netty)
	}
	if t.Failed() {
		t.Fatal(log)
	}
	checkReportDraws(t, filepath.Join(out, run.ID, "report.html"))
}

// Study 002's two forms run to completion, and the lab's downstream is measured beside
// the contender on the client's CPUs.
func TestDownstreamRunsBothForms(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	log, code := arena(t, 15*time.Minute, "run", "downstream", "--contenders", "vertx,spring-webflux", "--quick", "--out", out)
	if code != 0 {
		t.Fatalf("arena run downstream exited %d:\n%s", code, log)
	}
	run := loadRun(t, out, "downstream")
	if len(run.Cells) != 4 {
		t.Fatalf("%d cells; want 2 contenders × 2 levels", len(run.Cells))
	}
	for _, c := range run.Cells {
		if c.Outcome.Status != results.OutcomeOK || len(c.Tags) != 1 || c.Tags[0].Status["2xx"] != c.Tags[0].Sent || c.Tags[0].RPS <= 0 {
			t.Errorf("%s %s: outcome %s, tags %+v; want every request answered 2xx", c.Contender, c.Level, c.Outcome.Status, c.Tags)
		}
		switch c.Level {
		case "lab":
			if c.Downstream == nil || c.Downstream.Summary.Samples == 0 || c.Downstream.CPUs != run.Env.ClientCPUs {
				t.Errorf("%s lab: downstream resources %+v; want it probed on the client's CPUs", c.Contender, c.Downstream)
			}
		case "self":
			if c.Downstream != nil {
				t.Errorf("%s self: a lab downstream ran, but the contender is its own downstream", c.Contender)
			}
		}
	}
	if len(run.Claims) == 0 || run.Claims[0].Verdict == "untested" {
		t.Fatalf("claims %+v; want the Vert.x/WebFlux claim judged", run.Claims)
	}
}

// arena's own database study (issue 23) on a goroutine and a reactive contender: the lab's
// PostgreSQL is started for each cell and probed beside the contender, the pool held by slow
// queries makes /db/{id} far slower than unloaded on both models while /instant stays
// isolated, the cluster's password stays out of the results, and no database process or
// folder is left behind.
func TestDatabaseStudyHoldsThePool(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "arena-postgres-*"))
	log, code := arena(t, 15*time.Minute, "run", "database", "--quick", "--levels", "idle,held", "--contenders", "go-nethttp,spring-webflux", "--out", out)
	if code != 0 {
		t.Fatalf("arena run database exited %d:\n%s", code, log)
	}
	run := loadRun(t, out, "database")
	p99 := map[string]float64{}
	for _, c := range run.Cells {
		if c.Outcome.Status != results.OutcomeOK {
			t.Errorf("%s %s: %s %s", c.Contender, c.Level, c.Outcome.Status, c.Outcome.Detail)
			continue
		}
		if c.Database == nil || c.Database.Summary.Samples == 0 || c.Database.CPUs != run.Env.ClientCPUs {
			t.Errorf("%s %s: database resources %+v; want it probed on the client's CPUs", c.Contender, c.Level, c.Database)
		}
		if c.Env["DB_POOL"] != "16" || c.Env["DB_URL"] != "" {
			t.Errorf("%s %s: env %v; want DB_POOL=16 recorded and the URL, which holds the password, not", c.Contender, c.Level, c.Env)
		}
		for _, tag := range c.Tags {
			p99[c.Contender+" "+c.Level+" "+tag.Tag] = tag.Response.P99
			if tag.Tag != "slow" && tag.Errors["status"]+tag.Errors["body"] > 0 {
				t.Errorf("%s %s %s: wrong answers %v", c.Contender, c.Level, tag.Tag, tag.Errors)
			}
		}
	}
	for _, c := range []string{"go-nethttp", "spring-webflux"} {
		idle, held := p99[c+" idle db"], p99[c+" held db"]
		if idle <= 0 || held < 10*idle {
			t.Errorf("%s: /db/{id} p99 %.1f ms held, %.1f ms idle; want the held pool to show (≥ 10×)", c, held, idle)
		}
		if inst := p99[c+" held instant"]; inst <= 0 || inst > 100 {
			t.Errorf("%s: /instant p99 %.1f ms with the pool held; want it isolated (< 100 ms)", c, inst)
		}
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "arena-postgres-*"))
	if len(after) > len(before) {
		t.Errorf("database folders left: before %v, after %v", before, after)
	}
	if out, _ := exec.Command("pgrep", "-f", "arena-postgres-").Output(); len(out) > 0 {
		t.Errorf("database processes left: %s", out)
	}
	if t.Failed() {
		t.Log(log)
	}
}

// Ctrl-C during a database cell stops the cell's PostgreSQL with the contender: the run ends
// interrupted (130) with the finished cell kept, and no database process or folder is left.
func TestCtrlCDuringADatabaseCellStopsTheDatabase(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "arena-postgres-*"))
	cmd := exec.Command(arenaBin, "run", "database", "--quick", "--levels", "idle,held", "--contenders", "go-nethttp", "--out", out)
	err := interruptAt(t, cmd, "[2/2]", 4*time.Second) // into the held cell's load
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v; want 130 after Ctrl-C", err)
	}
	run := loadRun(t, out, "database")
	if run.Status != results.RunInterrupted || len(run.Cells) != 2 || run.Cells[0].Outcome.Status != results.OutcomeOK {
		t.Fatalf("status %s, %d cells; want interrupted with the idle cell kept", run.Status, len(run.Cells))
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "arena-postgres-*"))
	if len(after) > len(before) {
		t.Errorf("database folders left after Ctrl-C: before %v, after %v", before, after)
	}
	if out, _ := exec.Command("pgrep", "-f", "arena-postgres-").Output(); len(out) > 0 {
		t.Errorf("database processes left after Ctrl-C: %s", out)
	}
}

// --profile records every runtime's profile with its own tool over the load and the report
// draws a flame graph per contender, and the top-frames table, in a real browser.
func TestProfileDrawsAFlameGraphPerContender(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	// rust-threads: perf, over a thread a connection, every one started as the load begins.
	contenders := map[string]string{"spring-webflux": "jfr", "vertx": "jfr", "node-express": "v8", "go-nethttp": "pprof", "rust-threads": "perf"}
	log, code := arena(t, 15*time.Minute, "run", "downstream", "--levels", "lab", "--quick", "--profile",
		"--contenders", "spring-webflux,vertx,node-express,go-nethttp,rust-threads", "--out", out)
	if code != 0 {
		t.Fatalf("arena run downstream --profile exited %d:\n%s", code, log)
	}
	run := loadRun(t, out, "downstream")
	dirs, _ := filepath.Glob(filepath.Join(out, "*-downstream"))
	dir := dirs[0] // loadRun found exactly one
	if !run.Scenario.Profiled || len(run.Cells) != len(contenders) {
		t.Fatalf("profiled %v, %d cells; want a profiled run of %d", run.Scenario.Profiled, len(run.Cells), len(contenders))
	}
	for _, c := range run.Cells {
		p := c.Profile
		if c.Outcome.Status != results.OutcomeOK || p == nil {
			t.Errorf("%s: outcome %s, profile %+v; want ok with a profile", c.Contender, c.Outcome.Status, p)
			continue
		}
		// Samples, not a count of them: a quick load lasts under a second on the fastest stacks.
		if p.Tool != contenders[c.Contender] || p.Error != "" || p.Samples == 0 || len(p.Top) == 0 || p.Flame == nil || p.Flame.Value != p.Samples {
			t.Errorf("%s: tool %q (want %q), error %q, %d samples, %d top frames; want a profile of the load",
				c.Contender, p.Tool, contenders[c.Contender], p.Error, p.Samples, len(p.Top))
		}
		for _, f := range []string{p.File, p.Folded} {
			if _, err := os.Stat(filepath.Join(dir, f)); f == "" || err != nil {
				t.Errorf("%s: profile file %q: %v", c.Contender, f, err)
			}
		}
		if cp := c.ClientProfile; cp == nil || cp.Samples == 0 || cp.Error != "" {
			t.Errorf("%s: client profile %+v; want the client's samples of the same load", c.Contender, cp)
		}
	}
	html := filepath.Join(dir, "report.html")
	raw, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), `data-kind="flame"`); n != 2*len(contenders) {
		t.Errorf("%d flame graphs in the report; want two per contender, its own and the client's (%d)", n, 2*len(contenders))
	}
	checkReportDraws(t, html)
}

// Every contender with /chat delivers every message of a short chat, once each and in order
// per sender; a contender without it is listed as unsupported, not silently left out.
func TestChatDeliversEverythingOnEveryChatContender(t *testing.T) {
	e2e(t)
	all, err := contender.Discover("contenders")
	if err != nil {
		t.Fatal(err)
	}
	var withChat []string
	for _, m := range all {
		if m.Has("chat") {
			withChat = append(withChat, m.Name)
		}
	}
	if len(withChat) == 0 {
		t.Fatal("no contender has /chat")
	}
	out := t.TempDir()
	log, code := arena(t, 30*time.Minute, "run", "chat", "--quick", "--levels", "r2-u5", "--out", out)
	if code != 0 {
		t.Fatalf("arena run chat exited %d:\n%s", code, log)
	}
	run := loadRun(t, out, "chat")
	for _, c := range run.Cells {
		if !slices.Contains(withChat, c.Contender) {
			if c.Outcome.Status != results.OutcomeUnsupported {
				t.Errorf("%s has no /chat but its cell ended %s", c.Contender, c.Outcome.Status)
			}
			continue
		}
		if c.Outcome.Status != results.OutcomeOK || len(c.Tags) != 1 {
			t.Errorf("%s: outcome %s %s", c.Contender, c.Outcome.Status, c.Outcome.Detail)
			continue
		}
		d := c.Tags[0]
		if d.Completed != d.Scheduled || len(d.Errors) > 0 || len(c.Faults) > 0 {
			t.Errorf("%s: %d of %d deliveries, errors %v, faults %v; want every message once, in order, none leaked", c.Contender, d.Completed, d.Scheduled, d.Errors, c.Faults)
		}
	}
}

// Study 003's safety half, one contender per concurrency model: with back-pressure on, slow
// consumers leave memory bounded under the lab's cap, the server drops and counts, and it
// stays responsive. One contender without back-pressure shows the other half: memory grows
// until the cap ends it (or it is still growing when the load ends).
func TestStreamSlowConsumersStayBoundedWithBackpressure(t *testing.T) {
	e2e(t)
	all, err := contender.Discover("contenders")
	if err != nil {
		t.Fatal(err)
	}
	perModel := map[string]string{}
	var picked []string
	for _, m := range all {
		if m.Has("stream") && perModel[m.Model] == "" {
			perModel[m.Model] = m.Name
			picked = append(picked, m.Name)
		}
	}
	if len(picked) == 0 {
		t.Fatal("no contender has /stream")
	}
	out := t.TempDir()
	log, code := arena(t, 30*time.Minute, "run", "stream", "--quick", "--levels", "slow-on",
		"--contenders", strings.Join(picked, ","), "--out", out)
	if code != 0 {
		t.Fatalf("arena run stream exited %d:\n%s", code, log)
	}
	run := loadRun(t, out, "stream")
	for _, c := range run.Cells {
		st, measured := streamload.FiguresOf(c)
		if c.Outcome.Status != results.OutcomeOK || !measured || c.Memory == nil {
			t.Errorf("%s: outcome %s %s", c.Contender, c.Outcome.Status, c.Outcome.Detail)
			continue
		}
		f := streamscenario.FateOf(c)
		switch {
		case c.Memory.By != "cgroup":
			t.Errorf("%s: memory capped by %q, want a cgroup (this machine has cgroup v1)", c.Contender, c.Memory.By)
		case !f.Bounded():
			t.Errorf("%s with back-pressure under slow consumers: %s; want bounded", c.Contender, f)
		case dropped(st) == 0:
			t.Errorf("%s: no drops counted with %d slow clients at rate 0: %+v", c.Contender, st.SlowClients, st.StatsTimeline)
		case st.Delivered == 0 || len(c.Faults) > 0:
			t.Errorf("%s: delivered %d, delivery faults %v", c.Contender, st.Delivered, c.Faults)
		}
	}
	if len(run.Cells) != len(picked) {
		t.Errorf("%d cells for %d contenders (%v)", len(run.Cells), len(picked), picked)
	}

	out = t.TempDir()
	log, code = arena(t, 10*time.Minute, "run", "stream", "--quick", "--levels", "slow-off",
		"--contenders", "go-nethttp", "--out", out)
	if code != 0 {
		t.Fatalf("arena run stream (slow-off) exited %d:\n%s", code, log)
	}
	off := loadRun(t, out, "stream")
	if len(off.Cells) != 1 {
		t.Fatalf("slow-off: %d cells", len(off.Cells))
	}
	if _, measured := streamload.FiguresOf(off.Cells[0]); !measured {
		t.Fatalf("slow-off: no /stream figures: %+v", off.Cells[0].Outcome)
	}
	if f := streamscenario.FateOf(off.Cells[0]); !f.Grew() {
		t.Errorf("go-nethttp without back-pressure under slow consumers: %s; want growth or a failure at the cap", f)
	}
	if off.Claims[0].Verdict == results.ClaimFails || off.Claims[0].Verdict == results.ClaimUntested {
		t.Errorf("claim a: %+v", off.Claims[0])
	}
}

// A contender beside its stack's minimal example, for real: both built, started with the same
// settings and measured by wrk in alternating rounds. Asserted: both servers' rounds and the
// ratio, and no process left; never a speed.
func TestBenchFloorMeasuresAContenderBesideItsBaseline(t *testing.T) {
	e2e(t)
	log, code := arena(t, 5*time.Minute, "bench", "floor", "go-nethttp", "go-nethttp-hello",
		"--duration", "2s", "--warmup", "2s", "--rounds", "1", "--connections", "8", "--profile")
	if code != 0 {
		t.Fatalf("arena bench floor exited %d:\n%s", code, log)
	}
	// go-nethttp serves pprof on PPROF_ADDR; the minimal example does not, and says so.
	for _, want := range []string{"| 1 | go-nethttp | ", "| 1 | go-nethttp-hello | ", "req/s, go-nethttp-hello ", "its stack's floor)",
		"- go-nethttp: pprof, ", "go-nethttp.folded", "- go-nethttp-hello: no profile (go-nethttp-hello does not honour PPROF_ADDR"} {
		if !strings.Contains(log, want) {
			t.Errorf("no %q in:\n%s", want, log)
		}
	}
	assertNoContenderLeft(t)
	if left := procsIn(t, mustAbs(t, "baselines")); len(left) > 0 {
		t.Errorf("baseline processes left behind: %v", left)
	}
}
