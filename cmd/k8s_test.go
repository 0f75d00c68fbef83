package cmd

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/k8s"
)

// arena k8s manifests writes the objects k8s.YAML makes for its flags on stdout, and
// nothing on stderr.
func TestK8sManifests(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "secret")
	const secret = "cmdtest-secret-cmdtest-secret-cmdtest-secret"
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o := execute(t, "k8s", "manifests", "--agents", "2", "--image", "arena:test", "--run-id", "cmdtest",
		"--server-cores", "3", "--agent-node", "arena.dev/pool=load", "--secret-file", secretFile)
	if o.err != nil || o.stderr != "" {
		t.Fatalf("arena k8s manifests: %v, stderr %q", o.err, o.stderr)
	}
	want, err := k8s.YAML(k8s.Options{Image: "arena:test", Agents: 2, RunID: "cmdtest", Secret: secret,
		ServerCPUs: 3, AgentCPUs: k8s.DefaultAgentCPUs,
		ServerMemoryMiB: k8s.DefaultServerMemoryMiB, AgentMemoryMiB: k8s.DefaultAgentMemoryMiB,
		AgentNodeSelector: map[string]string{"arena.dev/pool": "load"}})
	if err != nil {
		t.Fatal(err)
	}
	if o.stdout != string(want) {
		t.Errorf("stdout:\n%s\nwant:\n%s", o.stdout, want)
	}
	for _, s := range []string{"completions: 2", `cpu: "3"`, "arena.dev/pool: load", "name: arena-cmdtest-server", "secret: " + secret, "kind: NetworkPolicy", "kind: Role"} {
		if !strings.Contains(o.stdout, s) {
			t.Errorf("stdout lacks %q", s)
		}
	}
	// Without a secret named, each call makes one of its own.
	t.Setenv("ARENA_AGENT_SECRET", "")
	a := execute(t, "k8s", "manifests", "--image", "arena:test", "--run-id", "cmdtest")
	b := execute(t, "k8s", "manifests", "--image", "arena:test", "--run-id", "cmdtest")
	if a.err != nil || b.err != nil || a.stdout == b.stdout || !regexp.MustCompile(`\n  secret: [0-9a-f]{64}\n`).MatchString(a.stdout) {
		t.Errorf("manifests without a secret: %v %v; want a fresh 64-hex-digit secret each time", a.err, b.err)
	}
}

// Without --run-id the run is named after the clock, in UTC.
func TestK8sManifestsRunIDFromClock(t *testing.T) {
	var f k8sFlags
	f.o.RunID = ""
	at := time.Date(2026, 11, 25, 10, 15, 0, 0, time.FixedZone("CET", 3600))
	if got := f.options(at).RunID; got != "20261125-091500" {
		t.Errorf("run id %q, want 20261125-091500", got)
	}
}

// Bad flags are refused with what to give, nothing on stdout, and arena's status for an
// error.
func TestK8sManifestsRefused(t *testing.T) {
	refused(t, []string{"k8s", "manifests", "--agents", "0", "--image", "arena:test"}, "agents 0: give at least 1")
	refused(t, []string{"k8s", "manifests", "--agents", "2"}, "name the agent image")
	refused(t, []string{"k8s", "manifests", "--image", "arena:test", "--agent-cores", "0"}, "agent cores 0")
	refused(t, []string{"k8s", "manifests", "--image", "arena:test", "--run-id", "Not_OK"}, `run id "Not_OK"`)
	refused(t, []string{"k8s", "manifests", "--image", "arena:test", "--server-node", "bad key=x"}, `server node selector key "bad key"`)
	refused(t, []string{"k8s", "manifests", "--agents", "two"}, `invalid argument "two"`)

	var stdout, stderr bytes.Buffer
	if code := runArena(context.Background(), []string{"k8s", "manifests", "--agents", "0", "--image", "arena:test"}, &stdout, &stderr); code != 1 {
		t.Errorf("exit status %d, want 1", code)
	}
	if stdout.Len() != 0 || !strings.HasPrefix(stderr.String(), "arena: agents 0") {
		t.Errorf("stdout %q, stderr %q", stdout.String(), stderr.String())
	}
}
