package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/report"
)

// labRoot is the lab's folder seen from this package's.
const labRoot = ".."

// quickly is how long a command that only checks its input may take.
const quickly = 2 * time.Second

// setup points arena at this lab and makes sure that, should a command get past its checks
// by mistake, it cannot build or start a JVM contender: ARENA_JAVA_HOME names no JDK.
func setup(t *testing.T) {
	t.Helper()
	t.Setenv("ARENA_ROOT", labRoot)
	t.Setenv("ARENA_JAVA_HOME", t.TempDir())
}

// output is what a command printed, on each stream, and how it ended.
type output struct {
	stdout, stderr string
	err            error
}

// execute runs arena with args and returns what it printed and its error. It fails the
// test if the command took longer than quickly.
func execute(t *testing.T, args ...string) output {
	t.Helper()
	root := newRoot()
	var stdout, stderr bytes.Buffer
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	root.SetArgs(args)
	// A safety net only: a command that started real work would be interrupted.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := root.ExecuteContext(ctx)
	if took := time.Since(start); took > quickly {
		t.Errorf("arena %s took %s: it did work instead of refusing at once", strings.Join(args, " "), took.Round(time.Millisecond))
	}
	return output{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// refused runs arena with args and checks that it failed with an error that says every
// one of want, having printed nothing (the error is printed once, by runArena).
func refused(t *testing.T, args []string, want ...string) {
	t.Helper()
	o := execute(t, args...)
	if o.err == nil {
		t.Fatalf("arena %s succeeded:\n%s", strings.Join(args, " "), o.stdout)
	}
	for _, w := range want {
		if !strings.Contains(o.err.Error(), w) {
			t.Errorf("arena %s: error %q does not contain %q", strings.Join(args, " "), o.err, w)
		}
	}
	if o.stdout != "" || o.stderr != "" {
		t.Errorf("arena %s printed beside its error:\nstdout: %q\nstderr: %q", strings.Join(args, " "), o.stdout, o.stderr)
	}
}

// noWork checks that an --out folder is still empty: the run created no runs/<id>/.
func noWork(t *testing.T, out string) {
	t.Helper()
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) > 0 {
		t.Errorf("the command created %s/%s", out, entries[0].Name())
	}
}

// unknownContender checks that arena args, which name the contender "nosuch", is refused
// with the list of the known ones, whatever this lab's contenders are at the moment.
func unknownContender(t *testing.T, args ...string) {
	t.Helper()
	setup(t)
	known, discoverErr := contender.Discover(labRoot + "/contenders")
	o := execute(t, args...)
	if o.err == nil {
		t.Fatalf("arena %s succeeded", strings.Join(args, " "))
	}
	if discoverErr != nil {
		// A broken manifest in the lab is reported before any selection.
		if !strings.Contains(o.err.Error(), discoverErr.Error()) {
			t.Errorf("error %q, want the discovery error %q", o.err, discoverErr)
		}
		return
	}
	if !strings.Contains(o.err.Error(), `no contender "nosuch"`) || !strings.Contains(o.err.Error(), "known:") {
		t.Errorf("error %q does not name the unknown contender", o.err)
	}
	for _, m := range known {
		if !strings.Contains(o.err.Error(), m.Name) {
			t.Errorf("error %q does not list %s", o.err, m.Name)
		}
	}
}

// fixtureLab makes an empty lab (no contenders, a stand-in chart library), points
// ARENA_ROOT at it and returns its folder.
func fixtureLab(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	for _, dir := range []string{"contenders", "scenarios", "runs"} {
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	lib := report.ChartLibPath(root)
	if err := os.MkdirAll(filepath.Dir(lib), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lib, []byte("/* chart library */"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ARENA_ROOT", root)
	t.Setenv("ARENA_JAVA_HOME", t.TempDir())
	return root
}

// savedVerdict is the why of every verdict a fixture run is saved with: a run re-judged
// by this arena's scenario no longer has it.
const savedVerdict = "the verdict this run was saved with"

// fixtureRun is a finished run of scenario with one cell per contender, saved with a
// verdict per contender.
func fixtureRun(id, scenario string, started time.Time, contenders ...string) *results.Run {
	finished := started.Add(time.Minute)
	run := &results.Run{
		Schema: results.SchemaVersion, ID: id, Command: []string{"arena", "run", scenario},
		Started: started, Finished: &finished, Status: results.RunComplete,
		Scenario: results.ScenarioInfo{Name: scenario, Title: "fixture of " + scenario, Preset: "study", Repeat: 1,
			Levels: []results.Level{{Name: "study", Load: "open loop"}}},
	}
	for _, name := range contenders {
		run.Contenders = append(run.Contenders, results.Contender{Name: name, Model: "goroutines", Verified: "passed"})
		run.Cells = append(run.Cells, results.Cell{Contender: name, Level: "study", Repeat: 1, Started: started, Seconds: 20,
			Outcome: results.Outcome{Status: results.OutcomeOK}})
		run.Verdicts = append(run.Verdicts, results.Verdict{Contender: name, Verdict: "saved", Why: savedVerdict})
	}
	return run
}

// saveRun saves run as dir/<its id>/results.json and returns the folder.
func saveRun(t *testing.T, dir string, run *results.Run) string {
	t.Helper()
	folder := filepath.Join(dir, run.ID)
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.Save(run, folder); err != nil {
		t.Fatal(err)
	}
	return folder
}

// The error of a command is printed once, on stderr after "arena:", and makes the exit
// status 1; a command that succeeds exits 0 and prints on stdout only.
func TestRunArenaExitStatus(t *testing.T) {
	setup(t)
	ctx := context.Background()
	var stdout, stderr bytes.Buffer
	if code := runArena(ctx, []string{"run", "--repeat", "0"}, &stdout, &stderr); code != 1 {
		t.Errorf("arena run --repeat 0 exited %d, want 1", code)
	}
	if got, want := stderr.String(), "arena: --repeat 0: give 1 to 100\n"; got != want {
		t.Errorf("stderr %q, want %q", got, want)
	}
	if stdout.Len() > 0 {
		t.Errorf("a refused command printed on stdout: %q", stdout.String())
	}

	stdout.Reset()
	stderr.Reset()
	if code := runArena(ctx, []string{"list"}, &stdout, &stderr); code != 0 {
		t.Errorf("arena list exited %d, want 0; stderr %q", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "CONTENDER") || stderr.Len() > 0 {
		t.Errorf("arena list: stdout %q, stderr %q", stdout.String(), stderr.String())
	}

	stdout.Reset()
	stderr.Reset()
	if code := runArena(ctx, []string{"nosuch"}, &stdout, &stderr); code != 1 || !strings.HasPrefix(stderr.String(), `arena: unknown command "nosuch"`) {
		t.Errorf("arena nosuch: exit %d, stderr %q", code, stderr.String())
	}
}

func TestUnknownCommand(t *testing.T) {
	setup(t)
	refused(t, []string{"nosuch"}, `unknown command "nosuch"`)
}

// ARENA_ROOT that is not a lab is refused before anything else.
func TestBadArenaRoot(t *testing.T) {
	setup(t)
	t.Setenv("ARENA_ROOT", t.TempDir())
	for _, args := range [][]string{
		{"report", "x"}, {"verify", "x"}, {"list"}, {"matrix"},
		{"run", "--server-cpus", "0", "--client-cpus", "0", "--out", t.TempDir()},
	} {
		o := execute(t, args...)
		if o.err == nil || !strings.Contains(o.err.Error(), "is not a lab: it needs both a contenders/ and a scenarios/ folder") {
			t.Errorf("arena %s with a bad ARENA_ROOT: %v", strings.Join(args, " "), o.err)
		}
	}
}

func TestHelp(t *testing.T) {
	setup(t)
	var subs []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			subs = append(subs, sub)
			walk(sub)
		}
	}
	walk(newRoot())
	if len(subs) < 12 {
		t.Fatalf("only %d subcommands", len(subs))
	}
	o := execute(t, "--help")
	if o.err != nil {
		t.Fatalf("arena --help: %v", o.err)
	}
	for _, want := range []string{"arena run", "arena list", "Available Commands:"} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("arena --help does not say %q:\n%s", want, o.stdout)
		}
	}
	for _, sub := range newRoot().Commands() {
		if !strings.Contains(o.stdout, "  "+sub.Name()+" ") {
			t.Errorf("arena --help does not list %s", sub.Name())
		}
	}
	for _, sub := range subs {
		path := strings.TrimPrefix(sub.CommandPath(), "arena ")
		t.Run(path, func(t *testing.T) {
			o := execute(t, append(strings.Fields(path), "--help")...)
			if o.err != nil {
				t.Fatalf("arena %s --help: %v", path, o.err)
			}
			if o.stderr != "" {
				t.Errorf("arena %s --help wrote to stderr: %q", path, o.stderr)
			}
			out := o.stdout
			if !strings.Contains(out, "Usage:") || !strings.Contains(out, "arena "+path) {
				t.Errorf("arena %s --help has no usage line:\n%s", path, out)
			}
			if sub.Short != "" && !strings.Contains(out, strings.TrimSpace(firstLineOf(sub.Long, sub.Short))) {
				t.Errorf("arena %s --help does not describe the command:\n%s", path, out)
			}
			sub.Flags().VisitAll(func(f *pflag.Flag) {
				if !strings.Contains(out, "--"+f.Name) {
					t.Errorf("arena %s --help does not mention --%s", path, f.Name)
				}
				if f.Shorthand != "" && !strings.Contains(out, "-"+f.Shorthand+", --"+f.Name) {
					t.Errorf("arena %s --help does not mention -%s", path, f.Shorthand)
				}
			})
			if !strings.Contains(out, "--help") {
				t.Errorf("arena %s --help does not mention --help", path)
			}
		})
	}
}

// firstLineOf is the first line of long, or short when long is empty: what help shows first.
func firstLineOf(long, short string) string {
	if long == "" {
		return short
	}
	first, _, _ := strings.Cut(long, "\n")
	return first
}

// The flags every command that starts contenders shares, with their defaults.
func TestLabFlagsShared(t *testing.T) {
	for _, path := range []string{"run", "verify", "build", "bench", "bench chat", "bench stream"} {
		sub := findSub(t, path)
		for flag, def := range map[string]string{"server-cpus": "1", "client-cpus": "0", "heap": "512"} {
			f := sub.Flags().Lookup(flag)
			if f == nil {
				t.Errorf("%s has no --%s", path, flag)
				continue
			}
			if f.DefValue != def {
				t.Errorf("%s --%s defaults to %q, want %q", path, flag, f.DefValue, def)
			}
		}
	}
}

// The lab's progress goes to the command's stderr, whatever it is.
func TestLabProgressGoesToTheCommandsStderr(t *testing.T) {
	setup(t)
	var lf labFlags
	cmd := &cobra.Command{}
	lf.register(cmd)
	if err := cmd.ParseFlags([]string{"--server-cpus", "0", "--client-cpus", "0"}); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	l, err := lf.open(&stderr)
	if err != nil {
		t.Fatal(err)
	}
	l.Progress.Step("build x")
	l.Progress.Done("up to date")
	if got, want := stderr.String(), "  build x … up to date\n"; got != want {
		t.Errorf("progress wrote %q, want %q", got, want)
	}
}

// findSub finds a command by its path below arena, e.g. "bench chat".
func findSub(t *testing.T, path string) *cobra.Command {
	t.Helper()
	c, rest, err := newRoot().Find(strings.Fields(path))
	if err != nil || len(rest) > 0 || c.CommandPath() != "arena "+path {
		t.Fatalf("no subcommand %s (%v)", path, err)
	}
	return c
}

// writes is a writer that hands each write to the test as it comes: the servers print
// their address with one Fprintln.
type writes chan string

func (w writes) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

// serve starts arena args, a command that serves until it is stopped, waits for what it
// prints first on stdout and returns that line; stopping the command (as Ctrl-C does) is a
// cleanup that checks it then ends without an error, having written nothing to stderr.
func serve(t *testing.T, args ...string) string {
	t.Helper()
	return serveWithin(t, quickly, args...)
}

// serveWithin is serve for a command that may take up to wait to print its first line.
func serveWithin(t *testing.T, wait time.Duration, args ...string) string {
	t.Helper()
	root := newRoot()
	stdout, stderr := make(writes, 16), make(writes, 16)
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	command := "arena " + strings.Join(args, " ")
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s stopped with %v", command, err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("%s did not stop within 5 s of its context", command)
		}
		if len(stderr) > 0 {
			t.Errorf("%s wrote to stderr: %q", command, <-stderr)
		}
	})
	select {
	case first := <-stdout:
		line, _, _ := strings.Cut(first, "\n")
		return line
	case err := <-done:
		done <- err // for the cleanup
		t.Fatalf("%s ended before it printed its address: %v", command, err)
	case <-time.After(wait):
		t.Fatalf("%s printed no address within %s", command, wait)
	}
	return ""
}

// The first signal ends the command's context (Ctrl-C: stop and save); the second closes the
// hurry the lab reads (kill the contender now, save all the same) and says so.
func TestSecondInterruptHurries(t *testing.T) {
	stderr := make(writes, 4)
	ctx := interrupts(stderr, syscall.SIGUSR1)
	hurry := hurryOf(ctx)
	if hurry == nil || hurryOf(context.Background()) != nil {
		t.Fatal("no hurry channel in the context, or one outside it")
	}
	signalSelf := func() {
		if err := syscall.Kill(os.Getpid(), syscall.SIGUSR1); err != nil {
			t.Fatal(err)
		}
	}
	signalSelf()
	select {
	case <-ctx.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the first signal did not end the context")
	}
	select {
	case <-hurry:
		t.Fatal("one signal hurried")
	default:
	}
	signalSelf()
	select {
	case <-hurry:
	case <-time.After(10 * time.Second):
		t.Fatal("the second signal did not hurry")
	}
	if said := <-stderr; !strings.Contains(said, "the contender is killed, what finished is saved") {
		t.Errorf("stderr %q does not say what the second Ctrl-C does", said)
	}
}
