package agent

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// countingListener is a server that accepts and counts connections on 127.0.0.1: a probe
// aimed at it got through when it counts any.
func countingListener(t *testing.T) (addr string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int64{}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().String(), accepted
}

// TestServerAgentRunHeldToTheAllowList replays the probe of issue 34 (1): a server agent
// started with --server-address 127.0.0.2 asked to drive 127.0.0.1:PORT, and the spec's
// other ways out (an address that is not its URL's, a name, a pid, address variables, a
// server address of all interfaces, load agents by name). Each is refused with a 400 that
// says why, before the lab is handed the run, and nothing reaches the listener.
func TestServerAgentRunHeldToTheAllowList(t *testing.T) {
	victim, accepted := countingListener(t)
	var ran atomic.Int64
	s := &Server{Self: Self("srv"), Secret: testSecret, Targets: []string{"127.0.0.2"}, RunsDir: t.TempDir(),
		Run: func(ctx context.Context, req RunRequest, runsDir string, out io.Writer) (string, error) {
			ran.Add(1)
			return results.RunComplete, nil
		}}
	url := serveTLS(t, s).URL
	target := func(u, addr string) *results.Target { return &results.Target{Name: "t", URL: u, Addr: addr} }
	cases := []struct {
		name, want string
		req        RunRequest
	}{
		{"a target off the allow-list", "sends load only to 127.0.0.2",
			RunRequest{Spec: results.RunSpec{ID: "r", Target: target("http://"+victim, victim)}}},
		{"an address that is not its URL's", "not its URL's",
			RunRequest{Spec: results.RunSpec{ID: "r", Target: target("http://127.0.0.2:80", victim)}}},
		{"a host name in the URL", "not a name",
			RunRequest{Spec: results.RunSpec{ID: "r", Target: target("http://example.com:80", "127.0.0.2:80")}}},
		{"a pid to probe", "--allow-target-probe",
			RunRequest{Spec: results.RunSpec{ID: "r", Target: &results.Target{Name: "t", URL: "http://127.0.0.2:80", Addr: "127.0.0.2:80", Pid: 1}}}},
		{"a cgroup to probe", "--allow-target-probe",
			RunRequest{Spec: results.RunSpec{ID: "r", Target: &results.Target{Name: "t", URL: "http://127.0.0.2:80", Addr: "127.0.0.2:80", Cgroup: "/sys/fs/cgroup"}}}},
		{"BIND_ADDRESS of all interfaces", "BIND_ADDRESS",
			RunRequest{Spec: results.RunSpec{ID: "r", Env: map[string]string{"BIND_ADDRESS": "0.0.0.0"}}}},
		{"a database of the sender's", "DB_URL",
			RunRequest{Spec: results.RunSpec{ID: "r", Env: map[string]string{"DB_URL": "postgres://" + victim}}}},
		{"a downstream of the sender's", "DOWNSTREAM_URL",
			RunRequest{Spec: results.RunSpec{ID: "r", Env: map[string]string{"DOWNSTREAM_URL": "http://" + victim}}}},
		{"pprof off loopback", "PPROF_ADDR",
			RunRequest{Spec: results.RunSpec{ID: "r", Env: map[string]string{"PPROF_ADDR": "0.0.0.0:6060"}}}},
		{"server address 0.0.0.0", "server address",
			RunRequest{Spec: results.RunSpec{ID: "r"}, LoadAgents: []string{"127.0.0.3:7600"}, ServerAddress: "0.0.0.0"}},
		{"a server address not its own", "listens only on 127.0.0.2",
			RunRequest{Spec: results.RunSpec{ID: "r"}, LoadAgents: []string{"127.0.0.3:7600"}, ServerAddress: "127.0.0.1"}},
		{"a load agent by name", "give IP:port",
			RunRequest{Spec: results.RunSpec{ID: "r"}, LoadAgents: []string{"agents.example:7600"}, ServerAddress: "127.0.0.2"}},
	}
	for _, c := range cases {
		code, body := call(t, url, "POST", "/v1/run", testSecret, c.req)
		if code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want 400 saying %q", c.name, code, body, c.want)
		}
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("the lab was handed %d refused run(s)", n)
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connection(s) reached %s", n, victim)
	}
	// The same target on the allow-list, its port pinned, runs; the pid once allowed too.
	s.Targets, s.AllowTargetProbe = []string{victim}, true
	ok := RunRequest{Spec: results.RunSpec{ID: "r", Target: &results.Target{Name: "t", URL: "http://" + victim, Addr: victim, Pid: 1}}}
	if code, body := call(t, url, "POST", "/v1/run", testSecret, ok); code != http.StatusOK || ran.Load() != 1 {
		t.Errorf("a target on the allow-list: %d %s, %d run(s)", code, body, ran.Load())
	}
}

// TestLoadAgentPinsThePort replays issue 34 (7): a load agent sends load to another port of
// an allowed IP, or anywhere when started with no --server-address (every loopback port
// passed). Both are refused and nothing reaches the listener.
func TestLoadAgentPinsThePort(t *testing.T) {
	victim, accepted := countingListener(t)
	_, port, _ := net.SplitHostPort(victim)
	for _, c := range []struct {
		targets []string
		want    string
	}{
		{[]string{"127.0.0.1:1"}, "sends load only to 127.0.0.1:1"},
		{nil, "sends load nowhere"},
		{[]string{"127.0.0.2:" + port}, "sends load only to"},
	} {
		url := serveTLS(t, &Server{Self: Self("load"), Secret: testSecret, Targets: c.targets, Resolve: resolverOf(openLoop())}).URL
		j := validJob()
		j.Target = victim
		if code, body := call(t, url, "POST", "/v1/load", testSecret, j); code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("targets %v: %d %s; want 400 saying %q", c.targets, code, body, c.want)
		}
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connection(s) reached %s", n, victim)
	}
	s := &Server{Targets: []string{"127.0.0.1:" + port}}
	if err := s.checkTarget(context.Background(), victim); err != nil {
		t.Errorf("the pinned port itself: %v", err)
	}
}

// TestParseAllowed: an allowed address is an IP or a name, with a port or not; never all
// interfaces, a multicast group, or something that is no address.
func TestParseAllowed(t *testing.T) {
	for raw, want := range map[string]Allowed{
		"10.0.0.1": {"10.0.0.1", 0}, "10.0.0.1:8080": {"10.0.0.1", 8080}, "[::1]:80": {"::1", 80},
		"arena-x-server": {"arena-x-server", 0}, "server.lab:9000": {"server.lab", 9000},
	} {
		if got, err := ParseAllowed(raw); err != nil || got != want {
			t.Errorf("%s: %+v %v, want %+v", raw, got, err, want)
		}
	}
	for _, bad := range []string{"0.0.0.0", "[::]:80", "224.0.0.1", "10.0.0.1:0", "10.0.0.1:70000", "", "a b", "user@host"} {
		if _, err := ParseAllowed(bad); err == nil {
			t.Errorf("%q was allowed", bad)
		}
	}
}
