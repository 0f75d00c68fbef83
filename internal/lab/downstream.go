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

// DownstreamProc is the lab's downstream server running as its own process (`arena
// downstream`), pinned to the client's CPUs: never on the contender's, and probed apart
// from the client so that its cost is seen, not hidden in the client's.
type DownstreamProc struct {
	URL  string
	Addr string
	cmd  *exec.Cmd
}

// StartDownstream starts `arena downstream` pinned to cpus and waits until it accepts.
func StartDownstream(cpus []int, delay time.Duration, logPath string) (*DownstreamProc, error) {
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
	cmd := exec.Command("taskset", "-c", FormatCPUs(cpus), exe, "downstream", "--port", strconv.Itoa(port), "--delay", delay.String())
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting the downstream: %w", err)
	}
	d := &DownstreamProc{Addr: "127.0.0.1:" + strconv.Itoa(port), cmd: cmd}
	d.URL = "http://" + d.Addr
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.DialTimeout("tcp", d.Addr, time.Second); err == nil {
			c.Close()
			return d, nil
		}
	}
	d.Stop()
	return nil, fmt.Errorf("the downstream did not listen on %s within 10 s (see %s)", d.Addr, logPath)
}

// Pid is the downstream's pid.
func (d *DownstreamProc) Pid() int { return d.cmd.Process.Pid }

// Stop ends the downstream and everything of its group.
func (d *DownstreamProc) Stop() {
	_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = d.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}
