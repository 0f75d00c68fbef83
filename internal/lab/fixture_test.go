package lab

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/faulty"
	"github.com/arena-lab/arena/internal/verify"
)

// fixtureEnv names the fault a re-run of this test binary serves with: the binary is then a
// contender, the lab's reference servers wrapped by internal/faulty, and runs no test.
const fixtureEnv = "ARENA_LAB_FIXTURE"

func TestMain(m *testing.M) {
	if fault := os.Getenv(fixtureEnv); fault != "" {
		os.Exit(serveFixture(faulty.Fault(fault)))
	}
	os.Exit(m.Run())
}

// serveFixture serves the wrapped servers on $PORT until SIGTERM, as a contender does.
func serveFixture(fault faulty.Fault) int {
	s, err := faulty.Start("127.0.0.1:"+os.Getenv("PORT"), fault, os.Getenv("BACKPRESSURE") != "off")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("wrapped reference servers (%s) on %s\n", fault, s.Addr())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, os.Interrupt)
	<-stop
	_ = s.Close()
	return 0
}

// wrapped is a contender that is this test binary serving the reference servers with fault.
func wrapped(t *testing.T, fault faulty.Fault) *contender.Manifest {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return &contender.Manifest{Name: "wrapped-" + string(fault), Stack: "the lab's reference servers", Model: "goroutines", Runtime: "go",
		Start: fmt.Sprintf("%s=%s exec %q -test.run=^$", fixtureEnv, fault, bin), Dir: t.TempDir(),
		Knobs: []string{"BACKPRESSURE"}, Features: []string{"chat", "stream"}}
}

// pyServer is a contender that is python's http.server, answering the readiness probe from
// a file; before is shell run first in the same shell (a trap, a child left behind).
func pyServer(t *testing.T, name, before string) *contender.Manifest {
	t.Helper()
	needTools(t, "python3", "taskset")
	dir := t.TempDir()
	ready := filepath.Join(dir, "actuator", "health", "readiness")
	if err := os.MkdirAll(filepath.Dir(ready), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ready, []byte(`{"status":"UP"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return &contender.Manifest{Name: name, Stack: "python http.server", Model: "event-loop", Runtime: "go", Dir: dir,
		Start: before + " exec python3 -m http.server $PORT --bind 127.0.0.1"}
}

func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
}

// testLab is a lab in a temp folder whose contenders run on the last CPU this process may
// use, reporting its progress to the test's log (and to watch, when given).
func testLab(t *testing.T, watch io.Writer) *Lab {
	t.Helper()
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatal(err)
	}
	w := io.Writer(testWriter{t})
	if watch != nil {
		w = io.MultiWriter(w, watch)
	}
	return &Lab{Root: t.TempDir(), Settings: contender.Settings{HeapMB: 64}, ServerCPUs: cpus[len(cpus)-1:], ClientCPUs: cpus[:1],
		Progress: NewProgress(w)}
}

// testWriter writes a lab's progress to the test's log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// verified stamps m as having passed verify, as VerifyCached remembers a pass: the fixtures
// keep only the part of the contract their tests need.
func verified(t *testing.T, l *Lab, m *contender.Manifest) {
	t.Helper()
	hash, err := contender.SourceHash(m)
	if err != nil {
		t.Fatal(err)
	}
	// One passing check in every group: a stamp that passes whatever groups a scenario needs.
	var checks []verify.Check
	for _, g := range verify.Groups {
		checks = append(checks, verify.Check{Group: g, Name: "a fixture of the lab's tests", OK: true})
	}
	raw, _ := json.Marshal(verify.Report{Contender: m.Name, Checks: checks})
	stamp := l.verifiedStamp(m, hash)
	if err := os.MkdirAll(filepath.Dir(stamp), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stamp, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// eventually polls cond every 20 ms until it holds, failing the test after a generous
// deadline.
func eventually(t *testing.T, what string, within time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s", what, within)
		}
	}
}

// exists says whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// groupGone says whether no process of group pgid is left.
func groupGone(pgid int) bool { return errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) }

// lineWatch is a writer that calls on for every line that contains a text, once per text.
type lineWatch struct {
	mu   sync.Mutex
	on   map[string]func()
	done map[string]bool
}

func watchLines(on map[string]func()) *lineWatch { return &lineWatch{on: on, done: map[string]bool{}} }

func (w *lineWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for text, f := range w.on {
		if !w.done[text] && strings.Contains(string(p), text) {
			w.done[text] = true
			f()
		}
	}
	return len(p), nil
}

// readOnly makes dir unwritable, for root too (which chmod alone does not stop: the
// immutable attribute does), and undoes it when the test ends; it skips the test where
// neither works.
func readOnly(t *testing.T, dir string) {
	t.Helper()
	writable := func() bool {
		f, err := os.CreateTemp(dir, "probe")
		if err != nil {
			return false
		}
		f.Close()
		os.Remove(f.Name())
		return true
	}
	t.Cleanup(func() {
		_ = exec.Command("chattr", "-i", dir).Run()
		_ = os.Chmod(dir, 0o755)
	})
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	if writable() {
		_ = exec.Command("chattr", "+i", dir).Run()
	}
	if writable() {
		t.Skipf("cannot make %s read-only here (neither chmod nor chattr +i stops this user)", dir)
	}
}
