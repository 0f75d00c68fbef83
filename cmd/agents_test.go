package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/results"
)

// An agent refuses to listen off loopback without the run's secret, and a role it does not
// know; the secret never comes from its arguments.
func TestAgentRefusesToServeUnguarded(t *testing.T) {
	t.Setenv(agent.SecretEnv, "")
	refused(t, []string{"agent", "--listen", "0.0.0.0:0"}, "needs the run's secret")
	refused(t, []string{"agent", "--listen", "127.0.0.1:0", "--role", "boss"}, `--role "boss"`)
	t.Setenv(agent.SecretEnv, "short")
	refused(t, []string{"agent", "--listen", "0.0.0.0:0"}, "at least 32")
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
