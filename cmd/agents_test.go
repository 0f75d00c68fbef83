package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/k8s"
	"github.com/arena-lab/arena/internal/k8s/k8stest"
	"github.com/arena-lab/arena/internal/results"
)

// agentAt serves a real agent on ip:port until the test ends.
func agentAt(t *testing.T, ip string, port int, name string) {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: (&agent.Server{Self: agent.Self(name)}).Handler()}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// An agent refuses to listen off loopback without the run's secret, and a role it does not
// know; the secret never comes from its arguments.
func TestAgentRefusesToServeUnguarded(t *testing.T) {
	t.Setenv(agent.SecretEnv, "")
	refused(t, []string{"agent", "--listen", "0.0.0.0:0"}, "needs the run's secret")
	refused(t, []string{"agent", "--listen", "127.0.0.1:0", "--role", "boss"}, `--role "boss"`)
	t.Setenv(agent.SecretEnv, "short")
	refused(t, []string{"agent", "--listen", "0.0.0.0:0"}, "at least 32")
}

// TestKubernetesPlacesTheRun: --kubernetes creates the server pod and the load agents' Job
// on the cluster (client-go's fake, with a test Job controller and kubelet giving the pods
// loopback addresses where real agents answer), greets the server agent, splits its cores
// between the lab and the contender, orders the load agents by index, and leaves nothing
// on the cluster once stopped.
func TestKubernetesPlacesTheRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	agentAt(t, "127.0.0.2", port, "server")
	agentAt(t, "127.0.0.3", port, "load-0")
	agentAt(t, "127.0.0.4", port, "load-1")

	client := fake.NewSimpleClientset()
	(&k8stest.Cluster{Client: client, Kubelet: func(p *corev1.Pod) *corev1.PodStatus {
		if p.Labels[k8s.LabelRole] == k8s.RoleServer {
			return k8stest.Running("127.0.0.2")
		}
		i, _ := strconv.Atoi(p.Labels[k8s.IndexKey])
		return k8stest.Running("127.0.0." + strconv.Itoa(3+i))
	}}).Start(t)

	f := &agentFlags{kubernetes: true, inProcess: 2, k8s: k8s.Options{Image: "arena:test", RunID: "t2", Port: port, ServerCPUs: 2, AgentCPUs: 1, ServerMemoryMiB: 1024, AgentMemoryMiB: 256}}
	var progress bytes.Buffer
	rm, err := f.onKubernetes(context.Background(), &progress, client)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	want := []string{"127.0.0.3:" + strconv.Itoa(port), "127.0.0.4:" + strconv.Itoa(port)}
	if strings.Join(rm.loadAddrs, ",") != strings.Join(want, ",") || rm.address != "127.0.0.2" {
		t.Errorf("load agents %v and contender address %s; want %v and 127.0.0.2", rm.loadAddrs, rm.address, want)
	}
	if rm.server.Hello().Name != "server" || rm.labCPUs == "" || rm.cpus == "" || rm.labCPUs == rm.cpus {
		t.Errorf("server agent %q, lab on CPU %q, contender on CPU %q", rm.server.Hello().Name, rm.labCPUs, rm.cpus)
	}
	rm.stop()
	sel := metav1.ListOptions{LabelSelector: "arena.dev/run=t2"}
	pods, _ := client.CoreV1().Pods("arena").List(context.Background(), sel)
	jobs, _ := client.BatchV1().Jobs("arena").List(context.Background(), sel)
	if len(pods.Items)+len(jobs.Items) != 0 {
		t.Errorf("after stop: %d pods and %d jobs of the run left", len(pods.Items), len(jobs.Items))
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
