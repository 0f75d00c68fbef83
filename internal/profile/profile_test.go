package profile

import (
	"bufio"
	"bytes"
	"context"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/pprof"
	"os"
	"os/exec"
	"path/filepath"
	rpprof "runtime/pprof"
	"strings"
	"syscall"
	"testing"
	"time"

	pprofile "github.com/google/pprof/profile"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
)

// spun keeps spinGo's sums, so that the compiler cannot drop the work.
var spun int

// spinGo burns CPU in a frame of its own for d, so that a profile has a known hot spot.
//
//go:noinline
func spinGo(d time.Duration) int {
	n := 0
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 10000; i++ {
			n += i * i
		}
	}
	return n
}

// hot is the samples of stacks whose leaf-most frames include name.
func hot(s results.Stacks, name string) int64 {
	var n int64
	for stack, v := range s {
		if strings.Contains(stack, name) {
			n += v
		}
	}
	return n
}

func TestPprofFoldsARealGoProfile(t *testing.T) {
	var buf bytes.Buffer
	if err := rpprof.StartCPUProfile(&buf); err != nil {
		t.Skipf("a CPU profile is already running: %v", err)
	}
	spun += spinGo(400 * time.Millisecond)
	rpprof.StopCPUProfile()
	reader := &pprofReader{}
	p, err := pprofile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	reader.profiles = append(reader.profiles, p)
	stacks, err := reader.fold(filepath.Join(t.TempDir(), "p.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if n := hot(stacks, "profile.spinGo"); n < stacks.Samples()/2 {
		t.Fatalf("spinGo in %d of %d samples; want most:\n%v", n, stacks.Samples(), stacks)
	}
	for stack := range stacks {
		if spin, runner := strings.Index(stack, "spinGo"), strings.Index(stack, "testing.tRunner"); spin >= 0 && (runner < 0 || runner > spin) {
			t.Fatalf("stack %q is not root first (testing.tRunner before spinGo)", stack)
		}
	}
}

// The reader takes one-second profiles from a live pprof endpoint between Begin and End,
// as the lab does with a Go contender.
func TestPprofReaderProfilesTheWindowFromTheEndpoint(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	s := &Session{tool: Pprof, dir: t.TempDir(), base: "go-cell", pprof: &pprofReader{addr: strings.TrimPrefix(srv.URL, "http://")}}
	if err := os.MkdirAll(s.path(""), 0o755); err != nil {
		t.Fatal(err)
	}
	s.Begin()
	spun += spinGo(1500 * time.Millisecond)
	s.End()
	p := s.Fold()
	if p.Error != "" || p.Samples == 0 {
		t.Fatalf("profile %+v; want samples and no error", p)
	}
	if n := hot(mustRead(t, s.dir, p.Folded), "spinGo"); n == 0 {
		t.Fatalf("spinGo is in no folded stack of %s", p.Folded)
	}
	if len(s.pprof.profiles) < 2 {
		t.Fatalf("%d one-second profiles over 1.5 s; want at least 2", len(s.pprof.profiles))
	}
	if _, err := os.Stat(filepath.Join(s.dir, p.File)); err != nil {
		t.Fatalf("the merged recording: %v", err)
	}
	if p.Flame == nil || p.Flame.Value != p.Samples || len(p.Top) == 0 {
		t.Fatalf("flame %+v, top %+v; want both from the samples", p.Flame, p.Top)
	}
}

func mustRead(t *testing.T, dir, rel string) results.Stacks {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, rel))
	if err != nil {
		t.Fatal(err)
	}
	s, _, err := parseFolded(raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

const busyJS = `
function spinNode(ms) { const end = Date.now() + ms; let n = 0; while (Date.now() < end) n += Math.sqrt(n + 1); return n; }
console.log('ready');
setTimeout(() => { spinNode(600); setTimeout(() => {}, 1500); }, 300);
`

// Node's profiler (profiler.cjs, preloaded as the lab preloads it) starts on a SIGUSR2 and
// stops on the next, writing a .cpuprofile of that span only, not of the process's life.
func TestV8ProfilerStartsAndStopsOnSignals(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("no node on PATH")
	}
	s, err := New(V8, t.TempDir(), "node-cell", contender.JDK{})
	if err != nil {
		t.Fatal(err)
	}
	vars, _ := s.Vars()
	cmd := exec.Command(node, append(s.Flags(), "-e", busyJS)...)
	cmd.Env = append(os.Environ(), "ARENA_V8_PROFILE_DIR="+vars["ARENA_V8_PROFILE_DIR"])
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	line, err := bufio.NewReader(stdout).ReadString('\n') // the preload has run: SIGUSR2 is handled
	if err != nil || line != "ready\n" {
		t.Fatalf("node said %q, %v", line, err)
	}
	s.Signal = func(sig syscall.Signal) error { return cmd.Process.Signal(sig) }
	s.Begin()
	time.Sleep(1100 * time.Millisecond) // the spin runs from 300 ms to 900 ms
	s.End()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("node: %v", err)
	}
	p := s.Fold()
	if p.Error != "" || p.Samples == 0 {
		t.Fatalf("profile %+v; want samples", p)
	}
	stacks := mustRead(t, s.dir, p.Folded)
	if n := hot(stacks, "spinNode [eval]"); n < stacks.Samples()/3 {
		t.Fatalf("spinNode in %d of %d samples; want a third or more:\n%v", n, stacks.Samples(), stacks)
	}
	files, _ := filepath.Glob(filepath.Join(s.path(".v8"), "*.cpuprofile"))
	if len(files) != 1 {
		t.Fatalf("profiles %v; want the one process's", files)
	}
	cp, err := readCPUProfile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	// The process lives about 2.5 s, the signals are 1.1 s apart.
	if span := time.Duration(cp.EndTime-cp.StartTime) * time.Microsecond; span < time.Second || span > 1600*time.Millisecond {
		t.Fatalf("the profile spans %s; want the 1.1 s between the signals", span)
	}
}

const busyJava = `
public class Busy {
    static double spinJava(long ms) {
        long end = System.currentTimeMillis() + ms;
        double n = 0;
        while (System.currentTimeMillis() < end) n += Math.sqrt(n + 1);
        return n;
    }
    public static void main(String[] args) { System.out.println(spinJava(1500) > 0); }
}
`

// A JVM records its whole life with JFR; Fold.java, run by the same JDK, keeps the window.
func TestJFRRecordingIsFoldedByTheJDK(t *testing.T) {
	jdk, err := contender.FindJDK()
	if err != nil {
		t.Skipf("no JDK 21+: %v", err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "Busy.java")
	if err := os.WriteFile(src, []byte(busyJava), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := New(JFR, dir, "java-cell", jdk)
	if err != nil {
		t.Fatal(err)
	}
	args := append(s.Flags(), src)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s.Begin()
	if out, err := exec.CommandContext(ctx, filepath.Join(jdk.Home, "bin", "java"), args...).CombinedOutput(); err != nil {
		t.Fatalf("java: %v\n%s", err, out)
	}
	s.End()
	p := s.Fold()
	if p.Error != "" || p.Samples < 20 {
		t.Fatalf("profile %+v; want samples of 1.5 s and no error", p)
	}
	if n := hot(mustRead(t, dir, p.Folded), "Busy.spinJava"); n < p.Samples/2 {
		t.Fatalf("Busy.spinJava in %d of %d samples; want most", n, p.Samples)
	}
	if p.Top[0].Name != "Busy.spinJava" && !strings.HasPrefix(p.Top[0].Name, "java.lang.") && !strings.HasPrefix(p.Top[0].Name, "jdk.") {
		t.Fatalf("top frame %q; want spinJava or what it calls", p.Top[0].Name)
	}
}

func TestFoldSaysWhyWhenTheRecordingIsMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := New(V8, dir, "killed-cell", contender.JDK{})
	if err != nil {
		t.Fatal(err)
	}
	s.Begin()
	s.End()
	if p := s.Fold(); p.Samples != 0 || !strings.Contains(p.Error, "no Node process of the contender wrote one") {
		t.Fatalf("profile %+v; want no samples and why", p)
	}
}

func TestToolForFollowsTheRuntime(t *testing.T) {
	for _, tt := range []struct {
		m    contender.Manifest
		tool string
	}{
		{contender.Manifest{Name: "j", Runtime: "java"}, JFR},
		{contender.Manifest{Name: "n", Runtime: "node"}, V8},
		{contender.Manifest{Name: "g", Runtime: "go", Knobs: []string{PprofVar}}, Pprof},
		{contender.Manifest{Name: "g", Runtime: "go"}, ""},
		{contender.Manifest{Name: "r", Runtime: "rust"}, map[bool]string{true: Perf, false: ""}[PerfPath() != ""]},
		{contender.Manifest{Name: "o", Runtime: "other"}, ""},
	} {
		tool, why := ToolFor(&tt.m)
		if tool != tt.tool || (tool == "") != (why != "") {
			t.Errorf("%s (%s): %q, %q; want %q and a reason only without a tool", tt.m.Name, tt.m.Runtime, tool, why, tt.tool)
		}
	}
}

// py-spy attaches to a running Python process for the load alone and its samples are folded
// as the other profilers' are: a function spinning in the interpreter is the hot spot. Without
// py-spy the python runtime has no tool, and the reason says how to install it.
func TestPySpyRecordsAPythonProcess(t *testing.T) {
	m := &contender.Manifest{Name: "p", Runtime: "python"}
	if os.Getenv("ARENA_ROOT") == "" { // go test from the Makefile: the lab is two folders up
		root, err := filepath.Abs(filepath.Join("..", ".."))
		if err != nil {
			t.Fatal(err)
		}
		t.Setenv("ARENA_ROOT", root)
	}
	if PySpyPath() == "" {
		tool, why := ToolFor(m)
		if tool != "" || !strings.Contains(why, "pip install py-spy=="+PySpyVersion) {
			t.Fatalf("without py-spy: %q, %q", tool, why)
		}
		t.Skip("py-spy is not installed (.ci/run installs it): " + why)
	}
	if tool, _ := ToolFor(m); tool != PySpy {
		t.Fatalf("python's tool %q with py-spy installed", tool)
	}
	// A file, not -c: py-spy names each process by its command line in the stacks, and a
	// script on the command line would bring its newlines into them.
	script := filepath.Join(t.TempDir(), "spin.py")
	if err := os.WriteFile(script, []byte(`
def spin_python():
    n = 0
    while True:
        for i in range(10000):
            n += i * i
print("ready", flush=True)
spin_python()
`), 0o644); err != nil {
		t.Fatal(err)
	}
	py := exec.Command("python3", script)
	out, _ := py.StdoutPipe()
	if err := py.Start(); err != nil {
		t.Skipf("python3: %v", err)
	}
	defer func() { _ = py.Process.Kill(); _ = py.Wait() }()
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
		t.Fatalf("python said %q", line)
	}
	s, err := New(PySpy, t.TempDir(), "py-cell", contender.JDK{})
	if err != nil {
		t.Fatal(err)
	}
	s.Pid = func() int { return py.Process.Pid }
	s.Begin()
	time.Sleep(1500 * time.Millisecond)
	s.End()
	p := s.Fold()
	if p.Error != "" || p.Samples < 50 {
		t.Fatalf("profile %+v; want samples over 1.5 s at 100 Hz and no error", p)
	}
	if n := hot(mustRead(t, s.dir, p.Folded), "spin_python"); n < p.Samples/2 {
		t.Fatalf("spin_python in %d of %d samples; want most", n, p.Samples)
	}
}

// A process py-spy cannot read (no Python in it) gives a profile that says why, not an empty one.
func TestPySpySaysWhyItRecordedNothing(t *testing.T) {
	if os.Getenv("ARENA_ROOT") == "" {
		root, _ := filepath.Abs(filepath.Join("..", ".."))
		t.Setenv("ARENA_ROOT", root)
	}
	if PySpyPath() == "" {
		t.Skip("py-spy is not installed (.ci/run installs it)")
	}
	sleeper := exec.Command("sleep", "30")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	s, err := New(PySpy, t.TempDir(), "not-python", contender.JDK{})
	if err != nil {
		t.Fatal(err)
	}
	s.Pid = func() int { return sleeper.Process.Pid }
	s.Begin()
	time.Sleep(500 * time.Millisecond)
	s.End()
	if p := s.Fold(); p.Samples != 0 || !strings.HasPrefix(p.Error, "py-spy: ") {
		t.Fatalf("profile %+v; want no samples and py-spy's reason", p)
	}
}

// perf script's samples are folded root first under their thread's command, offsets and
// "(inlined)" dropped so that a function's samples add up, an unsymbolised frame kept as
// [unknown], a symbol with spaces whole.
func TestFoldPerfScript(t *testing.T) {
	raw := []byte("rust-axum \n" +
		"\t            701a axum::serve::handle+0x1f\n" +
		"\t            620e <tokio::runtime::task::Task<T> as core::future::Future>::poll\n" +
		"\t           27304 __libc_start_main_impl (inlined)\n" +
		"\n" +
		"rust-axum \n" +
		"\t            7020 axum::serve::handle+0x40\n" +
		"\t            620e <tokio::runtime::task::Task<T> as core::future::Future>::poll\n" +
		"\t           27304 __libc_start_main_impl (inlined)\n" +
		"\n" +
		"tokio-rt-worker \n" +
		"\t            13090 [unknown]\n")
	got := foldPerfScript(raw)
	want := results.Stacks{
		"rust-axum;__libc_start_main_impl;<tokio::runtime::task::Task<T> as core::future::Future>::poll;axum::serve::handle": 2,
		"tokio-rt-worker;[unknown]": 1,
	}
	if !maps.Equal(got, want) {
		t.Errorf("folded %v; want %v", got, want)
	}
}

// perf, recording CPUs, keeps the profiled process's samples alone, the threads it starts
// during the load included: a Python process that starts a busy thread after the recording
// began has its samples, and a busy process on the same CPUs has none. (The e2e profile test
// holds rust-threads, whose threads start as the load begins.)
func TestPerfFollowsThreadsStartedDuringTheLoad(t *testing.T) {
	if PerfPath() == "" {
		t.Skip("perf is not installed")
	}
	late := exec.Command("python3", "-c", "import threading, time\n"+
		"time.sleep(0.5)\n"+
		"def spin():\n    while True: pass\n"+
		"threading.Thread(target=spin, name='late', daemon=True).start()\n"+
		"time.sleep(30)")
	other := exec.Command("sh", "-c", "while :; do :; done")
	for _, c := range []*exec.Cmd{late, other} {
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Process.Kill(); _ = c.Wait() }()
	}
	s, err := New(Perf, t.TempDir(), "threads-cell", contender.JDK{})
	if err != nil {
		t.Fatal(err)
	}
	s.Pid = func() int { return late.Process.Pid }
	s.Begin()
	time.Sleep(2 * time.Second)
	s.End()
	p := s.Fold()
	if p.Error != "" || p.Samples < 30 {
		t.Fatalf("profile %+v; want the late thread's samples over 1.5 s at 99 Hz, and no error", p)
	}
	for stack, n := range mustRead(t, s.dir, p.Folded) {
		if root, _, _ := strings.Cut(stack, ";"); root != "python3" {
			t.Errorf("%d samples under %q; want the profiled process's alone (python3)", n, root)
		}
	}
}

// perf attaches to a running native process for the load alone and its samples are folded:
// a busy shell's samples, rooted at its command. Skipped where perf is not installed (.ci/run
// installs it).
func TestPerfRecordsANativeProcess(t *testing.T) {
	if PerfPath() == "" {
		tool, why := ToolFor(&contender.Manifest{Name: "r", Runtime: "rust"})
		if tool != "" || !strings.Contains(why, perfInstall) {
			t.Fatalf("without perf: %q, %q", tool, why)
		}
		t.Skip("perf is not installed: " + why)
	}
	busy := exec.Command("sh", "-c", "while :; do :; done")
	if err := busy.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Process.Kill(); _ = busy.Wait() }()
	s, err := New(Perf, t.TempDir(), "native-cell", contender.JDK{})
	if err != nil {
		t.Fatal(err)
	}
	s.Pid = func() int { return busy.Process.Pid }
	s.Begin()
	time.Sleep(1500 * time.Millisecond)
	s.End()
	p := s.Fold()
	if p.Error != "" || p.Samples < 50 || p.File != filepath.Join("profiles", "native-cell.perf.data") {
		t.Fatalf("profile %+v; want samples over 1.5 s at 99 Hz, the recording named, and no error", p)
	}
	if n := hot(mustRead(t, s.dir, p.Folded), "sh"); n < p.Samples/2 {
		t.Fatalf("sh in %d of %d samples; want most", n, p.Samples)
	}
}
