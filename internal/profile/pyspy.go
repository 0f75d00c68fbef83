package profile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// PySpyVersion is the py-spy .ci/run installs (from PyPI), the sampling profiler Python's
// users attach to a running process: it reads the interpreter's stacks from outside, so the
// contender runs unchanged.
const PySpyVersion = "0.4.3"

// pySpyInstall is what to run when py-spy is missing, into the folder PySpyPath looks in.
var pySpyInstall = "python3 -m venv .arena/tools && .arena/tools/bin/pip install py-spy==" + PySpyVersion

// PySpyPath finds py-spy on PATH, else in the lab's tools venv ($ARENA_ROOT/.arena/tools),
// where .ci/run installs it; "" when it is in neither.
func PySpyPath() string {
	if p, err := exec.LookPath("py-spy"); err == nil {
		return p
	}
	if root := os.Getenv("ARENA_ROOT"); root != "" {
		p := filepath.Join(root, ".arena", "tools", "bin", "py-spy")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// pySpy records a Python contender from the load's start to its end: py-spy attached to its
// main process and the processes it forks (a gunicorn master's workers), sampling at 100 Hz
// into collapsed stacks; SIGINT ends the recording and py-spy writes its file.
type pySpy struct{ attached }

func (p *pySpy) start(bin string, pid int, out string) {
	p.attached.start("py-spy", out, bin, "record", "--pid", strconv.Itoa(pid), "--subprocesses", "--rate", "100",
		"--format", "raw", "--output", out, "--nonblocking")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// fold reads py-spy's raw output, which is collapsed stacks already ("a;b;c 12" a line).
func (p *pySpy) fold() (results.Stacks, error) {
	if p.err != nil {
		return nil, p.err
	}
	raw, err := os.ReadFile(p.out)
	if err != nil {
		return nil, fmt.Errorf("py-spy wrote no recording: %w", err)
	}
	stacks, _, err := parseFolded(raw)
	return stacks, err
}
