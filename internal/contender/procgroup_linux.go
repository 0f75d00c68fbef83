package contender

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the command in a group of its own, so that one signal reaches every
// process it starts, and asks the kernel to kill it should the lab itself die.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
