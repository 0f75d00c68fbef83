package place

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/lab"
)

// The address line may come in pieces, and everything still reaches the log.
func TestProcsFirstLine(t *testing.T) {
	var log strings.Builder
	line := make(chan string, 1)
	w := &firstLine{w: &log, line: line}
	for _, s := range []string{"arena agent v1 listen", "ing on 127.0.0.1:5\nmore\n", "later\n"} {
		if _, err := w.Write([]byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if got := <-line; got != "arena agent v1 listening on 127.0.0.1:5" {
		t.Errorf("first line %q", got)
	}
	if log.String() != "arena agent v1 listening on 127.0.0.1:5\nmore\nlater\n" {
		t.Errorf("log %q", log.String())
	}
}

// fakeAgent is a script that starts as an agent would, then does what body says.
func fakeAgent(t *testing.T, body string) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "arena")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe
}

// gone fails the test if pid still exists (reaped, not a zombie).
func gone(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process %d is still there (kill 0: %v)", pid, err)
	}
}

// testProcSecret is the secret the tests hand their agent processes.
const testProcSecret = "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7"

// An agent that fails to start, or one that cannot be greeted, is stopped with the others,
// however it resists SIGTERM: nothing is left behind. The secret reaches each on its stdin,
// never on its command line.
func TestProcsStartFailuresLeaveNothing(t *testing.T) {
	if _, err := lab.ParseCPUs("0"); err != nil {
		t.Skipf("needs CPU 0: %v", err)
	}
	ctx := context.Background()
	cpus := [][]int{{0}, {0}}

	ps, err := StartProcs(ctx, filepath.Join(t.TempDir(), "missing"), cpus, t.TempDir(), testProcSecret)
	if err == nil || !strings.Contains(err.Error(), "agent-1") {
		t.Errorf("a missing binary: error %v", err)
	}
	ps.Stop()

	// Keeps what it was given, says it listens where nobody does, ignores SIGTERM and
	// leaves a child in its group.
	kept := t.TempDir()
	stubborn := fakeAgent(t, "read secret\necho \"$secret\" > "+kept+"/$5.secret\necho \"$@\" > "+kept+"/$5.args\n"+
		"trap '' TERM\necho 'arena agent test listening on 127.0.0.1:1'\nsleep 60 &\nwhile :; do sleep 1; done")
	start := time.Now()
	ps, err = StartProcs(ctx, stubborn, cpus, t.TempDir(), testProcSecret)
	if err == nil || !strings.Contains(err.Error(), "agent at 127.0.0.1:1") {
		t.Errorf("an agent nobody answers for: error %v", err)
	}
	list := ps.List()
	if len(list) != 2 || list[0].Addr != "127.0.0.1:1" || list[1].Name != "agent-2" || list[0].CPUs != "0" {
		t.Fatalf("started %+v", list)
	}
	ps.Stop()
	for _, p := range list {
		gone(t, p.Pid)
	}
	if took := time.Since(start); took > agentGrace+5*time.Second {
		t.Errorf("stopping took %s", took)
	}
	ps.Stop() // twice is once
	(*Procs)(nil).Stop()
	for _, name := range []string{"agent-1", "agent-2"} {
		secret, err := os.ReadFile(filepath.Join(kept, name+".secret"))
		if err != nil || strings.TrimSpace(string(secret)) != testProcSecret {
			t.Errorf("%s read %q from its stdin (%v), want the secret", name, secret, err)
		}
		args, err := os.ReadFile(filepath.Join(kept, name+".args"))
		if err != nil || strings.Contains(string(args), testProcSecret) || !strings.Contains(string(args), "--secret-file -") {
			t.Errorf("%s's arguments %q (%v): want --secret-file -, and no secret", name, args, err)
		}
	}
}

// Open refuses counts it cannot honour before it starts anything.
func TestProcessesOpenRefusesBadCounts(t *testing.T) {
	l := &lab.Lab{ClientCPUs: []int{0}, ServerCPUs: []int{0}}
	for _, n := range []int{0, -1, MaxProcesses + 1} {
		if _, err := (Processes{Agents: n, Exe: "/bin/false"}).Open(context.Background(), l); err == nil || !strings.Contains(err.Error(), "--agent-processes") {
			t.Errorf("%d agents: error %v", n, err)
		}
	}
	if _, err := (Processes{Agents: 1, Exe: "/bin/false"}).Open(context.Background(), nil); err == nil {
		t.Error("no lab: no error")
	}
	// An agent that dies at once: the error keeps its log and says where.
	_, err := (Processes{Agents: 1, Exe: fakeAgent(t, "read s\necho broken >&2\nexit 3")}).Open(context.Background(), l)
	if err == nil || !strings.Contains(err.Error(), "exited at start") || !strings.Contains(err.Error(), "logs kept in") {
		t.Fatalf("a dying agent: error %v", err)
	}
	dir := err.Error()[strings.LastIndex(err.Error(), "logs kept in ")+len("logs kept in "):]
	dir = strings.TrimSuffix(dir, ")")
	log, rerr := os.ReadFile(filepath.Join(dir, "agent-1.log"))
	if rerr != nil || !strings.Contains(string(log), "broken") {
		t.Errorf("the agent's log %q (%v)", log, rerr)
	}
	_ = os.RemoveAll(dir)
}
