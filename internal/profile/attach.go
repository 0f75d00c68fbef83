package profile

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// attached is a profiler run beside a contender for the load alone, attached to its process
// from outside (py-spy, perf): started at the load's start, ended by SIGINT at its end, when
// it writes its recording.
type attached struct {
	tool string
	cmd  *exec.Cmd
	out  string       // the recording
	log  bytes.Buffer // the tool's own output: why it could not attach, when it could not
	done chan error
	err  error
	// sigintEnds: the tool may end by the SIGINT it is sent (perf, on some versions), which
	// is then no failure; for the others it is, with their log's reason.
	sigintEnds bool
}

// start runs bin with args, which write the recording to out.
func (a *attached) start(tool, out, bin string, args ...string) {
	a.tool, a.out = tool, out
	a.cmd = exec.Command(bin, args...)
	a.cmd.Stdout, a.cmd.Stderr = &a.log, &a.log
	if a.err = a.cmd.Start(); a.err != nil {
		return
	}
	a.done = make(chan error, 1)
	go func() { a.done <- a.cmd.Wait() }()
}

// stop ends the recording: SIGINT, then the tool has 10 s to write its file before it is
// killed.
func (a *attached) stop() {
	if a.done == nil {
		return
	}
	_ = a.cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-a.done:
		var exit *exec.ExitError
		if err != nil && !(a.sigintEnds && errors.As(err, &exit) && exit.ExitCode() == -1) {
			a.err = fmt.Errorf("%s: %w: %s", a.tool, err, firstLine(a.log.String()))
		}
	case <-time.After(10 * time.Second):
		_ = a.cmd.Process.Kill()
		a.err = errors.Join(fmt.Errorf("%s did not write its recording within 10 s of SIGINT", a.tool), <-a.done)
	}
	a.done = nil
}
