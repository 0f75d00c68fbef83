// Package profile records a contender's CPU profile over a cell's measured load with its
// stack's own profiler (JFR for a JVM, V8's sampler for Node, pprof for Go, py-spy for
// Python, perf for Rust) and folds
// each into one form, collapsed stacks, from which results keep the top frames and the
// flame graph the report draws.
//
// A JVM profiles its whole life, and only the samples stamped inside the load's window are
// kept; Node's profiler (v8/profiler.cjs, preloaded) starts and stops on a signal at the
// load's start and end; Go's pprof endpoint is read in one-second profiles from the load's
// start to its end; py-spy attaches to a Python contender's processes for the load alone, and
// perf to a native contender's threads.
package profile

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	rpprof "runtime/pprof"
	"sort"
	"strings"
	"syscall"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
)

// Tools by the name results.Profile gives them.
const (
	JFR   = "jfr"
	V8    = "v8"
	Pprof = "pprof"
	PySpy = "py-spy"
	Perf  = "perf"
)

var (
	//go:embed v8/profiler.cjs
	v8Profiler []byte
	//go:embed jfr/arena.jfc
	jfrSettings []byte
)

// PprofVar is the variable a Go contender honours by serving net/http/pprof on that address
// (loopback, another port), the way Go services expose it.
const PprofVar = "PPROF_ADDR"

// ToolFor is the profiler of m's runtime, or "" and why m cannot be profiled.
func ToolFor(m *contender.Manifest) (tool, why string) {
	switch m.Runtime {
	case "java":
		return JFR, ""
	case "node":
		return V8, ""
	case "go":
		if m.Honours(PprofVar) {
			return Pprof, ""
		}
		return "", m.Name + " does not honour " + PprofVar + ", so pprof cannot reach it"
	case "python":
		if PySpyPath() != "" {
			return PySpy, ""
		}
		return "", "py-spy, the profiler for the python runtime, is not installed: " + pySpyInstall
	case "rust":
		if PerfPath() != "" {
			return Perf, ""
		}
		return "", "perf, the profiler for the rust runtime, is not installed: " + perfInstall
	}
	return "", fmt.Sprintf("no profiler for the %q runtime", m.Runtime)
}

// Session is one cell's profile: its Flags and Vars go to the contender's start,
// Begin and End bracket the load, Fold reads the recording once the contender has stopped.
type Session struct {
	// WithClient profiles this process (the client) over the load too: see ClientProfile.
	WithClient bool
	// Signal sends a signal to the contender's whole process group: Node's profiler starts
	// and stops on SIGUSR2.
	Signal func(syscall.Signal) error
	// Pid is the contender's main process, which py-spy attaches to and perf keeps the
	// samples of.
	Pid func() int

	tool string
	cpus string // the CPUs the contender is pinned to (taskset's list), which perf records; empty: every CPU
	dir  string // the run's folder; files go under profiles/
	base string // the cell's file name, e.g. netty-c100-r1
	jdk  contender.JDK

	from, to time.Time // the load's window, which the JVM's samples are cut to
	stacks   results.Stacks
	pprof    *pprofReader
	pyspy    pySpy
	perf     perfRecord
	// client is arena's own CPU profile over the same load (runtime/pprof): the load
	// engine's cost beside the server's; clientErr says why there is none.
	client    bytes.Buffer
	clientOn  bool
	clientErr error
	signalErr error
}

// Open prepares m's session with its runtime's profiler for the cell or server named base,
// or returns a profile that says why m has none.
func Open(m *contender.Manifest, dir, base string, jdk contender.JDK) (*Session, *results.Profile) {
	tool, why := ToolFor(m)
	if tool == "" {
		return nil, &results.Profile{Error: why}
	}
	s, err := New(tool, dir, base, jdk)
	if err != nil {
		return nil, &results.Profile{Tool: tool, Error: err.Error()}
	}
	return s, nil
}

// New prepares a session of tool for the cell named base, writing under dir/profiles.
func New(tool, dir, base string, jdk contender.JDK) (*Session, error) {
	s := &Session{tool: tool, dir: dir, base: base, jdk: jdk}
	if tool != Pprof && strings.ContainsAny(s.path(".x"), " \t\n'\"") {
		// JAVA_OPTS and NODE_OPTIONS are split on spaces, with no quoting.
		return nil, fmt.Errorf("the run's folder %q has a space or quote, which %s's options cannot carry: choose another --out", dir, tool)
	}
	if err := os.MkdirAll(s.path(""), 0o755); err != nil {
		return nil, err
	}
	if tool == JFR {
		if err := os.WriteFile(s.path(".jfc"), jfrSettings, 0o644); err != nil {
			return nil, err
		}
	}
	if tool == V8 { // one file per process: a cluster's workers each write their own
		if err := os.MkdirAll(s.path(".v8"), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(s.path(".v8/profiler.cjs"), v8Profiler, 0o644); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (s *Session) path(ext string) string {
	if ext == "" {
		return filepath.Join(s.dir, "profiles")
	}
	return filepath.Join(s.dir, "profiles", s.base+ext)
}

func (s *Session) rel(p string) string {
	r, err := filepath.Rel(s.dir, p)
	if err != nil {
		return p
	}
	return r
}

// Flags are what the contender's runtime options (JAVA_OPTS, NODE_OPTIONS) gain.
func (s *Session) Flags() []string {
	switch s.tool {
	case JFR:
		// Execution samples only (jfr/arena.jfc); 256 frames keep Spring's deep stacks whole
		// (JFR's default of 64 cuts their roots off).
		return []string{
			"-XX:StartFlightRecording=settings=" + s.path(".jfc") + ",dumponexit=true,filename=" + s.path(".jfr"),
			"-XX:FlightRecorderOptions=stackdepth=256",
		}
	case V8:
		return []string{"--require=" + s.path(".v8/profiler.cjs")}
	}
	return nil
}

// Apply adds the profiler's runtime flags and variables to a start's options (its Vars are
// copied first, as the profiler's variables are no contract variable of the caller's), and
// takes the CPUs the contender is pinned to, which perf records.
func (s *Session) Apply(opts *contender.StartOptions) error {
	pv, err := s.Vars()
	if err != nil {
		return err
	}
	vars := maps.Clone(opts.Vars)
	if vars == nil {
		vars = map[string]string{}
	}
	maps.Copy(vars, pv)
	opts.Vars = vars
	s.cpus = opts.CPUs
	opts.Flags = append(opts.Flags, s.Flags()...)
	return nil
}

// Vars are the variables the contender is started with besides the level's.
func (s *Session) Vars() (map[string]string, error) {
	if s.tool == V8 {
		return map[string]string{"ARENA_V8_PROFILE_DIR": s.path(".v8")}, nil
	}
	if s.tool != Pprof {
		return nil, nil
	}
	port, err := contender.FreePort()
	if err != nil {
		return nil, err
	}
	s.pprof = &pprofReader{addr: fmt.Sprintf("127.0.0.1:%d", port)}
	return map[string]string{PprofVar: s.pprof.addr}, nil
}

// Begin marks the load's start, and starts profiling the client (this process).
func (s *Session) Begin() {
	s.from = time.Now()
	s.signalV8()
	if s.pprof != nil {
		s.pprof.start()
	}
	switch {
	case s.tool == PySpy && s.Pid == nil:
		s.pyspy.err = errors.New("py-spy: no process to attach to")
	case s.tool == PySpy:
		s.pyspy.start(PySpyPath(), s.Pid(), s.path(".pyspy.txt"))
	case s.tool == Perf && s.Pid == nil:
		s.perf.err = errors.New("perf: no process to attach to")
	case s.tool == Perf:
		s.perf.start(PerfPath(), s.Pid(), s.cpus, s.path(".perf.data"))
	}
	if s.WithClient {
		s.client.Reset()
		if s.clientErr = rpprof.StartCPUProfile(&s.client); s.clientErr == nil {
			s.clientOn = true
		}
	}
}

// End marks the load's end; Wait, called before the contender stops, waits for what is
// still being read from it.
func (s *Session) End() {
	s.to = time.Now()
	s.signalV8()
	if s.clientOn {
		rpprof.StopCPUProfile()
		s.clientOn = false
	}
	if s.pprof != nil {
		s.pprof.stop()
	}
	s.pyspy.stop()
	s.perf.stop()
}

// Wait waits for the last one-second pprof read to come back.
func (s *Session) Wait() {
	if s.pprof != nil {
		s.pprof.wait()
	}
}

// signalV8 starts or stops Node's profiler in every process of the contender's group.
func (s *Session) signalV8() {
	if s.tool == V8 && s.Signal != nil {
		if err := s.Signal(syscall.SIGUSR2); err != nil && s.signalErr == nil {
			s.signalErr = err
		}
	}
}

// ClientProfile is the client's own profile over the load (arena's load engine, its probes
// and its pprof reader), folded as the contenders' are; nil without WithClient.
func (s *Session) ClientProfile() *results.Profile {
	if !s.WithClient {
		return nil
	}
	p := &results.Profile{Tool: Pprof}
	if s.clientErr != nil {
		p.Error = "the client's profile: " + s.clientErr.Error()
		return p
	}
	prof, err := pprof.Parse(&s.client)
	if err != nil {
		p.Error = "the client's profile: " + err.Error()
		return p
	}
	if raw := s.path(".client.pb.gz"); writePprof(raw, prof) == nil {
		p.File = s.rel(raw)
	}
	return s.finish(p, foldPprof(prof), nil, ".client.folded")
}

// Fold reads what the profiler recorded, keeps the load's window, writes the collapsed
// stacks beside the recording and returns the cell's profile. It is called once the
// contender has stopped, as a JVM and Node write their recording on exit.
func (s *Session) Fold() *results.Profile {
	p := &results.Profile{Tool: s.tool}
	var stacks results.Stacks
	var err error
	switch s.tool {
	case JFR:
		p.File = s.rel(s.path(".jfr"))
		stacks, p.Outside, err = foldJFR(s.jdk, s.path(".jfr"), s.from, s.to)
	case V8:
		p.File = s.rel(s.path(".v8"))
		stacks, err = foldV8Dir(s.path(".v8"))
		if err != nil && s.signalErr != nil {
			err = fmt.Errorf("%w (signalling the profiler: %v)", err, s.signalErr)
		}
	case Pprof:
		p.File = s.rel(s.path(".pb.gz"))
		stacks, err = s.pprof.fold(s.path(".pb.gz"))
	case PySpy:
		p.File = s.rel(s.path(".pyspy.txt"))
		stacks, err = s.pyspy.fold()
	case Perf:
		p.File = s.rel(s.path(".perf.data"))
		stacks, err = s.perf.fold()
	}
	s.stacks = stacks
	return s.finish(p, stacks, err, ".folded")
}

// Stacks are the contender's samples inside the load as Fold read them (nil before Fold).
func (s *Session) Stacks() results.Stacks {
	return s.stacks
}

// finish writes the stacks to the folded file named by ext and fills p from them.
func (s *Session) finish(p *results.Profile, stacks results.Stacks, err error, ext string) *results.Profile {
	if err != nil {
		p.Error = err.Error()
	}
	if len(stacks) == 0 {
		if p.Error == "" {
			p.Error = "no samples inside the load"
		}
		return p
	}
	folded := s.path(ext)
	if werr := writeFolded(folded, stacks); werr != nil {
		p.Error = strings.TrimPrefix(p.Error+"; "+werr.Error(), "; ")
	} else {
		p.Folded = s.rel(folded)
	}
	p.Samples = stacks.Samples()
	p.Top = stacks.Top(results.TopFrames)
	p.Flame = stacks.Flame("all", results.FlameMin)
	return p
}

// writeFolded writes the stacks in flamegraph.pl's input format, in a stable order.
func writeFolded(path string, stacks results.Stacks) error {
	keys := make([]string, 0, len(stacks))
	for k := range stacks {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for _, k := range keys {
		fmt.Fprintf(w, "%s %d\n", k, stacks[k])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// frameSafe keeps the folded format's separators (";" and the line's end) out of a name.
var frameSafe = strings.NewReplacer(";", ":", "\n", " ")

// frameName keeps a frame name fit for the folded format, whose separators are ";" and
// the last space before the count.
func frameName(s string) string {
	if s == "" {
		return "?"
	}
	return frameSafe.Replace(s)
}
