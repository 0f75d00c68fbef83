package place

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/k8s"
	"github.com/arena-lab/arena/internal/k8s/k8stest"
)

// agentOn serves a real agent holding secret on ip:port, as `arena agent` serves it (TLS
// with the secret's key), until the test ends.
func agentOn(t *testing.T, ip string, port int, name, secret string) {
	t.Helper()
	raw, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		t.Fatal(err)
	}
	ln, err := agent.Listen(raw, secret)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: (&agent.Server{Self: agent.Self(name), Secret: secret}).Handler()}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("agent %s: close: %v", name, err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("agent %s: serve: %v", name, err)
		}
	})
}

// TestKubernetesPlacesTheRun: the placement creates the server pod and the load agents' Job
// on the cluster (client-go's fake, with a test Job controller and kubelet giving the pods
// loopback addresses where real agents answer), greets the server agent, splits its cores
// between the lab and the contender, orders the load agents by index, and leaves nothing on
// the cluster once stopped.
func TestKubernetesPlacesTheRun(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	secret, err := agent.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	agentOn(t, "127.0.0.2", port, "server", secret)
	agentOn(t, "127.0.0.3", port, "load-0", secret)
	agentOn(t, "127.0.0.4", port, "load-1", secret)

	client := fake.NewSimpleClientset()
	(&k8stest.Cluster{Client: client, Kubelet: func(p *corev1.Pod) *corev1.PodStatus {
		if p.Labels[k8s.LabelRole] == k8s.RoleServer {
			return k8stest.Running("127.0.0.2")
		}
		i, _ := strconv.Atoi(p.Labels[k8s.IndexKey])
		return k8stest.Running("127.0.0." + strconv.Itoa(3+i))
	}}).Start(t)

	var progress bytes.Buffer
	p := Kubernetes{Client: client, Progress: &progress, Options: k8s.Options{Image: "arena:test", Agents: 2, RunID: "t2", Port: port, Secret: secret,
		ServerCPUs: 2, AgentCPUs: 1, ServerMemoryMiB: 1024, AgentMemoryMiB: 256}}
	if !p.Remote() {
		t.Error("Kubernetes: want a server agent to carry the run out")
	}
	placed, err := p.Open(context.Background(), nil)
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	rm := placed.Server
	want := []string{"127.0.0.3:" + strconv.Itoa(port), "127.0.0.4:" + strconv.Itoa(port)}
	if placed.Agents != nil || strings.Join(rm.LoadAddrs, ",") != strings.Join(want, ",") || rm.Address != "127.0.0.2" {
		t.Errorf("load agents %v and contender address %s; want %v and 127.0.0.2", rm.LoadAddrs, rm.Address, want)
	}
	if rm.Agent.Hello().Name != "server" || rm.LabCPUs == "" || rm.CPUs == "" || rm.LabCPUs == rm.CPUs {
		t.Errorf("server agent %q, lab on CPU %q, contender on CPU %q", rm.Agent.Hello().Name, rm.LabCPUs, rm.CPUs)
	}
	placed.Stop()
	sel := metav1.ListOptions{LabelSelector: "arena.dev/run=t2"}
	pods, _ := client.CoreV1().Pods("arena").List(context.Background(), sel)
	jobs, _ := client.BatchV1().Jobs("arena").List(context.Background(), sel)
	if len(pods.Items)+len(jobs.Items) != 0 {
		t.Errorf("after stop: %d pods and %d jobs of the run left", len(pods.Items), len(jobs.Items))
	}
}
