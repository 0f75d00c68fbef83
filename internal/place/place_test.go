package place

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/launch"
	"github.com/arena-lab/arena/internal/load"
)

// testLab is a lab's CPUs, all a placement reads of it.
func testLab() *lab.Lab { return &lab.Lab{ServerCPUs: []int{1}, ClientCPUs: []int{0}} }

func resolverOf(ld load.Load) agent.Resolver {
	return func(agent.Job) (load.Load, error) { return ld, nil }
}

// target answers every request with "ok". A write that fails is a client gone (the load
// stops its connections at the run's end), no failure of the test.
func target(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) }))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// agentAt serves a real load agent holding secret on loopback, as `arena agent` serves it
// (TLS with the secret's key), until the test ends.
func agentAt(t *testing.T, name, secret string) string {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := agent.Listen(raw, secret)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: (&agent.Server{Self: agent.Self(name), Secret: secret}).Handler()}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// TestInProcessRunsAFleet: two agents in this process deal an open loop out between them,
// and what they return adds up to every hit of its schedule; the topology names both.
func TestInProcessRunsAFleet(t *testing.T) {
	ld := load.OpenLoop{Duration: 500 * time.Millisecond, Timeout: time.Second, Streams: []load.Stream{
		{Tag: "instant", Request: load.Request{Path: "/"}, Pacer: load.PerSecond(200)}}}
	placed, err := InProcess{Agents: 2, Resolve: resolverOf(ld)}.Open(context.Background(), testLab())
	if err != nil {
		t.Fatal(err)
	}
	defer placed.Stop()
	a := placed.Agents
	if placed.Server != nil || a == nil || len(a.Fleet.Runners) != 2 || len(a.Topology.Agents) != 2 || a.Topology.Launcher != "in-process" || a.ServerAddress != "" {
		t.Fatalf("placed %+v, agents %+v: want two in-process agents and no server agent", placed, a)
	}
	if a.Topology.Agents[0].CPUs != "0" || a.Topology.Server.CPUs != "1" {
		t.Errorf("topology %+v: want the agents on the lab's client CPUs, the server on its server CPUs", a.Topology)
	}
	job := agent.Job{Target: target(t), Interval: 250 * time.Millisecond, Warmup: -1}
	shares, start, err := a.Fleet.Run(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	m, err := agent.Merge(ld, shares, start, job.Interval)
	if err != nil {
		t.Fatal(err)
	}
	if tag := m.Tags[0]; tag.Scheduled == 0 || tag.Completed != tag.Scheduled || len(shares) != 2 {
		t.Errorf("%d shares, scheduled %d, completed %d: want every hit of the schedule, from two agents", len(shares), tag.Scheduled, tag.Completed)
	}
}

// With no agents the lab drives the load itself; a count past the bound is refused.
func TestInProcessCounts(t *testing.T) {
	placed, err := InProcess{}.Open(context.Background(), nil)
	if err != nil || placed.Agents != nil || placed.Server != nil {
		t.Errorf("no agents: %+v, %v; want nothing placed", placed, err)
	}
	placed.Stop()
	for _, n := range []int{-1, MaxInProcess + 1} {
		if _, err := (InProcess{Agents: n}).Open(context.Background(), testLab()); err == nil || !strings.Contains(err.Error(), "give 1 to 64") {
			t.Errorf("--agents %d: %v, want it refused", n, err)
		}
	}
}

// TestRunningGreetsAgents: agents already running are greeted with the run's secret and
// recorded; a wrong secret, an address not of this host or none at all are refused.
func TestRunningGreetsAgents(t *testing.T) {
	secret, err := agent.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	addrs := []string{agentAt(t, "a", secret), agentAt(t, "b", secret)}
	placed, err := Running{Addrs: addrs, ServerAddress: "127.0.0.1", Secret: secret}.Open(context.Background(), testLab())
	if err != nil {
		t.Fatal(err)
	}
	placed.Stop() // not this run's to stop: nothing happens
	a := placed.Agents
	if a == nil || len(a.Fleet.Runners) != 2 || a.Topology.Agents[1].Name != "b" || a.Topology.Agents[1].Addr != addrs[1] || a.ServerAddress != "127.0.0.1" {
		t.Fatalf("agents %+v: want a and b, reaching the contender on 127.0.0.1", a)
	}
	other, _ := agent.NewSecret()
	for _, c := range []struct {
		p    Running
		want string
	}{
		{Running{Addrs: addrs, ServerAddress: "127.0.0.1", Secret: other}, "not this run's"},
		{Running{Addrs: addrs, ServerAddress: "192.0.2.1", Secret: secret}, "no address of this host"},
		{Running{Addrs: addrs, Secret: secret}, "needs --server-address"},
		{Running{Addrs: []string{"nowhere"}, ServerAddress: "127.0.0.1", Secret: secret}, "give host:port"},
	} {
		if _, err := c.p.Open(context.Background(), testLab()); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.p, err, c.want)
		}
	}
}

// A hosts file places a server agent only when its server host has an ssh destination; a
// lab here refuses a server address that is not this host's before starting anything.
func TestSSHChecksTheServerHost(t *testing.T) {
	here := SSH{Hosts: &launch.Hosts{Server: launch.ServerHost{Name: "server", Address: "192.0.2.1"}}, File: "hosts.toml"}
	if here.Remote() {
		t.Error("a server host without ssh: want the lab here")
	}
	if _, err := here.Open(context.Background(), testLab()); err == nil || !strings.Contains(err.Error(), "hosts.toml: server address") {
		t.Errorf("server address of another host: %v, want it refused", err)
	}
	there := SSH{Hosts: &launch.Hosts{Server: launch.ServerHost{Name: "server", Address: "192.0.2.1", SSH: "user@server"}}}
	if !there.Remote() {
		t.Error("a server host with ssh: want a server agent there")
	}
}

func TestPlacedStopsOnce(t *testing.T) {
	(*Placed)(nil).Stop()
	n := 0
	p := &Placed{stop: func() { n++ }}
	p.Stop()
	p.Stop()
	if n != 1 {
		t.Errorf("stopped %d times, want once", n)
	}
}

// TestCheckLocalAddress: the server address is one address of this host, never all of its
// interfaces (issue 34, 8: 0.0.0.0 was accepted and the contender opened to every network).
func TestCheckLocalAddress(t *testing.T) {
	if err := CheckLocalAddress("127.0.0.1"); err != nil {
		t.Errorf("127.0.0.1: %v", err)
	}
	for _, bad := range []string{"0.0.0.0", "::", "224.0.0.1", "localhost", "192.0.2.77"} {
		if err := CheckLocalAddress(bad); err == nil {
			t.Errorf("%s was taken for a server address", bad)
		}
	}
}
