package main

import (
	"bufio"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// A reproduction killed part-way (SIGKILL: a crash, no chance to save) carries on with
// --resume from its last finished cell: every planned cell is there once, none measured
// twice, no process is left, and the findings are written.
func TestReproduceResumesAfterACrash(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	args := []string{"reproduce", "--quick", "--contenders", "go-nethttp", "--only", "isolation,downstream", "--out", out}
	cmd := exec.Command(arenaBin, args...)
	cmd.Env = append(os.Environ(), "ARENA_ROOT="+mustAbs(t, "."))
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		inDownstream, sent := false, false
		for sc.Scan() {
			line := sc.Text()
			t.Log(line)
			inDownstream = inDownstream || strings.HasPrefix(line, "[step 2/2]")
			// Once the downstream step's first cell is saved (the lab saves before it starts
			// the next), a crash during its second.
			if inDownstream && !sent && strings.HasPrefix(line, "[2/2]") {
				_ = cmd.Process.Kill()
				sent = true
			}
		}
		killed <- sent
	}()
	waitOrKill(t, cmd, 10*time.Minute)
	if !<-killed {
		t.Fatal("the reproduction ended before the kill: nothing to resume")
	}
	assertNoContenderLeft(t)

	dirs, _ := filepath.Glob(filepath.Join(out, "reproduce-*"))
	if len(dirs) != 1 {
		t.Fatalf("reproduction folders %v", dirs)
	}
	before, err := results.LoadReproduction(dirs[0])
	if err != nil || before.Status != results.RunRunning || before.Steps[0].Status != results.RunComplete || before.Steps[1].Status != results.RunRunning {
		t.Fatalf("after the kill: %+v, %v; want the first step complete, the second running", before, err)
	}
	log, code := arena(t, 10*time.Minute, "reproduce", "--resume", dirs[0])
	if code != 0 {
		t.Fatalf("arena reproduce --resume exited %d:\n%s", code, log)
	}
	if !strings.Contains(log, "carrying on run "+before.Steps[1].Run) || !strings.Contains(log, "1 cell(s)") {
		t.Errorf("the resume did not carry on the downstream run with its one cell left:\n%s", log)
	}
	after, err := results.LoadReproduction(dirs[0])
	if err != nil || after.Status != results.RunComplete {
		t.Fatalf("after the resume: %+v, %v", after, err)
	}
	for _, st := range after.Steps {
		run, err := results.Load(filepath.Join(dirs[0], st.Run))
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, c := range run.Cells {
			seen[c.Level]++
		}
		if run.Status != results.RunComplete || len(run.Cells) != len(run.Scenario.Levels) {
			t.Errorf("%s: %s with %d cells for %d levels", run.ID, run.Status, len(run.Cells), len(run.Scenario.Levels))
		}
		for level, n := range seen {
			if n != 1 {
				t.Errorf("%s: level %s measured %d times", run.ID, level, n)
			}
		}
		if _, err := os.Stat(filepath.Join(dirs[0], st.Run, "report.html")); err != nil {
			t.Errorf("%s has no report: %v", run.ID, err)
		}
	}
	page := filepath.Join(dirs[0], "findings.html")
	if _, err := os.Stat(page); err != nil {
		t.Fatal(err)
	}
	checkReportDraws(t, page)
	assertNoContenderLeft(t)
}

// waitOrKill waits for cmd, killing it after limit.
func waitOrKill(t *testing.T, cmd *exec.Cmd, limit time.Duration) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the test reads what arena left, not its exit status
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(limit):
		_ = cmd.Process.Kill()
		t.Fatalf("arena did not end within %s", limit)
	}
}

// A contender against itself is not significantly different; against itself with 11 request
// threads instead of Tomcat's 200 it is, in throughput and tail latency, and
// --fail-on-regression fails on it. Four repeats each, the fewest the gate takes: a U test
// over four and four reaches p = 0.029 at most, so the comparisons test at compare's 0.05.
func TestCompareTellsASettingApart(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	run := func(extra ...string) string {
		t.Helper()
		before, _ := filepath.Glob(filepath.Join(out, "*-sleep"))
		args := append([]string{"run", "sleep", "--contenders", "spring-mvc", "--levels", "sleep-c200", "--quick", "--duration", "4s", "--repeat", "4", "--out", out}, extra...)
		if log, code := arena(t, 10*time.Minute, args...); code != 0 {
			t.Fatalf("arena %s exited %d:\n%s", strings.Join(args, " "), code, log)
		}
		after, _ := filepath.Glob(filepath.Join(out, "*-sleep"))
		for _, d := range after {
			if !slices.Contains(before, d) {
				return d
			}
		}
		t.Fatal("no new run folder")
		return ""
	}
	a1, a2 := run(), run()
	b := run("--env", "WORKER_THREADS=11")
	rows := func(x, y string) map[string]string {
		t.Helper()
		log, code := arena(t, time.Minute, "compare", x, y, "--alpha", "0.05", "-o", filepath.Join(out, filepath.Base(y)+".html"))
		if code != 0 {
			t.Fatalf("arena compare exited %d:\n%s", code, log)
		}
		got := map[string]string{}
		for _, line := range strings.Split(log, "\n") {
			f := strings.Fields(line)
			if len(f) >= 8 && f[0] == "spring-mvc" {
				got[f[3]] = line
			}
		}
		if len(got) != 4 {
			t.Fatalf("want four figures compared:\n%s", log)
		}
		return got
	}
	// Two runs of one setting minutes apart drift (a CI run over five repeats each measured
	// -5.3 % requests/s and +17 % p99, both at p = 0.008), and a U test calls any steady drift
	// significant: against itself, a figure is either not significant or a small change, far
	// from the change 11 threads make.
	bound := map[string]float64{"requests/s": 15, "p50": 30, "p99": 60, "p99.9": 100}
	for figure, line := range rows(a1, a2) {
		if strings.Contains(line, " ~ ") {
			continue
		}
		if c, ok := changeOf(line); !ok || math.Abs(c) > bound[figure] {
			t.Errorf("spring-mvc against itself, %s: %s; want ~ or a change within %.0f%%", figure, line, bound[figure])
		}
	}
	with11 := rows(a1, b)
	// Tomcat's poller serves some connections again and again and leaves the rest waiting, so
	// with 11 threads the median stays near 100 ms while the tail takes seconds: throughput
	// and the tail tell the setting apart, not the median.
	for _, figure := range []string{"requests/s", "p99"} {
		if line := with11[figure]; strings.Contains(line, " ~ ") || !strings.Contains(line, "p=0.029 n=4+4") {
			t.Errorf("11 request threads against 200, %s: %s; want a significant change", figure, line)
		}
	}
	if c, ok := changeOf(with11["requests/s"]); !ok || c > -50 {
		t.Errorf("11 threads did not lower throughput by half or more: %s", with11["requests/s"])
	}

	// The gate (issue 25): --fail-on-regression passes a run against itself (two runs of one
	// setting drift, as above, past its 10 %), and fails the 11 threads, naming the figures.
	page := filepath.Join(out, "gate.html")
	if log, code := arena(t, time.Minute, "compare", a1, a1, "--fail-on-regression", "-o", page); code != 0 {
		t.Errorf("spring-mvc against itself with --fail-on-regression: exit %d, want 0\n%s", code, log)
	}
	junit := filepath.Join(out, "compare.xml")
	log, code := arena(t, time.Minute, "compare", a1, b, "--fail-on-regression", "--junit", junit, "-o", page)
	if code != 2 {
		t.Fatalf("spring-mvc against WORKER_THREADS=11 with --fail-on-regression: exit %d, want 2\n%s", code, log)
	}
	if !strings.Contains(log, "FAILED change spring-mvc/sleep-c200 sleep requests/s (regression)") || !strings.Contains(log, "WORKER_THREADS unset → 11") {
		t.Errorf("the output does not name the regression:\n%s", log)
	}
	if doc := readJUnit(t, junit); doc.Failures < 1 {
		t.Errorf("the JUnit file has no failure: %+v", doc)
	}
}

// changeOf reads the change, in per cent, from a comparison's row.
func changeOf(line string) (float64, bool) {
	m := regexp.MustCompile(`\s([+-]\d+\.\d\d)%\s`).FindStringSubmatch(line)
	if m == nil {
		return 0, false
	}
	c, err := strconv.ParseFloat(m[1], 64)
	return c, err == nil
}
