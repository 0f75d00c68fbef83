package netns

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func up(t *testing.T, names ...string) *Topology {
	t.Helper()
	Require(t)
	topo, err := Up(names...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := topo.Down(); err != nil {
			t.Error(err)
		}
	})
	return topo
}

// TestUpReach: every host reaches the others and the root namespace, and the root namespace
// reaches every host, over the bridge; a process run with Exec lives in its host's network.
func TestUpReach(t *testing.T) {
	topo := up(t, "server", "c1", "c2")
	if len(topo.Hosts) != 3 || topo.GatewayIP == "" {
		t.Fatalf("topology %+v", topo)
	}
	for _, h := range topo.Hosts {
		if len(h.veth) > 15 || len(topo.Bridge) > 15 {
			t.Errorf("interface name too long: %q %q", h.veth, topo.Bridge)
		}
	}

	// A listener made in c1's namespace, dialled from c2's through the bridge.
	c1 := topo.Host("c1")
	l, err := topo.Listen("c1", "tcp", net.JoinHostPort(c1.IP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		c, err := l.Accept()
		if err == nil {
			fmt.Fprintln(c, "hello from c1")
			c.Close()
		}
	}()
	c, err := topo.DialTimeout("c2", "tcp", l.Addr().String(), 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if line != "hello from c1\n" {
		t.Errorf("read %q", line)
	}

	// A process started by Exec, in server's namespace, dials a listener in the root one at
	// the gateway: what a load agent does towards a contender run by the coordinator.
	gw, err := net.Listen("tcp", net.JoinHostPort(topo.GatewayIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer gw.Close()
	got := make(chan string, 1)
	go func() {
		c, err := gw.Accept()
		if err != nil {
			got <- err.Error()
			return
		}
		got <- c.RemoteAddr().(*net.TCPAddr).IP.String()
		c.Close()
	}()
	_, port, _ := net.SplitHostPort(gw.Addr().String())
	out, err := topo.Exec("server", "bash", "-c", "exec 3<>/dev/tcp/"+topo.GatewayIP+"/"+port).CombinedOutput()
	if err != nil {
		t.Fatalf("dial from server's namespace: %v: %s", err, out)
	}
	select {
	case from := <-got:
		if from != topo.Host("server").IP {
			t.Errorf("connection came from %s, want server's %s", from, topo.Host("server").IP)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no connection at the gateway")
	}

	// The namespace has only lo and eth0 with its address: nothing else to route through.
	out, err = topo.Exec("c2", "ip", "-4", "-o", "addr").CombinedOutput()
	if err != nil || !strings.Contains(string(out), topo.Host("c2").IP+"/24") {
		t.Errorf("c2's addresses: %v: %s", err, out)
	}
	if err := topo.Exec("nosuch", "true").Run(); err == nil {
		t.Error("Exec on an unknown host ran")
	}
}

// TestDownRemovesAll: after Down no namespace, veth or bridge of the topology is left, and a
// process started in a namespace is gone; a second Down is no error.
func TestDownRemovesAll(t *testing.T) {
	Require(t)
	topo, err := Up("a", "b")
	if err != nil {
		t.Fatal(err)
	}
	sleeper := topo.Exec("a", "sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	if pids, _ := topo.Pids("a"); len(pids) != 1 {
		t.Errorf("pids in a: %v", pids)
	}
	if err := topo.Down(); err != nil {
		t.Fatal(err)
	}
	_ = sleeper.Wait()
	if sleeper.ProcessState == nil || sleeper.ProcessState.Success() {
		t.Errorf("sleep in a was not ended: %v", sleeper.ProcessState)
	}
	if err := topo.Down(); err != nil {
		t.Errorf("second Down: %v", err)
	}
	assertGone(t, topo)
}

func assertGone(t *testing.T, topo *Topology) {
	t.Helper()
	ns, _ := exec.Command("ip", "netns", "list").Output()
	links, _ := exec.Command("ip", "-o", "link").Output()
	for _, h := range topo.Hosts {
		if strings.Contains(string(ns), h.NS) {
			t.Errorf("namespace %s left: %s", h.NS, ns)
		}
		if strings.Contains(string(links), h.veth+"@") || strings.Contains(string(links), h.veth+":") {
			t.Errorf("veth %s left", h.veth)
		}
	}
	if strings.Contains(string(links), topo.Bridge+":") {
		t.Errorf("bridge %s left", topo.Bridge)
	}
}

// TestSSHD: each host's sshd takes the test key, and a command run over ssh runs inside
// that host's namespace.
func TestSSHD(t *testing.T) {
	topo := up(t, "h1", "h2")
	s, err := topo.StartSSHD(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range topo.Hosts {
		out, err := s.Command(h.Name, "ip", "-4", "-o", "addr", "show", "eth0").CombinedOutput()
		if err != nil {
			t.Fatalf("ssh %s: %v: %s", h.Name, err, out)
		}
		if !strings.Contains(string(out), h.IP+"/24") {
			t.Errorf("ssh %s ran outside its namespace: %s", h.Name, out)
		}
	}
	if err := s.Stop("h2"); err != nil {
		t.Fatal(err)
	}
	if out, err := s.Command("h2", "true").CombinedOutput(); err == nil {
		t.Errorf("ssh to a stopped sshd succeeded: %s", out)
	}
	if err := s.Restart("h2"); err != nil {
		t.Fatal(err)
	}
	if out, err := s.Command("h2", "true").CombinedOutput(); err != nil {
		t.Errorf("ssh after Restart: %v: %s", err, out)
	}
}

// TestCleanupStale: namespaces and links named for a process that has ended are removed;
// those of a live process (this one) are not.
func TestCleanupStale(t *testing.T) {
	topo := up(t, "live")
	// A pid that is surely not running: a child that has exited and been reaped.
	c := exec.Command("true")
	if err := c.Run(); err != nil {
		t.Fatal(err)
	}
	dead := c.ProcessState.Pid()
	base := fmt.Sprintf("%s%dx1", prefix, dead)
	ns := nsPrefix + base + "-x"
	for _, args := range [][]string{
		{"netns", "add", ns},
		{"link", "add", base + "b", "type", "bridge"},
		{"link", "add", base + "v0", "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"link", "set", base + "v0", "master", base + "b"},
	} {
		if err := ip(args...); err != nil {
			t.Fatal(err)
		}
	}
	if err := Cleanup(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/run/netns/" + ns); err == nil {
		t.Errorf("stale namespace %s left", ns)
		_ = ip("netns", "del", ns)
	}
	for _, l := range []string{base + "b", base + "v0"} {
		if linkExists(l) {
			t.Errorf("stale link %s left", l)
			_ = ip("link", "del", l)
		}
	}
	if _, err := os.Stat("/run/netns/" + topo.Host("live").NS); err != nil {
		t.Errorf("Cleanup removed a live topology's namespace: %v", err)
	}
	if !linkExists(topo.Bridge) {
		t.Error("Cleanup removed a live topology's bridge")
	}
}

func TestUpRefusesBadNames(t *testing.T) {
	for _, names := range [][]string{nil, {"a", "a"}, {"has space"}, {strings.Repeat("x", 21)}} {
		if _, err := Up(names...); err == nil {
			t.Errorf("Up(%q) made a topology", names)
		}
	}
}
