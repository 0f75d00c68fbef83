package lab

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/faulty"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/internal/verify"
)

// A level runs against a target only when nothing of it happens at the server's start: the
// lab's downstream, its database and a memory cap are refused, and so is a contract variable
// the target honours unless it was said to be started with that very value.
func TestTargetRefuses(t *testing.T) {
	target := &results.Target{Name: "mine", Knobs: []string{"WORKER_THREADS", "BACKPRESSURE"}, Env: map[string]string{"BACKPRESSURE": "off"}}
	cases := []struct {
		name  string
		level scenario.Level
		want  []string // "" : runs
	}{
		{"nothing to set up", scenario.Level{Name: "plain"}, nil},
		{"the lab's downstream", scenario.Level{Name: "lab", Downstream: &scenario.Downstream{}}, []string{"level lab", "DOWNSTREAM_URL", "cannot be pointed at it"}},
		{"the lab's database", scenario.Level{Name: "idle", Database: &scenario.Database{Pool: 10}}, []string{"level idle", "DB_URL"}},
		{"a memory cap", scenario.Level{Name: "bp-on", MemoryCap: true}, []string{"memory cap", "cannot cap a server it did not start"}},
		{"a variable not said", scenario.Level{Name: "seed", Env: map[string]string{"WORKER_THREADS": "11"}},
			[]string{"sets WORKER_THREADS=11", "was not said to be started with it", "--target-env WORKER_THREADS=11", "--target-knobs"}},
		{"a variable said otherwise", scenario.Level{Name: "on", Env: map[string]string{"BACKPRESSURE": "on"}},
			[]string{"sets BACKPRESSURE=on", "was started with BACKPRESSURE=off"}},
		{"a variable said so", scenario.Level{Name: "off", Env: map[string]string{"BACKPRESSURE": "off"}}, nil},
		{"a variable it does not honour", scenario.Level{Name: "x", Env: map[string]string{"DOWNSTREAM_URL": "http://127.0.0.1:1"}}, nil},
	}
	for _, tt := range cases {
		why := TargetRefuses(target, tt.level)
		if (why == "") != (tt.want == nil) {
			t.Errorf("%s: refused %q; want refused: %v", tt.name, why, tt.want != nil)
		}
		for _, w := range tt.want {
			if !strings.Contains(why, w) {
				t.Errorf("%s: %q does not say %q", tt.name, why, w)
			}
		}
	}
	runnable, refused := TargetLevels(target, []scenario.Level{cases[0].level, cases[1].level, cases[6].level})
	if len(runnable) != 2 || runnable[1].Name != "off" || len(refused) != 1 {
		t.Errorf("levels: %d runnable (%v), refused %v; want plain and off, and lab refused", len(runnable), runnable, refused)
	}
}

// startTarget starts this test binary serving the lab's reference servers (with fault) as a
// user would start a server of their own: not through the lab, in a process group of its own.
// It returns the server's URL, host:port and pid once it answers; it is killed at the end.
func startTarget(t *testing.T, fault faulty.Fault) (url, addr string, pid int) {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	port, err := contender.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Env = append(os.Environ(), fixtureEnv+"="+string(fault), "PORT="+strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	addr = "127.0.0.1:" + strconv.Itoa(port)
	if err := targetReady(context.Background(), addr, readinessOf(&results.Target{Addr: addr}, nil), 30*time.Second); err != nil {
		t.Fatal(err)
	}
	return "http://" + addr, addr, cmd.Process.Pid
}

// targetScenario is the probe scenario with a second level under a memory cap, which a target
// cannot run.
type targetScenario struct{ probeScenario }

func (s targetScenario) Plan(scenario.Options) (scenario.Plan, error) {
	return scenario.Plan{Preset: "default", Levels: []scenario.Level{
		{Name: "ready", Load: readiness(s.d)},
		{Name: "capped", Load: readiness(s.d), MemoryCap: true},
	}}, nil
}

// runTarget runs the target scenario against target into a fresh runs folder.
func runTarget(t *testing.T, target *results.Target) (*results.Run, error) {
	t.Helper()
	l := testLab(t, nil)
	spec := results.RunSpec{Repeat: 1, Target: target}
	run, _, err := l.Run(context.Background(), RunOptions{Spec: spec, Scenario: targetScenario{probeScenario{d: time.Second}},
		RunsDir: t.TempDir(), Command: []string{"arena", "run", "probe", "--target", target.URL}})
	if run == nil {
		t.Fatalf("no run: %v", err)
	}
	return run, err
}

// A target is measured where it runs: its tree probed given its pid (and not otherwise: no
// zeros, a reason), every cell marked when it was not verified, the level it cannot run
// recorded with why, the run naming it and saying the lab did not start it, and the target
// still running afterwards.
func TestTargetIsMeasuredWhereItRuns(t *testing.T) {
	short(t)
	url, addr, pid := startTarget(t, faulty.None)
	// A cgroup as the lab reads one: a folder whose cgroup.procs lists the target (a real
	// cgroup's probe is internal/probe's test).
	cgroup := t.TempDir()
	if err := os.WriteFile(filepath.Join(cgroup, "cgroup.procs"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, by := range []string{"pid", "cgroup", "none"} {
		probed := by != "none"
		target := &results.Target{Name: "mine", URL: url, Addr: addr, Knobs: []string{"BACKPRESSURE"}, SkipVerify: true}
		switch by {
		case "pid":
			target.Pid = pid
		case "cgroup":
			target.Cgroup = cgroup
		}
		run, err := runTarget(t, target)
		if err != nil || run.Status != results.RunComplete || len(run.Cells) != 2 {
			t.Fatalf("probed by %s: status %s, %d cells, %v", by, run.Status, len(run.Cells), err)
		}
		if c := run.Contenders; len(c) != 1 || c[0].Name != "mine" || c[0].Target != url || c[0].Verified != results.VerifyNotAsked {
			t.Errorf("contenders %+v; want the target alone, named, its URL, not verified", c)
		}
		if !strings.Contains(strings.Join(run.Env.Notes, "\n"), "a server arena did not start") {
			t.Errorf("notes %q do not say the lab did not start it", run.Env.Notes)
		}
		if by == "cgroup" && !strings.Contains(strings.Join(run.Env.Notes, "\n"), "the processes of cgroup "+cgroup) {
			t.Errorf("notes %q do not say the cgroup was probed", run.Env.Notes)
		}
		ready, capped := run.Cells[0], run.Cells[1]
		if ready.Contender != "mine" || ready.Outcome.Status != results.OutcomeOK || !ready.Unverified || len(ready.Tags) == 0 || ready.Tags[0].Completed < 15 {
			t.Errorf("probed by %s: the ready cell %s/%s, %+v, unverified %v, tags %+v", by, ready.Contender, ready.Level, ready.Outcome, ready.Unverified, ready.Tags)
		}
		switch {
		case probed && (ready.Server.Summary.Samples < 2 || ready.Server.Summary.ThreadsMax == 0 || ready.Server.Unprobed != ""):
			t.Errorf("given its %s, the server was not probed: %+v", by, ready.Server)
		case !probed && (ready.Server.Unprobed != results.NoServerProcess || len(ready.Server.Timeline) > 0 || summaryOf(run, "ready").ServerUnprobed == ""):
			t.Errorf("without its pid: server %+v, summary %+v; want no server resources, said", ready.Server, summaryOf(run, "ready"))
		}
		if capped.Outcome.Status != results.OutcomeUnsupported || !strings.Contains(capped.Outcome.Detail, "memory cap") {
			t.Errorf("the capped level: %+v; want unsupported, the cap named", capped.Outcome)
		}
		if !alive(pid) {
			t.Fatal("the lab stopped a server it did not start")
		}
	}
}

// A target that fails a check the scenario needs is refused, with the check named, and
// nothing is measured.
func TestTargetFailingVerifyIsRefused(t *testing.T) {
	short(t)
	url, addr, pid := startTarget(t, faulty.EmptyData)
	run, err := runTarget(t, &results.Target{Name: "mine", URL: url, Addr: addr, Pid: pid, Knobs: contender.Knobs})
	if err == nil || !strings.Contains(err.Error(), "does not keep the contract") || !strings.Contains(err.Error(), "/data/1") {
		t.Fatalf("error %v; want a refusal naming /data/1", err)
	}
	if run.Status != results.RunFailed || len(run.Cells) != 0 || len(run.Contenders) != 1 || !strings.HasPrefix(run.Contenders[0].Verified, results.VerifyFailed) {
		t.Errorf("status %s, %d cells, contenders %+v; want failed, none, the failure", run.Status, len(run.Cells), run.Contenders)
	}
	if !alive(pid) {
		t.Fatal("verify stopped a server the lab did not start")
	}
}

// summaryOf is the run's summary of the target at level.
func summaryOf(run *results.Run, level string) results.CellSummary {
	for _, s := range run.Summary {
		if s.Level == level {
			return s
		}
	}
	return results.CellSummary{}
}

// A target's cgroup with no process left is gone, as its pid's end would be; one with a
// process is not; a target given neither never is, as far as the lab can tell.
func TestTargetGoneByItsCgroup(t *testing.T) {
	cgroup := t.TempDir()
	procs := filepath.Join(cgroup, "cgroup.procs")
	for _, tt := range []struct {
		procs string
		gone  bool
	}{{strconv.Itoa(os.Getpid()) + "\n", false}, {"", true}} {
		if err := os.WriteFile(procs, []byte(tt.procs), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := targetGone(&results.Target{Cgroup: cgroup}); got != tt.gone {
			t.Errorf("cgroup.procs %q: gone %v, want %v", tt.procs, got, tt.gone)
		}
	}
	if targetGone(&results.Target{Cgroup: filepath.Join(cgroup, "removed")}) != true {
		t.Error("a cgroup removed is not gone")
	}
	if targetGone(&results.Target{}) {
		t.Error("a target given neither pid nor cgroup is gone")
	}
}

// A target that never answers its readiness is measured in no cell: each is unready and says
// what was sent and what came back, the progress line shows it, and the run ends failed with
// an error that names every cell's outcome and reason (a reproduction reads it as nothing to
// measure).
func TestTargetNeverReadyMeasuresNothingAndSaysWhy(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	was := targetReadyWait
	targetReadyWait = 300 * time.Millisecond
	defer func() { targetReadyWait = was }()
	var progress strings.Builder
	l := testLab(t, &progress)
	target := &results.Target{Name: "mine", URL: srv.URL, Addr: strings.TrimPrefix(srv.URL, "http://"), SkipVerify: true}
	run, _, err := l.Run(context.Background(), RunOptions{Spec: results.RunSpec{Repeat: 2, Target: target},
		Scenario: probeScenario{d: time.Second}, RunsDir: t.TempDir(), Command: []string{"arena", "run"}})
	var nothing *NothingMeasured
	if !errors.As(err, &nothing) || !errors.Is(err, ErrNothingToMeasure) {
		t.Fatalf("error %v; want NothingMeasured", err)
	}
	if run == nil || run.Status != results.RunFailed || len(run.Cells) != 2 {
		t.Fatalf("run %+v; want failed with its two cells", run)
	}
	for _, c := range run.Cells {
		if c.Outcome.Status != results.OutcomeUnready || !strings.Contains(c.Outcome.Detail, "status 404") || !strings.Contains(c.Outcome.Detail, "GET ") {
			t.Errorf("cell %s r%d: %+v; want unready, what was sent and the 404", c.Level, c.Repeat, c.Outcome)
		}
	}
	for _, want := range []string{"mine/ready r1: unready: ", "mine/ready r2: unready: ", "status 404"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if !strings.Contains(progress.String(), "unready: the target") {
		t.Errorf("progress %q does not say why the cell is unready", progress.String())
	}
}

// No cell that did not end ok is left without a reason; a run measured something when one
// cell's load ran, crashed or not.
func TestEveryOutcomeSaysWhy(t *testing.T) {
	for _, status := range []string{results.OutcomeCrashed, results.OutcomeUnready, results.OutcomeInterrupted, results.OutcomeError,
		results.OutcomeUnsupported, results.OutcomeSkipped, results.OutcomeOutOfMemory, results.OutcomeUnresponsive, "new-status"} {
		if o := explained(results.Outcome{Status: status, Detail: " "}); strings.TrimSpace(o.Detail) == "" {
			t.Errorf("%s: no detail", status)
		}
	}
	if o := explained(results.Outcome{Status: results.OutcomeUnready, Detail: "its own"}); o.Detail != "its own" {
		t.Errorf("a detail given became %q", o.Detail)
	}
	unready := results.Cell{Outcome: results.Outcome{Status: results.OutcomeUnready, Detail: "x"}}
	crashed := results.Cell{Outcome: results.Outcome{Status: results.OutcomeCrashed, Detail: "y"}}
	ok := results.Cell{Outcome: results.Outcome{Status: results.OutcomeOK}}
	if nothingMeasured([]results.Cell{unready, crashed}) != nil || nothingMeasured([]results.Cell{unready, ok}) != nil || nothingMeasured(nil) != nil {
		t.Error("a run with a crashed or an ok cell, or no cell, measured nothing")
	}
	if nothingMeasured([]results.Cell{unready, unready}) == nil {
		t.Error("a run of unready cells measured something")
	}
}

// A target's readiness is the user's path, else the first route the scenario sends, else the
// handshake to its first socket: each answered as a ready server would, and otherwise what
// was sent and what came back are said.
func TestTargetReadinessIsTheScenariosOrTheUsers(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/health", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(204) })
	mux.HandleFunc("/instant", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("INSTANT")) })
	plain := httptest.NewServer(mux)
	defer plain.Close()
	chatSrv, err := chat.StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer chatSrv.Close()
	at := func(u string) *results.Target { return &results.Target{Addr: strings.TrimPrefix(u, "http://")} }
	isolation := &verify.Needs{Routes: []string{"/instant", "/delayed"}}
	chatty := &verify.Needs{Sockets: []string{"/chat"}}
	for _, tt := range []struct {
		name   string
		target *results.Target
		needs  *verify.Needs
		want   string // "" : ready; else in the error
	}{
		{"the user's path", &results.Target{Addr: at(plain.URL).Addr, Ready: "/api/health"}, isolation, ""},
		{"the user's path, not served", &results.Target{Addr: at(plain.URL).Addr, Ready: "/ready"}, isolation, "GET /ready as a ready server would within 300ms (the last answer: status 404)"},
		{"the scenario's first route", at(plain.URL), isolation, ""},
		{"no route, the contract's probe", at(plain.URL), nil, "GET /actuator/health/readiness"},
		{"the scenario's socket", at("http://" + chatSrv.Addr()), chatty, ""},
		{"a socket not served", at(plain.URL), chatty, "a WebSocket handshake to /chat as a ready server would within 300ms (the last answer: status 404, not 101"},
	} {
		err := targetReady(context.Background(), tt.target.Addr, readinessOf(tt.target, tt.needs), 300*time.Millisecond)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v; want ready", tt.name, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: %v; want it to say %q", tt.name, err, tt.want)
		}
	}
}
