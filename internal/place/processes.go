package place

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
)

// MaxProcesses is the most agent processes a run starts on one host: more than that measure
// the host's scheduler, not the agents.
const MaxProcesses = 16

// Processes deals the load out among Agents `arena agent` processes on this host, each
// pinned to the lab's client CPUs and holding a secret made for the run: the protocol, the
// merge and the clocks of a fleet of hosts, on one host.
type Processes struct {
	Agents int
	Exe    string // the arena binary the agents run (os.Executable)
}

var _ Placement = Processes{}

// Remote is false: the lab runs here.
func (p Processes) Remote() bool { return false }

// Open starts the agents and greets them; their logs are kept, and named in an error, only
// when one fails to start.
func (p Processes) Open(ctx context.Context, l *lab.Lab) (*Placed, error) {
	switch {
	case p.Agents < 1 || p.Agents > MaxProcesses:
		return nil, fmt.Errorf("--agent-processes %d: give 1 to %d", p.Agents, MaxProcesses)
	case l == nil:
		return nil, errors.New("agent processes need the lab that runs here")
	}
	secret, err := agent.NewSecret()
	if err != nil {
		return nil, err
	}
	logDir, err := os.MkdirTemp("", "arena-agent-logs-")
	if err != nil {
		return nil, err
	}
	cpus := make([][]int, p.Agents)
	for i := range cpus {
		cpus[i] = l.ClientCPUs
	}
	procs, err := StartProcs(ctx, p.Exe, cpus, logDir, secret)
	if err != nil {
		procs.Stop()
		return nil, fmt.Errorf("%w (logs kept in %s)", err, logDir)
	}
	placed := &Placed{stop: func() { procs.Stop(); _ = os.RemoveAll(logDir) }}
	topo := results.Topology{Launcher: "processes", Server: results.TopoHost{Name: "server", Host: "localhost", CPUs: lab.FormatCPUs(l.ServerCPUs)}}
	for _, a := range procs.List() {
		topo.Agents = append(topo.Agents, results.TopoHost{Name: a.Name, Host: "localhost", Addr: a.Addr, CPUs: a.CPUs})
	}
	placed.Agents = &lab.Agents{Fleet: &agent.Fleet{Runners: procs.Runners()}, Topology: topo}
	return placed, nil
}

// AgentProc is one started agent process.
type AgentProc struct {
	Name string `json:"name"`
	Addr string `json:"addr"`
	CPUs string `json:"cpus"`
	Pid  int    `json:"pid"`
}

// Procs are started agents, each `arena agent` pinned with taskset in a process group of
// its own, reading the run's secret from its stdin and ending when it closes.
type Procs struct {
	procs   []*agentProc
	runners []agent.Runner
}

type agentProc struct {
	AgentProc
	stdin  io.Closer
	log    *os.File
	exited chan struct{} // closed once the agent is reaped
}

// agentReady is how long an agent may take to print that it listens.
const agentReady = 10 * time.Second

// StartProcs starts one `exe agent` per entry of cpus, pinned there, on a free port of
// 127.0.0.1 with secret, its log in logDir, and greets each (which also measures its clock).
// On error the agents already started are in the result, for Stop.
func StartProcs(ctx context.Context, exe string, cpus [][]int, logDir, secret string) (*Procs, error) {
	ps := &Procs{}
	if _, err := exec.LookPath("taskset"); err != nil {
		return ps, errors.New("taskset is not installed (Debian: apt-get install util-linux)")
	}
	for i, set := range cpus {
		name := fmt.Sprintf("agent-%d", i+1)
		p, err := startProc(ctx, exe, name, lab.FormatCPUs(set), filepath.Join(logDir, name+".log"), secret)
		if p != nil {
			ps.procs = append(ps.procs, p)
		}
		if err != nil {
			return ps, err
		}
	}
	for _, p := range ps.procs {
		r, err := agent.Dial(ctx, p.Addr, secret)
		if err != nil {
			return ps, err
		}
		ps.runners = append(ps.runners, r)
	}
	return ps, nil
}

func startProc(ctx context.Context, exe, name, cpus, logPath, secret string) (*agentProc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	// The secret goes in on stdin, never the command line, which every user of the host reads.
	cmd := exec.Command("taskset", "-c", cpus, exe, "agent", "--listen", "127.0.0.1:0", "--name", name,
		"--exit-with-stdin", "--secret-file", "-", "--server-address", "127.0.0.1")
	ready := make(chan string, 1)
	cmd.Stdout = &firstLine{w: logf, line: ready}
	cmd.Stderr = logf
	// Its own group, so that Stop ends whatever it runs and the terminal's Ctrl-C reaches
	// only the coordinator, which then stops it; stdin and the parent-death signal end it
	// if the coordinator dies without stopping it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting agent %s: %w", name, err)
	}
	p := &agentProc{AgentProc: AgentProc{Name: name, CPUs: cpus, Pid: cmd.Process.Pid}, stdin: stdin, log: logf, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	// A pipe takes the one line without blocking; an agent that died first refuses it.
	if _, err := io.WriteString(stdin, secret+"\n"); err != nil {
		return p, fmt.Errorf("agent %s: handing it the secret: %w (see %s)", name, err, logPath)
	}
	timer := time.NewTimer(agentReady)
	defer timer.Stop()
	select {
	case line := <-ready:
		_, addr, ok := strings.Cut(line, " listening on ")
		if !ok {
			return p, fmt.Errorf("agent %s printed %q, not where it listens (see %s)", name, line, logPath)
		}
		p.Addr = strings.TrimSpace(addr)
		return p, nil
	case <-p.exited:
		return p, fmt.Errorf("agent %s exited at start (see %s)", name, logPath)
	case <-timer.C:
		return p, fmt.Errorf("agent %s did not say where it listens within %s (see %s)", name, agentReady, logPath)
	case <-ctx.Done():
		return p, ctx.Err()
	}
}

// firstLine passes everything to w and the first line, once complete, to line.
type firstLine struct {
	w    io.Writer
	line chan<- string
	buf  []byte
	sent bool
}

func (f *firstLine) Write(b []byte) (int, error) {
	if !f.sent {
		f.buf = append(f.buf, b...)
		if i := bytes.IndexByte(f.buf, '\n'); i >= 0 {
			f.line <- string(f.buf[:i])
			f.sent, f.buf = true, nil
		}
	}
	return f.w.Write(b)
}

// Runners are the agents, greeted, in the order they were started.
func (ps *Procs) Runners() []agent.Runner { return ps.runners }

// List is the agents as started.
func (ps *Procs) List() []AgentProc {
	out := make([]AgentProc, len(ps.procs))
	for i, p := range ps.procs {
		out[i] = p.AgentProc
	}
	return out
}

// agentGrace is how long an agent has to end after SIGTERM before its group is killed.
const agentGrace = 5 * time.Second

// Stop ends every agent and waits for each to be gone; it is safe to call on a nil or
// partly started set, and twice.
func (ps *Procs) Stop() {
	if ps == nil {
		return
	}
	var wg sync.WaitGroup
	for _, p := range ps.procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.stop()
		}()
	}
	wg.Wait()
}

func (p *agentProc) stop() {
	_ = p.stdin.Close()
	_ = syscall.Kill(-p.Pid, syscall.SIGTERM)
	t := time.NewTimer(agentGrace)
	defer t.Stop()
	select {
	case <-p.exited:
	case <-t.C:
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		<-p.exited
	}
	_ = p.log.Close()
}
