package lab

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// readiness is an open loop on the readiness probe at 20/s for d, requests timing out at 1 s.
func readiness(d time.Duration) load.OpenLoop {
	return load.OpenLoop{Streams: []load.Stream{{Tag: "ready", Request: load.Request{Path: contender.ReadinessPath}, Pacer: load.PerSecond(20)}},
		Duration: d, Timeout: time.Second}
}

// probeScenario is a scenario of one level: the readiness probe for d, under the memory cap
// when capped. Its judge says each cell's outcome.
type probeScenario struct {
	d      time.Duration
	capped bool
}

func (probeScenario) Name() string      { return "probe" }
func (probeScenario) Title() string     { return "the readiness probe, for the lab's own tests" }
func (probeScenario) Study() string     { return "none" }
func (probeScenario) Presets() []string { return []string{"default"} }
func (p probeScenario) Plan(scenario.Options) (scenario.Plan, error) {
	return scenario.Plan{Preset: "default", Levels: []scenario.Level{{Name: "ready", Load: readiness(p.d), MemoryCap: p.capped}}}, nil
}
func (probeScenario) Judge(run *results.Run) ([]results.Verdict, []results.Claim) {
	var vs []results.Verdict
	for _, c := range run.Cells {
		vs = append(vs, scenario.Outcome(c.Outcome.Status).Verdict(c.Contender, c.Level, c.Outcome.Detail))
	}
	return vs, nil
}

// runAlone runs one cell of level on m, in the background; its pid file and hlog tell when
// it started and when its load did.
type cellRun struct {
	lab  *Lab
	hlog string
	port int
	done chan results.Cell
}

func runAlone(t *testing.T, l *Lab, m *contender.Manifest, level scenario.Level) *cellRun {
	t.Helper()
	port, err := contender.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := cellDir(t)
	c := cellPlan{m: m, level: level, repeat: 1}
	r := &cellRun{lab: l, hlog: c.file(dir, "hlog", "hlog"), port: port, done: make(chan results.Cell, 1)}
	go func() { r.done <- l.runCell(context.Background(), c, dir, port) }()
	return r
}

// loadStarted waits until the cell's load has begun (its interval log exists).
func (r *cellRun) loadStarted(t *testing.T) {
	t.Helper()
	eventually(t, "the load's start", 2*time.Minute, func() bool { return exists(r.hlog) })
}

// pgid is the process group of the contender listening on the cell's port.
func (r *cellRun) pgid(t *testing.T) int {
	t.Helper()
	out, err := exec.Command("ss", "-Hltnp", fmt.Sprintf("sport = :%d", r.port)).Output()
	if err != nil {
		t.Fatalf("ss: %v", err)
	}
	_, after, ok := strings.Cut(string(out), "pid=")
	pid, err := strconv.Atoi(strings.SplitN(after, ",", 2)[0])
	if !ok || err != nil {
		t.Fatalf("no listener on %d: %q", r.port, out)
	}
	pgid, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	return pgid
}

func (r *cellRun) wait(t *testing.T) results.Cell {
	t.Helper()
	select {
	case c := <-r.done:
		return c
	case <-time.After(3 * time.Minute):
		t.Fatal("the cell did not end within 3 minutes")
		return results.Cell{}
	}
}

func short(t *testing.T) {
	if testing.Short() {
		t.Skip("starts contenders")
	}
}

// duringLoad starts a cell of the readiness load for d on a python contender (before runs
// first in its shell), and returns it with the contender's process group once the load has
// begun.
func duringLoad(t *testing.T, name, before string, d time.Duration) (*cellRun, int) {
	t.Helper()
	short(t)
	r := runAlone(t, testLab(t, nil), pyServer(t, name, before), scenario.Level{Name: "ready", Load: readiness(d)})
	r.loadStarted(t)
	return r, r.pgid(t)
}

// A contender frozen mid-cell (SIGSTOP) answers nothing: the watchdog finds it unresponsive,
// with when it stopped answering; frozen, it cannot exit on SIGTERM, so it was killed.
func TestAFrozenContenderIsUnresponsive(t *testing.T) {
	r, pgid := duringLoad(t, "frozen", "", 8*time.Second)
	if err := syscall.Kill(-pgid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	c := r.wait(t)
	o := c.Outcome
	if o.Status != results.OutcomeUnresponsive || o.StoppedAnswering == nil || *o.StoppedAnswering < -1 || *o.StoppedAnswering > 3 ||
		!strings.Contains(o.Detail, "stopped answering") {
		t.Fatalf("outcome %+v (stopped answering at %v); want unresponsive from about the load's start", o, o.StoppedAnswering)
	}
	if !o.Killed {
		t.Errorf("a frozen contender exited on SIGTERM: %+v", o)
	}
	t.Logf("recorded: %s, stopped_answering_s %.2f, killed %v: %s", o.Status, *o.StoppedAnswering, o.Killed, o.Detail)
	if !groupGone(pgid) {
		t.Errorf("process group %d outlived its cell", pgid)
	}
}

// Any death in the contender's group is a crash, not only its main process's: here a child
// it started, killed mid-load while the server answers on.
func TestADeathInTheGroupIsACrash(t *testing.T) {
	r, pgid := duringLoad(t, "parent", "sleep 600 &", 4*time.Second)
	out, err := exec.Command("pgrep", "-g", strconv.Itoa(pgid), "-x", "sleep").Output()
	if err != nil {
		t.Fatalf("no sleep in group %d: %v", pgid, err)
	}
	child, _ := strconv.Atoi(strings.TrimSpace(string(out)))
	if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	c := r.wait(t)
	o := c.Outcome
	if o.Status != results.OutcomeCrashed || !strings.Contains(o.Detail, fmt.Sprintf("pid %d, sleep", child)) || !strings.Contains(o.Detail, "main process lived on") {
		t.Fatalf("outcome %+v; want crashed, naming the sleep %d", o, child)
	}
	if c.Tags[0].Completed == 0 {
		t.Errorf("the load stopped with the child: %+v", c.Tags[0].TagStats)
	}
	t.Logf("recorded: %s: %s", o.Status, o.Detail)
}

// A contender that ignores SIGTERM (trap ” TERM) is killed after its grace, and the outcome
// says so in a field, not only in words.
func TestAContenderDeafToSIGTERMIsFlaggedKilled(t *testing.T) {
	short(t)
	l := testLab(t, nil)
	m := pyServer(t, "deaf", "trap '' TERM;")
	c := runAlone(t, l, m, scenario.Level{Name: "ready", Load: readiness(time.Second)}).wait(t)
	if c.Outcome.Status != results.OutcomeOK || !c.Outcome.Killed || !strings.Contains(c.Outcome.Detail, "did not exit within 10s of SIGTERM") {
		t.Fatalf("outcome %+v; want ok, killed", c.Outcome)
	}
	t.Logf("recorded: %s, killed %v: %s", c.Outcome.Status, c.Outcome.Killed, c.Outcome.Detail)
	polite := runAlone(t, l, pyServer(t, "polite", ""), scenario.Level{Name: "ready", Load: readiness(time.Second)}).wait(t)
	if polite.Outcome.Killed {
		t.Errorf("a contender that exits on SIGTERM was flagged killed: %+v", polite.Outcome)
	}
}

// A contender that dies during the warm-up ends its cell there: no load is driven against a
// dead server, and the outcome says when.
func TestACrashDuringWarmupEndsTheCellAtOnce(t *testing.T) {
	short(t)
	warming := make(chan struct{})
	l := testLab(t, watchLines(map[string]func(){"warm-up": func() { close(warming) }}))
	m := pyServer(t, "fragile", "")
	// a long warm-up, which the crash must cut short
	warm := load.ClosedLoop{Tag: "warmup", Request: load.Request{Path: contender.ReadinessPath}, Connections: 1, Duration: 2 * time.Minute, Timeout: time.Second}
	port, err := contender.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	dir := cellDir(t)
	done := make(chan results.Cell, 1)
	began := time.Now()
	go func() {
		done <- l.runCell(context.Background(), cellPlan{m: m, repeat: 1,
			level: scenario.Level{Name: "ready", Load: readiness(time.Minute), Warmup: []load.Load{warm}}}, dir, port)
	}()
	select {
	case <-warming:
	case <-time.After(2 * time.Minute):
		t.Fatal("no warm-up within 2 minutes")
	}
	pgid := (&cellRun{port: port}).pgid(t)
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var c results.Cell
	select {
	case c = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the cell went on after its contender died in the warm-up")
	}
	if c.Outcome.Status != results.OutcomeCrashed || !strings.Contains(c.Outcome.Detail, "during the warm-up") || len(c.Tags) != 0 {
		t.Fatalf("outcome %+v with %d tags; want crashed during the warm-up, no load", c.Outcome, len(c.Tags))
	}
	took := time.Since(began)
	if took > 30*time.Second {
		t.Errorf("the cell took %s after a crash in its 2-minute warm-up", took)
	}
	t.Logf("recorded: %s after %s: %s", c.Outcome.Status, took.Round(time.Millisecond), c.Outcome.Detail)
}

// An interval log that cannot be written is noted in the cell, and the figures are kept.
func TestAnHlogThatCannotBeWrittenIsNoted(t *testing.T) {
	short(t)
	l := testLab(t, nil)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "hlog"), []byte("a file where the folder should be"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := l.runCell(context.Background(), cellPlan{m: pyServer(t, "plain", ""), repeat: 1,
		level: scenario.Level{Name: "ready", Load: readiness(time.Second)}}, dir, 0)
	if c.Outcome.Status != results.OutcomeOK || c.HlogError == "" || c.Hlog != "" || c.Tags[0].Completed == 0 {
		t.Fatalf("outcome %+v, hlog %q, hlog error %q, tags %+v; want ok with the error noted and the figures kept", c.Outcome, c.Hlog, c.HlogError, c.Tags)
	}
	t.Logf("recorded: %s, hlog_error %q, %d responses kept", c.Outcome.Status, c.HlogError, c.Tags[0].Completed)
}

// Two runs started in the same second each get a folder of their own.
func TestRunsInTheSameSecondGetTheirOwnFolders(t *testing.T) {
	runs := t.TempDir()
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		id, dir, err := makeRunDir(runs, "20261121-061500-chat")
		if err != nil {
			t.Fatal(err)
		}
		if seen[dir] || filepath.Base(dir) != id || !exists(filepath.Join(dir, "logs")) || !exists(filepath.Join(dir, "hlog")) {
			t.Fatalf("run %d: id %s, folder %s (seen %v)", i, id, dir, seen)
		}
		seen[dir] = true
	}
	if !seen[filepath.Join(runs, "20261121-061500-chat-3")] {
		t.Errorf("folders %v; want the id, then -2, -3", seen)
	}
}

// runOptions is a run of the probe scenario on m, into runs.
func runOptions(m *contender.Manifest, sc scenario.Scenario, runs string, repeat int) RunOptions {
	return RunOptions{Spec: results.RunSpec{Repeat: repeat}, Scenario: sc, Contenders: []*contender.Manifest{m}, RunsDir: runs, Command: []string{"arena", "run", "probe"}}
}

// A run whose results cannot be saved ends failed with a clear message, and loses nothing
// it measured: where the runs folder cannot take its folder, before any cell; where the
// run's own folder turns read-only midway, at the next save, its results kept elsewhere.
func TestSaveErrorsFailTheRun(t *testing.T) {
	short(t)
	m := pyServer(t, "plain", "")
	sc := probeScenario{d: time.Second}

	l := testLab(t, nil)
	verified(t, l, m)
	runs := filepath.Join(t.TempDir(), "runs")
	if err := os.Mkdir(runs, 0o755); err != nil {
		t.Fatal(err)
	}
	readOnly(t, runs)
	run, _, err := l.Run(context.Background(), runOptions(m, sc, runs, 1))
	if err == nil || run == nil || run.Status != results.RunFailed || !strings.Contains(err.Error(), "cannot make the run's folder") || len(run.Cells) != 0 {
		t.Fatalf("read-only runs folder: run %+v, err %v; want failed, saying so", run, err)
	}
	t.Logf("recorded: %s: %v", run.Status, err)

	runs = t.TempDir()
	var dir string
	watch := watchLines(map[string]func(){"[2/2]": func() {
		dirs, _ := filepath.Glob(filepath.Join(runs, "*-probe"))
		dir = dirs[0]
		readOnly(t, dir)
	}})
	l = testLab(t, watch)
	verified(t, l, m)
	run, kept, saveErr := l.Run(context.Background(), runOptions(m, sc, runs, 2))
	if saveErr == nil || run.Status != results.RunFailed || !strings.Contains(saveErr.Error(), "cannot save the results in "+dir) || !strings.Contains(saveErr.Error(), "kept in "+kept) {
		t.Fatalf("run %v, err %v; want failed, saying where its results are kept", run.Status, saveErr)
	}
	defer os.RemoveAll(kept)
	saved, err := results.Load(kept)
	if err != nil || len(saved.Cells) != 2 || saved.Status != results.RunFailed {
		t.Fatalf("results kept in %s: %v, %+v", kept, err, saved)
	}
	first, err := results.Load(dir)
	if err != nil || len(first.Cells) != 1 {
		t.Fatalf("the run's own folder lost its last good save: %v, %+v", err, first)
	}
	t.Logf("recorded: %s: %v", run.Status, saveErr)
}

// Ctrl-C twice during a cell whose contender ignores SIGTERM, under a memory cap: the
// contender is killed at once instead of after its grace, results.json is loadable and says
// interrupted, and no process or memory cgroup is left.
func TestTwoInterruptsLeaveLoadableResultsAndNothingBehind(t *testing.T) {
	short(t)
	m := pyServer(t, "deaf", "trap '' TERM;")
	runs := t.TempDir()
	ctx, interrupt := context.WithCancel(context.Background())
	hurry := make(chan struct{})
	l := testLab(t, nil)
	l.Hurry = hurry
	verified(t, l, m)
	type ended struct {
		run *results.Run
		dir string
		err error
	}
	done := make(chan ended, 1)
	go func() {
		run, dir, err := l.Run(ctx, runOptions(m, probeScenario{d: time.Minute, capped: true}, runs, 1))
		done <- ended{run, dir, err}
	}()
	eventually(t, "the load's start", 2*time.Minute, func() bool {
		hl, _ := filepath.Glob(filepath.Join(runs, "*", "hlog", "*.hlog"))
		return len(hl) > 0
	})
	pids := processesIn(m.Dir)
	if len(pids) != 1 {
		t.Fatalf("processes in %s: %v; want the contender", m.Dir, pids)
	}
	pgid, err := syscall.Getpgid(pids[0])
	if err != nil {
		t.Fatal(err)
	}
	groups := memoryGroups()
	began := time.Now()
	interrupt()  // Ctrl-C
	close(hurry) // and at once again
	var e ended
	select {
	case e = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the run did not end within a minute of two interrupts")
	}
	took := time.Since(began)
	if took >= contender.StopGrace {
		t.Errorf("stopping took %s: the second Ctrl-C did not cut the grace short", took)
	}
	if e.err != nil {
		t.Fatal(e.err)
	}
	saved, err := results.Load(e.dir)
	if err != nil || saved.Status != results.RunInterrupted || len(saved.Cells) != 1 || saved.Cells[0].Outcome.Status != results.OutcomeInterrupted {
		t.Fatalf("results.json: %v, %+v", err, saved)
	}
	if mem := e.run.Cells[0].Memory; mem == nil || mem.By != results.MemoryByCgroup {
		t.Logf("no memory cgroup here (%+v): only the processes are checked", mem)
	} else if len(groups) == 0 {
		t.Errorf("no memory cgroup seen during the capped cell")
	}
	if !groupGone(pgid) {
		t.Errorf("the contender's group %d is left", pgid)
	}
	if left := memoryGroups(); len(left) > 0 {
		t.Errorf("memory cgroups left behind: %v", left)
	}
	t.Logf("recorded: run %s, cell %s (%s), stopped %s after the two interrupts; memory groups during the cell %v, after none",
		saved.Status, saved.Cells[0].Outcome.Status, saved.Cells[0].Outcome.Detail, took.Round(time.Millisecond), groups)
}

// processesIn lists the processes whose working folder is dir.
func processesIn(dir string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd")); err == nil && cwd == dir {
			pids = append(pids, pid)
		}
	}
	return pids
}

// memoryGroups lists the memory cgroups this process has made for contenders.
func memoryGroups() []string {
	parent, _, err := hostCgroups.memoryParent()
	if err != nil {
		return nil
	}
	found, _ := filepath.Glob(filepath.Join(parent, hostCgroups.groupName("*")))
	var groups []string
	for _, g := range found {
		if !strings.HasSuffix(g, "-self") {
			groups = append(groups, g)
		}
	}
	return groups
}
