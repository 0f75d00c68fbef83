package contender

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ReadinessPath is the contract's readiness probe.
const ReadinessPath = "/actuator/health/readiness"

// StopGrace is how long a contender has to exit after SIGTERM before its group is killed.
const StopGrace = 10 * time.Second

// Instance is one running contender process (and its descendants, one process group).
type Instance struct {
	Manifest *Manifest
	Port     int
	Env      map[string]string // the contract variables it was started with
	CPUs     string
	LogPath  string

	cmd    *exec.Cmd
	tail   *tailWriter
	logf   *os.File
	exited chan struct{}
	mu     sync.Mutex
	state  *os.ProcessState
}

// StartOptions shape one start.
type StartOptions struct {
	Settings Settings
	CPUs     string            // taskset list, e.g. "1"
	Port     int               // 0: a free port is chosen
	Vars     map[string]string // contract variables besides PORT
	LogPath  string            // where stdout and stderr go
	// Flags join the runtime's options (see Settings.Env): a profiler's.
	Flags []string
}

// Start launches the contender pinned to opts.CPUs in a process group of its own. It does
// not wait for readiness: see WaitReady.
func Start(m *Manifest, opts StartOptions) (*Instance, error) {
	port := opts.Port
	if port == 0 {
		p, err := FreePort()
		if err != nil {
			return nil, err
		}
		port = p
	} else if err := PortFree(port); err != nil {
		return nil, err
	}
	vars := map[string]string{"PORT": strconv.Itoa(port)}
	for k, v := range opts.Vars {
		vars[k] = v
	}
	env, err := opts.Settings.Env(m, vars, opts.Flags...)
	if err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(opts.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	tail := newTailWriter(40)
	cmd := exec.Command("taskset", "-c", opts.CPUs, "sh", "-c", m.Start)
	cmd.Dir = m.Dir
	cmd.Env = env
	cmd.Stdout = io.MultiWriter(logf, tail)
	cmd.Stderr = cmd.Stdout
	setProcessGroup(cmd)
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting %s: %w", m.Name, err)
	}
	in := &Instance{Manifest: m, Port: port, Env: vars, CPUs: opts.CPUs, LogPath: opts.LogPath,
		cmd: cmd, tail: tail, logf: logf, exited: make(chan struct{})}
	go func() {
		_ = cmd.Wait() // the state carries the outcome
		in.mu.Lock()
		in.state = cmd.ProcessState
		in.mu.Unlock()
		close(in.exited)
	}()
	return in, nil
}

// Pid is the process group leader's pid.
func (in *Instance) Pid() int { return in.cmd.Process.Pid }

// Addr is host:port.
func (in *Instance) Addr() string { return net.JoinHostPort(in.Host(), strconv.Itoa(in.Port)) }

// BindAddress is the contract variable that moves a contender off loopback, set only when
// load agents on other hosts must reach it (arena run --hosts, --agent-addrs).
const BindAddress = "BIND_ADDRESS"

// The db feature's contract variables, given to contenders that list db: the lab's database
// as a libpq URI, and the most connections the contender may hold to it.
const (
	DBURL  = "DB_URL"
	DBPool = "DB_POOL"
)

// Host is the address the contender listens on: BIND_ADDRESS when it was given one, else
// the contract's 127.0.0.1.
func (in *Instance) Host() string {
	if h := in.Env[BindAddress]; h != "" {
		return h
	}
	return "127.0.0.1"
}

// Exited is closed when the contender's main process has ended.
func (in *Instance) Exited() <-chan struct{} { return in.exited }

// ExitState describes how the process ended: exit code or signal. ok is false while it runs.
func (in *Instance) ExitState() (code *int, signal string, ok bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.state == nil {
		return nil, "", false
	}
	if ws, isWS := in.state.Sys().(syscall.WaitStatus); isWS && ws.Signaled() {
		return nil, ws.Signal().String(), true
	}
	c := in.state.ExitCode()
	return &c, "", true
}

// Describe says how the process ended, for messages.
func (in *Instance) Describe() string {
	code, sig, ok := in.ExitState()
	switch {
	case !ok:
		return "still running"
	case sig != "":
		return "killed by " + sig
	default:
		return fmt.Sprintf("exited with code %d", *code)
	}
}

// Tail returns the last lines the contender printed.
func (in *Instance) Tail() []string { return in.tail.Lines() }

// WaitReady polls the readiness probe until it answers 200, the process exits, the
// timeout passes or ctx ends.
func (in *Instance) WaitReady(ctx context.Context, timeout time.Duration) error {
	return in.WaitAnswer(ctx, ReadinessPath, timeout)
}

// WaitAnswer polls path until it answers 200: WaitReady for a server with no readiness
// probe (a stack's minimal example, which serves only what it is measured on).
func (in *Instance) WaitAnswer(ctx context.Context, path string, timeout time.Duration) error {
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	url := "http://" + in.Addr() + path
	for {
		resp, err := client.Get(url)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-in.exited:
			return fmt.Errorf("%s %s before it was ready", in.Manifest.Name, in.Describe())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s was not ready within %s (GET %s)", in.Manifest.Name, timeout, path)
		}
	}
}

// Stop sends SIGTERM to the whole group, waits up to StopGrace, then kills the group.
// It reports how long the exit took and whether the kill was needed.
func (in *Instance) Stop() (took time.Duration, killed bool) {
	start := time.Now()
	pgid := in.cmd.Process.Pid
	select {
	case <-in.exited:
	default:
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-in.exited:
		case <-time.After(StopGrace):
			killed = true
		}
	}
	took = time.Since(start)
	// Whatever the leader did, nothing of the group may outlive it (nor hold the port).
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	<-in.exited
	in.logf.Close()
	return took, killed
}

// Signal sends sig to the whole group (e.g. SIGSTOP for a stall experiment).
func (in *Instance) Signal(sig syscall.Signal) error {
	return syscall.Kill(-in.cmd.Process.Pid, sig)
}

// FreePort asks the kernel for a free loopback port.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// PortFree fails with a clear message when port is already taken on 127.0.0.1.
func PortFree(port int) error {
	l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return fmt.Errorf("port %d is already in use on 127.0.0.1: stop what holds it (ss -ltnp 'sport = :%d') or choose another with --port", port, port)
		}
		return fmt.Errorf("port %d: %w", port, err)
	}
	return l.Close()
}

// tailWriter keeps the last n lines written to it.
type tailWriter struct {
	mu      sync.Mutex
	n       int
	lines   []string
	partial string
}

func newTailWriter(n int) *tailWriter { return &tailWriter{n: n} }

func (t *tailWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	parts := strings.Split(t.partial+string(p), "\n")
	t.partial = parts[len(parts)-1]
	t.lines = append(t.lines, parts[:len(parts)-1]...)
	if len(t.lines) > t.n {
		t.lines = t.lines[len(t.lines)-t.n:]
	}
	return len(p), nil
}

func (t *tailWriter) Lines() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := append([]string(nil), t.lines...)
	if t.partial != "" {
		out = append(out, t.partial)
	}
	return out
}
