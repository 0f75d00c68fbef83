package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/results"
)

// An agent refuses a secret too short, one in a file others may read, and a role it does not
// know; the secret never comes from its arguments.
func TestAgentRefusesToServeUnguarded(t *testing.T) {
	t.Setenv(agent.SecretEnv, "")
	refused(t, []string{"agent", "--listen", "127.0.0.1:0", "--role", "boss"}, `--role "boss"`)
	refused(t, []string{"agent", "--listen", "127.0.0.1:0", "--server-address", "0.0.0.0"}, "not 0.0.0.0")
	t.Setenv(agent.SecretEnv, "short")
	refused(t, []string{"agent", "--listen", "0.0.0.0:0"}, "at least 32")
	t.Setenv(agent.SecretEnv, "")
	open := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(open, []byte(strings.Repeat("a", 64)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	refused(t, []string{"agent", "--listen", "127.0.0.1:0", "--role", "server", "--secret-file", open}, "chmod 600")
}

// lockedBuffer is a bytes.Buffer an agent's goroutine writes while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAgentWithoutASecretMakesOne: a server agent given no secret (issue 34, 2) does not
// serve without one: it makes one in a file of mode 0600, says where, and answers a call
// without it with 401.
func TestAgentWithoutASecretMakesOne(t *testing.T) {
	t.Setenv(agent.SecretEnv, "")
	cmd := newAgentCmd()
	var stdout, stderr lockedBuffer
	cmd.SetOut(&stdout)
	cmd.SetErr(&stderr)
	cmd.SetIn(strings.NewReader(""))
	cmd.SetArgs([]string{"--listen", "127.0.0.1:0", "--role", "server", "--server-address", "127.0.0.1:1"})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the agent: %v", err)
		}
	}()
	made := regexp.MustCompile(`made the run's secret in (\S+) `)
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stdout.String(), "listening on") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	m := made.FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("the agent said nothing of a secret it made:\n%s\n%s", stdout.String(), stderr.String())
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(m[1])) })
	st, err := os.Stat(m[1])
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the secret file %s: %v %v, want mode 0600", m[1], st, err)
	}
	secret, err := agent.ReadSecret(m[1])
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSpace(stdout.String()[strings.LastIndex(stdout.String(), " ")+1:])
	if _, err := agent.Dial(ctx, addr, secret); err != nil {
		t.Errorf("the coordinator holding the made secret: %v", err)
	}
	if _, err := agent.Dial(ctx, addr, strings.Repeat("f", 64)); err == nil {
		t.Error("a coordinator with another secret was answered")
	}
}

// TestRunSpecTravels: the flags build one spec, which reaches a server agent through JSON as
// it left; the coordinator's own choices (where agents and results are) are not in it.
func TestRunSpecTravels(t *testing.T) {
	var rf runFlags
	cmd := &cobra.Command{}
	rf.register(cmd)
	if err := cmd.ParseFlags([]string{"--contenders", "a,b", "--quick", "--env", "B=2", "--env", "A=1", "--hosts", "h.toml", "--out", "x",
		"--repeat", "3", "--duration", "1500ms", "--heap", "1024", "--levels", "sleep-c200", "--profile"}); err != nil {
		t.Fatal(err)
	}
	spec := rf.specOf("sleep")
	want := results.RunSpec{Scenario: "sleep", Quick: true, DurationS: 1.5, Levels: []string{"sleep-c200"}, Contenders: []string{"a", "b"},
		Repeat: 3, Env: map[string]string{"A": "1", "B": "2"}, Profile: true, ServerCPUs: "1", ClientCPUs: "0", HeapMB: 1024}
	if !reflect.DeepEqual(spec, want) {
		t.Fatalf("the flags' spec\n %+v, want\n %+v", spec, want)
	}
	raw, err := json.Marshal(agent.RunRequest{Spec: spec, LoadAgents: []string{"10.0.0.2:7600"}, ServerAddress: "10.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	var got agent.RunRequest
	if err := json.Unmarshal(raw, &got); err != nil || !reflect.DeepEqual(got.Spec, spec) {
		t.Errorf("the spec after JSON %+v (%v), want %+v", got.Spec, err, spec)
	}
	for _, kept := range []string{"h.toml", `"out"`, "hosts"} {
		if strings.Contains(string(raw), kept) {
			t.Errorf("the request %s holds the coordinator's own %s", raw, kept)
		}
	}
}

// TestFlagsPickOnePlacement: each way of placing agents is one placement, and two at once
// are refused before anything starts.
func TestFlagsPickOnePlacement(t *testing.T) {
	secret, err := agent.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(agent.SecretEnv, secret)
	for _, c := range []struct {
		f    agentFlags
		want string
	}{
		{agentFlags{}, "place.InProcess"},
		{agentFlags{inProcess: 3}, "place.InProcess"},
		{agentFlags{addrs: []string{"10.0.0.2:7600"}, serverAddress: "10.0.0.1"}, "place.Running"},
		{agentFlags{kubernetes: true, inProcess: 2}, "place.Kubernetes"},
		{agentFlags{processes: 2}, "place.Processes"},
	} {
		pl, err := c.f.placement(io.Discard)
		if got := fmt.Sprintf("%T", pl); err != nil || got != c.want {
			t.Errorf("%+v: %s (%v), want %s", c.f, got, err, c.want)
		}
	}
	for _, c := range []struct {
		f    agentFlags
		want string
	}{
		{agentFlags{inProcess: 2, addrs: []string{"10.0.0.2:7600"}}, "give one"},
		{agentFlags{kubernetes: true, hosts: "h.toml"}, "--kubernetes places its own agents"},
		{agentFlags{processes: 2, inProcess: 2}, "give one"},
		{agentFlags{kubernetes: true, processes: 2}, "--kubernetes places its own agents"},
		{agentFlags{serverAddress: "10.0.0.1"}, "--server-address goes with --agent-addrs"},
		{agentFlags{hosts: "/nonexistent/hosts.toml"}, "hosts.toml"},
	} {
		if _, err := c.f.placement(io.Discard); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.f, err, c.want)
		}
	}
}
