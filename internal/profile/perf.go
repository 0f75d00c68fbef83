package profile

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// perfInstall is what to run when perf is missing (Debian's package; the kernel's tools).
const perfInstall = "apt-get install linux-perf"

// PerfPath finds Linux's perf on PATH; "" when it is not there.
func PerfPath() string {
	p, err := exec.LookPath("perf")
	if err != nil {
		return ""
	}
	return p
}

// perfRecord records a native contender (Rust) from the load's start to its end: perf
// sampling the cpu-clock software event at 99 Hz (a VM without a hardware PMU has it too) on
// the contender's CPUs (all CPUs when it is not pinned), each sample's stack unwound from a
// copy of the thread's stack with the binary's DWARF unwind tables, since release builds keep
// no frame pointers. CPUs rather than the process: with perf -p, which opens its events
// thread by thread, rust-threads (a thread a connection, every one started as the load
// begins) had no sample at all. perf script keeps the contender's process's samples alone.
// SIGINT ends the recording; perf script, once the contender has stopped, symbolises the
// samples and they are folded.
type perfRecord struct {
	attached
	pid int
}

func (p *perfRecord) start(bin string, pid int, cpus, out string) {
	p.sigintEnds, p.pid = true, pid
	where := []string{"--all-cpus"}
	if cpus != "" {
		where = []string{"--cpu", cpus}
	}
	args := append([]string{"record", "--quiet", "-e", "cpu-clock", "-F", "99", "--call-graph", "dwarf"}, where...)
	p.attached.start("perf record", out, bin, append(args, "-o", out)...)
}

// fold symbolises the recording (perf script) and folds its samples.
func (p *perfRecord) fold() (results.Stacks, error) {
	if p.err != nil {
		return nil, p.err
	}
	if _, err := os.Stat(p.out); err != nil {
		return nil, fmt.Errorf("perf wrote no recording: %w (%s)", err, firstLine(p.log.String()))
	}
	var stderr bytes.Buffer
	cmd := exec.Command(PerfPath(), "script", "--input", p.out, "--pid", strconv.Itoa(p.pid), "-F", "comm,ip,sym")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("perf script: %w: %s", err, firstLine(stderr.String()))
	}
	return foldPerfScript(out), nil
}

// foldPerfScript folds perf script's text (-F comm,ip,sym): each sample a line naming its
// thread's command, then its frames, leaf first, one a line as "address symbol", then a blank
// line. A frame's offset (+0x1f) is dropped so that one function's samples add up; an
// unsymbolised one reads "[unknown]", as perf writes it. Stacks are rooted at the command.
func foldPerfScript(raw []byte) results.Stacks {
	stacks := results.Stacks{}
	var comm string
	var frames []string
	flush := func() {
		if comm == "" && len(frames) == 0 {
			return
		}
		stack := []string{frameName(comm)}
		for i := len(frames) - 1; i >= 0; i-- {
			stack = append(stack, frames[i])
		}
		stacks[strings.Join(stack, ";")]++
		comm, frames = "", nil
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] != ' ' && line[0] != '\t':
			flush()
			comm = strings.TrimSpace(line)
		default:
			_, sym, _ := strings.Cut(strings.TrimSpace(line), " ")
			frames = append(frames, perfFrame(sym))
		}
	}
	flush()
	return stacks
}

// perfFrame is a perf frame's symbol without its offset or "(inlined)", fit for the folded
// format (frameName), "[unknown]" when it has none.
func perfFrame(sym string) string {
	sym = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(sym), "(inlined)"))
	if i := strings.LastIndex(sym, "+0x"); i > 0 {
		sym = sym[:i]
	}
	if sym == "" {
		return "[unknown]"
	}
	return frameName(sym)
}
