package cmd

import (
	"bytes"
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arena-lab/arena/internal/contender"
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

// execute runs arena with args and returns what it printed (through cobra) and its error.
// It fails the test if the command took longer than quickly.
func execute(t *testing.T, args ...string) (string, error) {
	t.Helper()
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs(args)
	// A safety net only: a command that started real work would be interrupted.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := root.ExecuteContext(ctx)
	if took := time.Since(start); took > quickly {
		t.Errorf("arena %s took %s: it did work instead of refusing at once", strings.Join(args, " "), took.Round(time.Millisecond))
	}
	return out.String(), err
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

func TestRunRejectsBadInput(t *testing.T) {
	setup(t)
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	heldPort := strconv.Itoa(held.Addr().(*net.TCPAddr).Port)

	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"repeat 0", []string{"--repeat", "0"}, []string{"--repeat 0: give 1 to 100"}},
		{"repeat 101", []string{"--repeat", "101"}, []string{"--repeat 101: give 1 to 100"}},
		{"repeat not a number", []string{"--repeat", "abc"}, []string{`invalid argument "abc"`, "--repeat"}},
		{"unknown scenario", []string{"nosuch"}, []string{`no scenario "nosuch"`, "scenarios: isolation"}},
		{"two scenarios", []string{"isolation", "isolation"}, []string{"accepts at most 1 arg"}},
		{"unknown preset", []string{"--preset", "nosuch"}, []string{`no preset "nosuch"`, "seed, default"}},
		{"server CPU not here", []string{"--server-cpus", "99", "--client-cpus", "0"}, []string{"--server-cpus", `"99"`, "not available"}},
		{"server CPUs not a list", []string{"--server-cpus", "one"}, []string{"--server-cpus", `"one" is not a CPU number`}},
		{"client CPUs not a list", []string{"--server-cpus", "0", "--client-cpus", "2-1"}, []string{"--client-cpus", `"2-1"`}},
		{"heap too small", []string{"--heap", "10", "--server-cpus", "0", "--client-cpus", "0"}, []string{"--heap 10", "between 64 and 65536"}},
		{"heap too large", []string{"--heap", "100000", "--server-cpus", "0", "--client-cpus", "0"}, []string{"--heap 100000"}},
		{"privileged port", []string{"--port", "80"}, []string{"--port 80: give 1024 to 65535"}},
		{"port too large", []string{"--port", "70000"}, []string{"--port 70000"}},
		{"port taken", []string{"--port", heldPort}, []string{"port " + heldPort + " is already in use"}},
		{"negative duration", []string{"--duration", "-1s"}, []string{"--duration and --timeout must be positive"}},
		{"negative timeout", []string{"--timeout", "-5s"}, []string{"--duration and --timeout must be positive"}},
		{"duration not a duration", []string{"--duration", "soon"}, []string{`invalid argument "soon"`, "--duration"}},
		{"unknown flag", []string{"--repeats", "2"}, []string{"unknown flag: --repeats"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			_, err := execute(t, append(append([]string{"run"}, tt.args...), "--out", out)...)
			if err == nil {
				t.Fatalf("arena run %s succeeded", strings.Join(tt.args, " "))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			noWork(t, out)
		})
	}
}

// An unknown contender is refused with the list of the known ones, whatever this lab's
// contenders are at the moment.
func TestUnknownContender(t *testing.T) {
	setup(t)
	known, discoverErr := contender.Discover(labRoot + "/contenders")
	out := t.TempDir()
	for _, args := range [][]string{
		{"run", "--contenders", "nosuch", "--server-cpus", "0", "--client-cpus", "0", "--out", out},
		{"run", "--contenders", "nosuch,other", "--server-cpus", "0", "--client-cpus", "0", "--out", out},
		{"verify", "nosuch", "--server-cpus", "0", "--client-cpus", "0"},
		{"build", "nosuch", "--server-cpus", "0", "--client-cpus", "0"},
	} {
		t.Run(strings.Join(args[:3], " "), func(t *testing.T) {
			_, err := execute(t, args...)
			if err == nil {
				t.Fatalf("arena %s succeeded", strings.Join(args, " "))
			}
			if discoverErr != nil {
				// A broken manifest in the lab is reported before any selection.
				if !strings.Contains(err.Error(), discoverErr.Error()) {
					t.Errorf("error %q, want the discovery error %q", err, discoverErr)
				}
				return
			}
			if !strings.Contains(err.Error(), `no contender "nosuch"`) || !strings.Contains(err.Error(), "known:") {
				t.Errorf("error %q does not name the unknown contender", err)
			}
			for _, m := range known {
				if !strings.Contains(err.Error(), m.Name) {
					t.Errorf("error %q does not list %s", err, m.Name)
				}
			}
		})
	}
	noWork(t, out)
}

func TestOtherCommandsRejectBadInput(t *testing.T) {
	setup(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"report of no run", []string{"report", "nosuch-run"}, []string{`no run "nosuch-run"`}},
		{"report without a run", []string{"report"}, []string{"accepts 1 arg"}},
		{"verify with a bad heap", []string{"verify", "--heap", "10", "--server-cpus", "0"}, []string{"--heap 10"}},
		{"build with a bad CPU", []string{"build", "--server-cpus", "99", "--client-cpus", "0"}, []string{"--server-cpus", "not available"}},
		{"list takes no arguments", []string{"list", "extra"}, []string{`unknown command "extra"`}},
		{"unknown command", []string{"nosuch"}, []string{`unknown command "nosuch"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := execute(t, tt.args...)
			if err == nil {
				t.Fatalf("arena %s succeeded", strings.Join(tt.args, " "))
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// ARENA_ROOT that is not a lab is refused before anything else.
func TestBadArenaRoot(t *testing.T) {
	setup(t)
	t.Setenv("ARENA_ROOT", t.TempDir())
	for _, args := range [][]string{{"report", "x"}, {"verify", "x"}, {"run", "--server-cpus", "0", "--client-cpus", "0", "--out", t.TempDir()}} {
		_, err := execute(t, args...)
		if err == nil || !strings.Contains(err.Error(), "has no contenders/ folder") {
			t.Errorf("arena %s with a bad ARENA_ROOT: %v", strings.Join(args, " "), err)
		}
	}
}

func TestHelp(t *testing.T) {
	setup(t)
	subs := newRoot().Commands()
	if len(subs) < 5 {
		t.Fatalf("only %d subcommands", len(subs))
	}
	out, err := execute(t, "--help")
	if err != nil {
		t.Fatalf("arena --help: %v", err)
	}
	for _, sub := range subs {
		if !strings.Contains(out, sub.Name()) {
			t.Errorf("arena --help does not list %s", sub.Name())
		}
	}
	for _, sub := range subs {
		t.Run(sub.Name(), func(t *testing.T) {
			out, err := execute(t, sub.Name(), "--help")
			if err != nil {
				t.Fatalf("arena %s --help: %v", sub.Name(), err)
			}
			if !strings.Contains(out, "Usage:") || !strings.Contains(out, "arena "+sub.Name()) {
				t.Errorf("arena %s --help has no usage line:\n%s", sub.Name(), out)
			}
			if sub.Short != "" && !strings.Contains(out, strings.TrimSpace(firstLineOf(sub.Long, sub.Short))) {
				t.Errorf("arena %s --help does not describe the command:\n%s", sub.Name(), out)
			}
			n := 0
			sub.Flags().VisitAll(func(f *pflag.Flag) {
				n++
				if !strings.Contains(out, "--"+f.Name) {
					t.Errorf("arena %s --help does not mention --%s", sub.Name(), f.Name)
				}
				if f.Shorthand != "" && !strings.Contains(out, "-"+f.Shorthand+", --"+f.Name) {
					t.Errorf("arena %s --help does not mention -%s", sub.Name(), f.Shorthand)
				}
			})
			if !strings.Contains(out, "--help") {
				t.Errorf("arena %s --help does not mention --help", sub.Name())
			}
			t.Logf("%s: %d flags", sub.Name(), n)
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
	for _, name := range []string{"run", "verify", "build"} {
		sub := findSub(t, name)
		for flag, def := range map[string]string{"server-cpus": "1", "client-cpus": "0", "heap": "512"} {
			f := sub.Flags().Lookup(flag)
			if f == nil {
				t.Errorf("%s has no --%s", name, flag)
				continue
			}
			if f.DefValue != def {
				t.Errorf("%s --%s defaults to %q, want %q", name, flag, f.DefValue, def)
			}
		}
	}
}

func findSub(t *testing.T, name string) *cobra.Command {
	t.Helper()
	for _, c := range newRoot().Commands() {
		if c.Name() == name {
			return c
		}
	}
	t.Fatalf("no subcommand %s", name)
	return nil
}
