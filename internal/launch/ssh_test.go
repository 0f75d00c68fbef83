package launch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/netns"
)

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// arenaBinary builds the real arena binary once for the tests that start agents.
func arenaBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "arena-launch-test-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command("go", "build", "-o", filepath.Join(buildDir, "arena"), "github.com/arena-lab/arena").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "arena")
}

// hello is the part of the agent's /v1/hello these tests read.
type hello struct {
	Protocol int    `json:"protocol"`
	Name     string `json:"name"`
	CPUs     string `json:"cpus"`
	Pid      int    `json:"pid"`
}

// client has no proxy (the tests talk only to the namespaces' addresses) and pins the key of
// testSecret, as the coordinator does.
var client = func() *http.Client {
	cfg, err := agent.ClientTLS(testSecret)
	if err != nil {
		panic(err)
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil, TLSClientConfig: cfg}}
}()

// testSecret is the secret the test's launcher hands its agents.
const testSecret = "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7"

// helloStatus is the status of GET /v1/hello with secret ("" for none).
func helloStatus(t *testing.T, addr, secret string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, "https://"+addr+"/v1/hello", nil)
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func getHello(t *testing.T, addr string) hello {
	t.Helper()
	if resp := helloStatus(t, addr, ""); resp.StatusCode != http.StatusUnauthorized {
		resp.Body.Close()
		t.Fatalf("GET %s/v1/hello without the secret: %s, want 401", addr, resp.Status)
	}
	resp := helloStatus(t, addr, testSecret)
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s/v1/hello: %s", addr, resp.Status)
	}
	var h hello
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
		t.Fatal(err)
	}
	return h
}

// cluster is two client hosts with sshd each, and a launcher for them.
type cluster struct {
	topo    *netns.Topology
	ssh     *netns.SSH
	l       *SSHLauncher
	clients []ClientHost
	log     *syncBuffer
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	netns.Require(t)
	bin := arenaBinary(t)
	topo, err := netns.Up("c1", "c2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := topo.Down(); err != nil {
			t.Error(err)
		}
	})
	s, err := topo.StartSSHD(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	second := "0"
	if runtime.NumCPU() > 1 {
		second = "1"
	}
	// The way `arena run --hosts` gets here: a hosts file naming the topology's ssh_config,
	// the coordinator's own host (the gateway) as server, and the namespaces as clients.
	path := filepath.Join(s.Dir, "hosts.toml")
	err = WriteHosts(path, &Hosts{
		SSHConfig: s.ConfigPath,
		Server:    ServerHost{Name: "server", Address: topo.GatewayIP, CPUs: "0"},
		Clients: []ClientHost{
			{Name: "c1", SSH: "c1", Address: topo.Host("c1").IP, CPUs: "0"},
			{Name: "c2", SSH: "c2", Address: topo.Host("c2").IP, CPUs: second},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	hosts, err := ParseHosts(path)
	if err != nil {
		t.Fatal(err)
	}
	log := &syncBuffer{}
	return &cluster{
		topo: topo,
		ssh:  s,
		// Folders of its own: another test run on this machine may start agents meanwhile.
		l:       &SSHLauncher{SSH: hosts.SSHArgs(), Binary: bin, Stderr: log, Secret: testSecret, ServerAddress: topo.GatewayIP, dirPrefix: testDirPrefix},
		clients: hosts.Clients,
		log:     log,
	}
}

// assertClean checks that no process but sshd runs in any client namespace and that no
// agent folder made since the test began is left.
func (c *cluster) assertClean(t *testing.T, dirsBefore map[string]bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for _, h := range c.topo.Hosts {
		for {
			var others []string
			pids, err := c.topo.Pids(h.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range pids {
				comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p))
				if name := strings.TrimSpace(string(comm)); name != "sshd" && name != "" {
					others = append(others, fmt.Sprintf("%d %s", p, name))
				}
			}
			if len(others) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("left running in %s: %v", h.Name, others)
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for d := range agentDirs(t) {
		if !dirsBefore[d] {
			t.Errorf("agent folder %s left", d)
		}
	}
}

var testDirPrefix = fmt.Sprintf("/tmp/arena-agent-t%d-", os.Getpid())

func agentDirs(t *testing.T) map[string]bool {
	t.Helper()
	m, err := filepath.Glob(testDirPrefix + "*")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, d := range m {
		out[d] = true
	}
	return out
}

func TestSSHLauncher(t *testing.T) {
	c := newCluster(t)

	t.Run("start, pinned, stop", func(t *testing.T) {
		before := agentDirs(t)
		began := time.Now()
		remotes, err := c.l.Start(context.Background(), c.clients)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("started in %s", time.Since(began))
		for i, r := range remotes {
			want := c.clients[i]
			if r.Name != want.Name || r.Addr != want.Addr() || r.CPUs != want.CPUs {
				t.Errorf("agent %+v for client %+v", r.Agent, want)
			}
			h := getHello(t, r.Addr)
			if h.Protocol != 1 || h.Name != want.Name || h.Pid != r.PID || h.CPUs != want.CPUs {
				t.Errorf("hello %+v from %s (pid %d, cpus %s)", h, r.Addr, r.PID, want.CPUs)
			}
			status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", h.Pid))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(status), "Cpus_allowed_list:\t"+want.CPUs+"\n") {
				t.Errorf("agent %s is not pinned to %s:\n%s", r.Name, want.CPUs, status)
			}
			pids, _ := c.topo.Pids(want.Name)
			if !containsInt(pids, h.Pid) {
				t.Errorf("agent %s (pid %d) runs outside its host's namespace (%v)", r.Name, h.Pid, pids)
			}
			if _, err := os.Stat(filepath.Join(r.Dir, "arena")); err != nil {
				t.Errorf("no binary in %s: %v", r.Dir, err)
			}
		}
		began = time.Now()
		for _, r := range remotes {
			if err := r.Stop(); err != nil {
				t.Error(err)
			}
			if err := r.Stop(); err != nil {
				t.Errorf("second Stop: %v", err)
			}
			select {
			case <-r.Done():
			default:
				t.Errorf("agent %s's session still open after Stop", r.Name)
			}
		}
		t.Logf("stopped in %s", time.Since(began))
		c.assertClean(t, before)
		if !strings.Contains(c.log.String(), "[c1] ") {
			t.Errorf("no agent stderr passed on, prefixed with its name: %q", c.log.String())
		}
	})

	t.Run("cancel while running", func(t *testing.T) {
		before := agentDirs(t)
		ctx, cancel := context.WithCancel(context.Background())
		remotes, err := c.l.Start(ctx, c.clients)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		for _, r := range remotes {
			_ = r.Stop() // returns once the stop that cancel began has finished
		}
		c.assertClean(t, before)
	})

	t.Run("cancel while starting", func(t *testing.T) {
		before := agentDirs(t)
		for _, after := range []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, 600 * time.Millisecond, 900 * time.Millisecond} {
			ctx, cancel := context.WithTimeout(context.Background(), after)
			remotes, err := c.l.Start(ctx, c.clients)
			cancel()
			t.Logf("cancelled after %s: %v", after, err)
			if err == nil {
				// Quicker than the cancel: Start's ctx stops them just the same.
				for _, r := range remotes {
					_ = r.Stop()
				}
			} else if !strings.Contains(err.Error(), "context deadline exceeded") {
				t.Errorf("cancelled after %s: %v", after, err)
			}
			c.assertClean(t, before)
		}
	})

	t.Run("an agent that dies shows in Done", func(t *testing.T) {
		before := agentDirs(t)
		remotes, err := c.l.Start(context.Background(), c.clients[:1])
		if err != nil {
			t.Fatal(err)
		}
		r := remotes[0]
		if err := syscall.Kill(r.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		select {
		case <-r.Done():
			if r.Err() == nil {
				t.Error("a killed agent's session ended with no error")
			}
			t.Log(r.Err())
		case <-time.After(10 * time.Second):
			t.Fatal("Done not closed after the agent died")
		}
		if err := r.Stop(); err != nil {
			t.Error(err)
		}
		c.assertClean(t, before)
	})

	t.Run("a dropped ssh session ends its agent", func(t *testing.T) {
		before := agentDirs(t)
		remotes, err := c.l.Start(context.Background(), c.clients[1:])
		if err != nil {
			t.Fatal(err)
		}
		r := remotes[0]
		if err := r.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		<-r.Done()
		deadline := time.Now().Add(5 * time.Second)
		for syscall.Kill(r.PID, 0) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("agent pid %d outlived its ssh session", r.PID)
			}
			time.Sleep(50 * time.Millisecond)
		}
		if err := r.Stop(); err != nil {
			t.Error(err)
		}
		c.assertClean(t, before)
	})

	t.Run("CPUs the host lacks", func(t *testing.T) {
		before := agentDirs(t)
		bad := append([]ClientHost{}, c.clients...)
		bad[1].CPUs = "4000"
		_, err := c.l.Start(context.Background(), bad)
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), "client c2") || !strings.Contains(err.Error(), "taskset") {
			t.Errorf("err %v", err)
		}
		c.assertClean(t, before)
	})

	t.Run("a host whose sshd is down", func(t *testing.T) {
		before := agentDirs(t)
		if err := c.ssh.Stop("c2"); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := c.ssh.Restart("c2"); err != nil {
				t.Error(err)
			}
		}()
		_, err := c.l.Start(context.Background(), c.clients)
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), "client c2 (ssh c2)") || !strings.Contains(err.Error(), "Connection refused") {
			t.Errorf("err %v", err)
		}
		if err != nil && strings.Contains(err.Error(), "client c1") {
			t.Errorf("c1 blamed too: %v", err)
		}
		c.assertClean(t, before)
	})
}

func TestStartRefusesMissingBinary(t *testing.T) {
	l := &SSHLauncher{Binary: filepath.Join(t.TempDir(), "arena")}
	if _, err := l.Start(context.Background(), []ClientHost{{Name: "x", SSH: "x", Address: "127.0.0.1", CPUs: "0", Port: 1}}); err == nil || !strings.Contains(err.Error(), "./arena build") {
		t.Errorf("err %v", err)
	}
}

// TestAgentCommandKeepsTheSecretOffTheCommandLine: the agent reads its secret from stdin,
// never from its arguments (any user of the host reads those in /proc); a load agent and a
// server agent say their role; both are held to the server's address.
func TestAgentCommandKeepsTheSecretOffTheCommandLine(t *testing.T) {
	l := &SSHLauncher{Secret: testSecret, ServerAddress: "10.0.0.1"}
	load := l.agentCommand("/tmp/d", "", ClientHost{Name: "c1", Address: "10.0.0.2", CPUs: "0", Port: 7600})
	server := l.agentCommand("/tmp/d", "", ServerHost{Name: "srv", Address: "10.0.0.1", CPUs: "1", LabCPUs: "0", Port: 7600, Root: "/lab"}.Agent())
	for _, c := range []string{load, server} {
		if strings.Contains(c, testSecret) || !strings.Contains(c, "--secret-file -") || !strings.Contains(c, "--server-address '10.0.0.1'") {
			t.Errorf("agent command %q: want the secret from stdin and the server address", c)
		}
	}
	if !strings.Contains(load, "--role load") || !strings.Contains(server, "--role server") {
		t.Errorf("roles: load %q, server %q", load, server)
	}
}

func TestQuoting(t *testing.T) {
	if got := shellQuote("a'b c"); got != `'a'\''b c'` {
		t.Errorf("shellQuote: %s", got)
	}
	for in, want := range map[string]string{
		"h":            "h:/p",
		"root@h":       "root@h:/p",
		"fd00::2":      "[fd00::2]:/p",
		"root@fd00::2": "root@[fd00::2]:/p",
		"10.0.0.1":     "10.0.0.1:/p",
	} {
		if got := scpTarget(in, "/p"); got != want {
			t.Errorf("scpTarget(%q) = %q, want %q", in, got, want)
		}
	}
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
