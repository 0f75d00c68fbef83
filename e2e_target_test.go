package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
)

// targetIsolation is the isolation study's quick form, shortened as the other isolation test
// shortens it: /delayed still waits its 10 s.
var targetIsolation = []string{"run", "isolation", "--quick", "--duration", "12s", "--timeout", "12s"}

// arena run --target against go-nethttp started by hand, as its manifest's start does, gives
// the verdict the lab's own run of it gives; its tree is probed (--target-pid), the results
// and the report name it and say the lab did not start it, and it is still running after.
func TestTargetGivesTheLabsOwnVerdict(t *testing.T) {
	e2e(t)
	out := t.TempDir()
	log, code := arena(t, 10*time.Minute, append(targetIsolation, "--contenders", "go-nethttp", "--out", filepath.Join(out, "lab"))...)
	if code != 0 {
		t.Fatalf("the lab's own run exited %d:\n%s", code, log)
	}
	labRun := loadRun(t, filepath.Join(out, "lab"), "isolation")

	url, pid := startByHand(t, "go-nethttp")
	// go-nethttp honours no WORKER_THREADS (its manifest's knobs), so the seed level needs no
	// restart of it.
	log, code = arena(t, 5*time.Minute, append(targetIsolation, "--target", url, "--target-pid", strconv.Itoa(pid),
		"--target-name", "by-hand", "--target-knobs", "DOWNSTREAM_URL,BACKPRESSURE,PPROF_ADDR,BIND_ADDRESS", "--out", filepath.Join(out, "target"))...)
	if code != 0 {
		t.Fatalf("the target's run exited %d:\n%s", code, log)
	}
	run := loadRun(t, filepath.Join(out, "target"), "isolation")
	verdict := func(r *results.Run, name string) results.Verdict {
		for _, v := range r.Verdicts {
			if v.Contender == name {
				return v
			}
		}
		return results.Verdict{Verdict: "(none)"}
	}
	// go-nethttp keeps /instant and the probes fast beside /delayed: isolated, as the lab finds it.
	if got, want := verdict(run, "by-hand"), verdict(labRun, "go-nethttp"); got.Verdict != want.Verdict || want.Verdict != "isolated" {
		t.Errorf("the target's verdict %q (%s), the lab's own %q (%s); want both isolated\n%s", got.Verdict, got.Why, want.Verdict, want.Why, log)
	}
	if run.Spec.Target == nil || run.Spec.Target.Name != "by-hand" || run.Spec.Target.Pid != pid || len(run.Contenders) != 1 ||
		run.Contenders[0].Target != url || run.Contenders[0].Verified != results.VerifyPassed {
		t.Errorf("spec's target %+v, contenders %+v; want the target named, probed, verified", run.Spec.Target, run.Contenders)
	}
	for _, c := range run.Cells {
		if c.Contender != "by-hand" || c.Outcome.Status != results.OutcomeOK || c.Server.Summary.Samples < 20 || c.Server.Summary.ThreadsMax == 0 {
			t.Errorf("cell %s/%s: %+v, server %+v; want ok, its tree probed 4 times a second", c.Contender, c.Level, c.Outcome, c.Server.Summary)
		}
	}
	if !strings.Contains(strings.Join(run.Env.Notes, "\n"), "a server arena did not start") {
		t.Errorf("notes %q; want the target said not started by arena", run.Env.Notes)
	}
	page, err := os.ReadFile(filepath.Join(out, "target", run.ID, "report.html"))
	if err != nil || !strings.Contains(string(page), "a server arena did not start") {
		t.Errorf("the report does not say the lab did not start the target (%v)", err)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Errorf("the target is gone after the run (%v): the lab stops nothing it did not start", err)
	}
}

// startByHand starts a built contender as its manifest's start does, pinned where the lab
// pins contenders, on a free port of loopback, in a process group of its own; it returns its
// URL and pid once it is ready, and kills it at the end.
func startByHand(t *testing.T, name string) (string, int) {
	t.Helper()
	m, err := contender.Load(filepath.Join("contenders", name))
	if err != nil {
		t.Fatal(err)
	}
	port, err := contender.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("taskset", "-c", "1", "sh", "-c", m.Start)
	cmd.Dir = m.Dir
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port), "BIND_ADDRESS=127.0.0.1", "GOMEMLIMIT=512MiB")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := http.Get(url + contender.ReadinessPath); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s started by hand was not ready within 30 s", name)
		}
	}
	return url, cmd.Process.Pid
}

// A server that answers /instant wrongly is refused before any load, with the check named.
func TestTargetFailingVerifyIsRefused(t *testing.T) {
	e2e(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/actuator/health/readiness", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"UP"}`)
	})
	mux.HandleFunc("/instant", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "LATER")
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	defer func() { _ = srv.Close() }()
	out := t.TempDir()
	log, code := arena(t, 2*time.Minute, append(targetIsolation, "--target", "http://"+ln.Addr().String(), "--target-knobs", "none", "--out", out)...)
	if code == 0 || !strings.Contains(log, "does not keep the contract") || !strings.Contains(log, "/instant: ") || !strings.Contains(log, `body "LATER"`) {
		t.Fatalf("arena exited %d; want a refusal naming /instant and its body:\n%s", code, log)
	}
	run := loadRun(t, out, "isolation")
	if len(run.Cells) != 0 || !strings.HasPrefix(run.Contenders[0].Verified, results.VerifyFailed) {
		t.Errorf("%d cells, verified %q; want none measured, the failure recorded", len(run.Cells), run.Contenders[0].Verified)
	}
}
