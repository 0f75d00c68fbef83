package contender

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
}

// startTest starts m on CPU 0 with a log in a temp folder, and stops it at the end of
// the test whatever happens.
func startTest(t *testing.T, m *Manifest) *Instance {
	t.Helper()
	in, err := Start(m, StartOptions{Settings: Settings{HeapMB: 64}, CPUs: "0", LogPath: filepath.Join(t.TempDir(), m.Name+".log")})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		select {
		case <-in.Exited():
		default:
			_ = syscall.Kill(-in.Pid(), syscall.SIGKILL)
		}
		<-in.Exited()
	})
	return in
}

// groupGone waits (briefly: killed children may need a moment to be reaped) until no
// process of group pgid remains.
func groupGone(t *testing.T, pgid int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		err := syscall.Kill(-pgid, 0)
		if errors.Is(err, syscall.ESRCH) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process group %d still exists after Stop (kill -0: %v)", pgid, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestInstanceLifecycle(t *testing.T) {
	needTools(t, "python3", "taskset")
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"actuator/health/readiness": `{"status":"UP"}`})
	m := &Manifest{Name: "pyserver", Runtime: "go", Model: "event-loop",
		Start: "exec python3 -m http.server $PORT --bind 127.0.0.1", Dir: dir}
	in := startTest(t, m)

	if in.Port <= 0 || in.Port > 65535 {
		t.Fatalf("Port = %d", in.Port)
	}
	if want := "127.0.0.1:" + strconv.Itoa(in.Port); in.Addr() != want {
		t.Errorf("Addr = %q, want %q", in.Addr(), want)
	}
	if in.Env["PORT"] != strconv.Itoa(in.Port) || in.CPUs != "0" {
		t.Errorf("Env = %v, CPUs = %q", in.Env, in.CPUs)
	}
	if _, _, ok := in.ExitState(); ok || in.Describe() != "still running" {
		t.Errorf("a running instance: ExitState ok=%v, Describe %q", ok, in.Describe())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := in.WaitReady(ctx, 15*time.Second); err != nil {
		t.Fatalf("WaitReady: %v\n%s", err, strings.Join(in.Tail(), "\n"))
	}
	resp, err := http.Get("http://" + in.Addr() + ReadinessPath)
	if err != nil {
		t.Fatalf("GET readiness: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET readiness: %s", resp.Status)
	}

	pgid := in.Pid()
	if g, err := syscall.Getpgid(pgid); err != nil || g != pgid {
		t.Errorf("the contender is not a group leader: pgid %d (%v), pid %d", g, err, pgid)
	}
	// Pinned: taskset execs the shell, which execs python, so the pid is the server's.
	if status, err := os.ReadFile("/proc/" + strconv.Itoa(pgid) + "/status"); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok && strings.TrimSpace(v) != "0" {
				t.Errorf("server runs on CPUs %q, want 0", strings.TrimSpace(v))
			}
		}
	}

	took, killed := in.Stop()
	if killed {
		t.Errorf("Stop killed a server that exits on SIGTERM")
	}
	if took > 3*time.Second {
		t.Errorf("Stop took %s", took)
	}
	select {
	case <-in.Exited():
	default:
		t.Fatal("Exited is open after Stop")
	}
	if _, sig, ok := in.ExitState(); !ok || sig == "" {
		t.Errorf("ExitState after SIGTERM: signal %q ok %v", sig, ok)
	}
	groupGone(t, pgid)
	if err := PortFree(in.Port); err != nil {
		t.Errorf("port still taken after Stop: %v", err)
	}
	log, err := os.ReadFile(in.LogPath)
	if err != nil || !strings.Contains(string(log), ReadinessPath) {
		t.Errorf("log %s does not hold the server's output (%v): %q", in.LogPath, err, log)
	}
}

func TestInstanceCrashBeforeReady(t *testing.T) {
	needTools(t, "taskset")
	m := &Manifest{Name: "crasher", Runtime: "go", Start: "echo boom; exit 3", Dir: t.TempDir()}
	in := startTest(t, m)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := in.WaitReady(ctx, 8*time.Second)
	if err == nil {
		t.Fatal("WaitReady succeeded for a process that exited")
	}
	if !strings.Contains(err.Error(), "exited with code 3") || !strings.Contains(err.Error(), "crasher") {
		t.Errorf("WaitReady error %q does not say it exited with code 3", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("WaitReady took %s to notice the exit", d)
	}
	if !slices.Contains(in.Tail(), "boom") {
		t.Errorf("Tail = %q, want it to contain boom", in.Tail())
	}
	if code, sig, ok := in.ExitState(); !ok || code == nil || *code != 3 || sig != "" {
		t.Errorf("ExitState = %v, %q, %v; want code 3", code, sig, ok)
	}
	if took, killed := in.Stop(); killed || took > time.Second {
		t.Errorf("Stop of an exited instance: took %s, killed %v", took, killed)
	}
}

func TestInstanceNotReadyInTime(t *testing.T) {
	needTools(t, "taskset")
	m := &Manifest{Name: "mute", Runtime: "go", Start: "exec sleep 30", Dir: t.TempDir()}
	in := startTest(t, m)
	err := in.WaitReady(context.Background(), 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "was not ready within 300ms") {
		t.Errorf("WaitReady = %v, want not ready within 300ms", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := in.WaitReady(ctx, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WaitReady with an ending context = %v, want DeadlineExceeded", err)
	}
	pgid := in.Pid()
	if _, killed := in.Stop(); killed {
		t.Errorf("sleep needed a kill")
	}
	groupGone(t, pgid)
}

// Stop kills the whole group of a server that ignores SIGTERM, after StopGrace.
func TestInstanceStopKillsAfterGrace(t *testing.T) {
	needTools(t, "taskset")
	m := &Manifest{Name: "stubborn", Runtime: "go", Start: "trap '' TERM; while :; do sleep 0.1; done", Dir: t.TempDir()}
	in := startTest(t, m)
	time.Sleep(200 * time.Millisecond) // let the trap be set
	pgid := in.Pid()
	took, killed := in.Stop()
	if !killed {
		t.Errorf("Stop did not need to kill a process that ignores SIGTERM")
	}
	if took < StopGrace || took > StopGrace+2*time.Second {
		t.Errorf("Stop took %s, want about StopGrace (%s)", took, StopGrace)
	}
	if _, sig, ok := in.ExitState(); !ok || sig != syscall.SIGKILL.String() {
		t.Errorf("ExitState signal %q ok %v, want %q", sig, ok, syscall.SIGKILL.String())
	}
	groupGone(t, pgid)
}

// A port given explicitly must be free; Start says so rather than starting a doomed server.
func TestStartOnTakenPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	m := &Manifest{Name: "x", Runtime: "go", Start: "exit 0", Dir: t.TempDir()}
	in, err := Start(m, StartOptions{Settings: Settings{HeapMB: 64}, CPUs: "0", Port: port, LogPath: filepath.Join(t.TempDir(), "x.log")})
	if err == nil {
		in.Stop()
		t.Fatal("Start on a taken port succeeded")
	}
	if !strings.Contains(err.Error(), "already in use") {
		t.Errorf("Start error %q", err)
	}
}

func TestPortFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	err = PortFree(port)
	if err == nil {
		t.Fatal("PortFree of a held port succeeded")
	}
	for _, w := range []string{strconv.Itoa(port), "already in use", "--port"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
	l.Close()
	if err := PortFree(port); err != nil {
		t.Errorf("PortFree after release: %v", err)
	}
}

func TestFreePort(t *testing.T) {
	p, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if p <= 0 || p > 65535 {
		t.Fatalf("FreePort = %d", p)
	}
	if err := PortFree(p); err != nil {
		t.Errorf("FreePort gave a port that is not free: %v", err)
	}
}

func TestTailWriter(t *testing.T) {
	tests := []struct {
		name   string
		n      int
		writes []string
		want   []string
	}{
		{"nothing", 3, nil, nil},
		{"whole lines", 3, []string{"a\nb\n"}, []string{"a", "b"}},
		{"partial last line", 3, []string{"a\nb"}, []string{"a", "b"}},
		{"line split across writes", 3, []string{"he", "llo\nwor", "ld\n"}, []string{"hello", "world"}},
		{"only the last n", 2, []string{"1\n2\n3\n4\n"}, []string{"3", "4"}},
		{"last n plus partial", 2, []string{"1\n2\n3\n4"}, []string{"2", "3", "4"}},
		{"empty lines kept", 3, []string{"a\n\nb\n"}, []string{"a", "", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newTailWriter(tt.n)
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if got := w.Lines(); !slices.Equal(got, tt.want) {
				t.Fatalf("Lines = %q, want %q", got, tt.want)
			}
		})
	}
}
