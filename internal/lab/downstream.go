package lab

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/arena-lab/arena/internal/contender"
)

// SelfProc is arena itself started as a helper server (`arena downstream`, `arena
// chat-server`), pinned to given CPUs in a process group of its own, so that its cost is
// probed apart from the client's and never lands on the contender's CPUs.
type SelfProc struct {
	Addr string
	cmd  *exec.Cmd
}

// StartSelf runs `arena <args…> --port P` pinned to cpus and waits until it accepts.
func StartSelf(cpus []int, logPath string, args ...string) (*SelfProc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	port, err := contender.FreePort()
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child keeps its own descriptor
	argv := append([]string{"-c", FormatCPUs(cpus), exe}, args...)
	cmd := exec.Command("taskset", append(argv, "--port", strconv.Itoa(port))...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting arena %s: %w", args[0], err)
	}
	p := &SelfProc{Addr: "127.0.0.1:" + strconv.Itoa(port), cmd: cmd}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", p.Addr, time.Second); err == nil {
			c.Close()
			return p, nil
		}
	}
	p.Stop()
	return nil, fmt.Errorf("arena %s did not listen on %s within 10 s (see %s)", args[0], p.Addr, logPath)
}

// StartDownstream starts the lab's downstream server with a delay before each answer.
func StartDownstream(cpus []int, delay time.Duration, logPath string) (*SelfProc, error) {
	return StartSelf(cpus, logPath, "downstream", "--delay", delay.String())
}

// URL is the process's base URL.
func (p *SelfProc) URL() string { return "http://" + p.Addr }

// Pid is the process's pid.
func (p *SelfProc) Pid() int { return p.cmd.Process.Pid }

// Stop ends the process and everything of its group.
func (p *SelfProc) Stop() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}
