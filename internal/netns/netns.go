// Package netns builds a small multi-host network on one Linux machine, for tests: one
// network namespace per simulated host, each joined by a veth pair to a bridge in the root
// namespace, all in one private /24. The root namespace holds the bridge's address (the
// gateway), so a coordinator running in the test process reaches every host and every host
// reaches it on one L2 segment, with no routing, forwarding or NAT.
//
// Every name carries the creating process's id, so that Cleanup can remove what a crashed
// earlier test left without touching a live one. Nothing here sends traffic anywhere but the
// addresses of the namespaces it creates and the gateway.
package netns

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Host is one simulated host: a network namespace with one address on the topology's bridge.
type Host struct {
	Name string // as given to Up, e.g. "server", "c1"
	NS   string // the namespace's name under /run/netns
	IP   string // its address on the bridge, e.g. "10.213.7.2"
	veth string // the root namespace's end of its veth pair
}

// Topology is a bridge in the root namespace and the hosts plugged into it.
type Topology struct {
	Bridge    string // the bridge's interface name in the root namespace
	GatewayIP string // the root namespace's address on the bridge
	Subnet    string // e.g. "10.213.7.0/24"
	Hosts     []Host

	mu    sync.Mutex
	procs []*exec.Cmd // long-lived processes started here (sshd), stopped by Down
	down  bool
}

// prefix starts every interface and namespace name this package makes; Cleanup matches it.
const prefix = "ar"

// nsPrefix starts every namespace name, so that "ip netns list" shows whose they are.
const nsPrefix = "arena-"

var seq atomic.Int32

// namePattern matches the per-topology part of our names: "ar<pid>x<seq>".
var namePattern = regexp.MustCompile(`^(?:` + nsPrefix + `)?` + prefix + `([0-9]+)x([0-9]+)`)

// Up creates the bridge and one namespace per name, checks that they reach each other and
// the root namespace, and returns them. On any failure it removes what it made.
func Up(names ...string) (*Topology, error) {
	if len(names) == 0 {
		return nil, errors.New("netns: Up needs at least one host name")
	}
	if len(names) > 250 {
		return nil, errors.New("netns: at most 250 hosts fit in one /24")
	}
	seen := map[string]bool{}
	for _, n := range names {
		if !validHostName(n) {
			return nil, fmt.Errorf("netns: host name %q: use 1-20 letters, digits, '-' or '_'", n)
		}
		if seen[n] {
			return nil, fmt.Errorf("netns: host name %q given twice", n)
		}
		seen[n] = true
	}
	// Best effort: a crashed earlier run's leftovers would hold subnets and names.
	_ = Cleanup()

	base := fmt.Sprintf("%s%dx%d", prefix, os.Getpid(), seq.Add(1))
	t := &Topology{Bridge: base + "b"}
	if len(base)+1+len(strconv.Itoa(len(names))) > 15 {
		return nil, fmt.Errorf("netns: interface names from %q would exceed 15 characters", base)
	}

	// Two processes picking a subnet at once could pick the same one: the lock covers the
	// choice and the bridge address that makes it visible to the next chooser.
	unlock, err := lock()
	if err != nil {
		return nil, err
	}
	subnet, err := freeSubnet()
	if err == nil {
		t.Subnet = subnet.String()
		t.GatewayIP = subnet.Addr().Next().String()
		err = t.makeBridge()
	}
	unlock()
	if err != nil {
		return nil, errors.Join(err, t.Down())
	}

	ip := subnet.Addr().Next()
	for i, n := range names {
		ip = ip.Next()
		h := Host{Name: n, NS: nsPrefix + base + "-" + n, IP: ip.String(), veth: fmt.Sprintf("%sv%d", base, i)}
		t.Hosts = append(t.Hosts, h)
		if err := t.makeHost(h); err != nil {
			return nil, errors.Join(err, t.Down())
		}
	}
	if err := t.check(); err != nil {
		return nil, errors.Join(err, t.Down())
	}
	return t, nil
}

func validHostName(n string) bool {
	if n == "" || len(n) > 20 {
		return false
	}
	for _, r := range n {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func (t *Topology) makeBridge() error {
	if err := ip("link", "add", t.Bridge, "type", "bridge"); err != nil {
		return err
	}
	// No IPv6 on the bridge: its router solicitations and DAD would be traffic nobody asked for.
	_ = os.WriteFile("/proc/sys/net/ipv6/conf/"+t.Bridge+"/disable_ipv6", []byte("1"), 0o644)
	if err := ip("addr", "add", t.GatewayIP+"/24", "dev", t.Bridge); err != nil {
		return err
	}
	return ip("link", "set", t.Bridge, "up")
}

func (t *Topology) makeHost(h Host) error {
	if err := ip("netns", "add", h.NS); err != nil {
		return err
	}
	steps := [][]string{
		{"link", "add", h.veth, "type", "veth", "peer", "name", "eth0", "netns", h.NS},
		{"link", "set", h.veth, "master", t.Bridge},
		{"link", "set", h.veth, "up"},
		{"-n", h.NS, "link", "set", "lo", "up"},
		{"-n", h.NS, "addr", "add", h.IP + "/24", "dev", "eth0"},
		{"-n", h.NS, "link", "set", "eth0", "up"},
	}
	_ = t.Exec(h.Name, "sysctl", "-q", "-w", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1").Run()
	for _, s := range steps {
		if err := ip(s...); err != nil {
			return err
		}
	}
	return nil
}

// check proves the paths tests rely on: root namespace to each host and back, and host to
// host across the bridge (the path a firewall on bridged traffic would cut).
func (t *Topology) check() error {
	gw, err := net.Listen("tcp", net.JoinHostPort(t.GatewayIP, "0"))
	if err != nil {
		return fmt.Errorf("netns: listening on the gateway %s: %w", t.GatewayIP, err)
	}
	defer gw.Close()
	go acceptAll(gw)
	for i, h := range t.Hosts {
		l, err := t.Listen(h.Name, "tcp", net.JoinHostPort(h.IP, "0"))
		if err != nil {
			return err
		}
		go acceptAll(l)
		paths := []struct {
			from, to string
		}{{"", l.Addr().String()}, {h.Name, gw.Addr().String()}}
		if i > 0 {
			paths = append(paths, struct{ from, to string }{t.Hosts[0].Name, l.Addr().String()})
		}
		for _, p := range paths {
			var c net.Conn
			deadline := time.Now().Add(3 * time.Second)
			for {
				c, err = t.DialTimeout(p.from, "tcp", p.to, time.Second)
				if err == nil || time.Now().After(deadline) {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if err != nil {
				l.Close()
				from := p.from
				if from == "" {
					from = "the root namespace"
				}
				return fmt.Errorf("netns: %s cannot reach %s over bridge %s: %w%s", from, p.to, t.Bridge, err, firewallHint())
			}
			c.Close()
		}
		l.Close()
	}
	return nil
}

func acceptAll(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// firewallHint names the usual cause when a bridge passes no traffic: br_netfilter hands
// bridged frames to iptables, where a FORWARD policy of DROP (Docker sets one) eats them.
func firewallHint() string {
	b, err := os.ReadFile("/proc/sys/net/bridge/bridge-nf-call-iptables")
	if err != nil || strings.TrimSpace(string(b)) != "1" {
		return ""
	}
	return "; br_netfilter is loaded and net.bridge.bridge-nf-call-iptables=1, so bridged traffic passes " +
		"iptables: check \"iptables -S FORWARD\" for a DROP policy, or run " +
		"\"sysctl -w net.bridge.bridge-nf-call-iptables=0\" on this test machine"
}

// host finds a host by name.
func (t *Topology) host(name string) (Host, error) {
	for _, h := range t.Hosts {
		if h.Name == name {
			return h, nil
		}
	}
	return Host{}, fmt.Errorf("netns: no host %q in this topology", name)
}

// Host returns the named host; it panics on a name Up was not given, a test's mistake.
func (t *Topology) Host(name string) Host {
	h, err := t.host(name)
	if err != nil {
		panic(err)
	}
	return h
}

// Exec prepares a command run inside the named host's namespace. An unknown host gives a
// command whose Run fails with the reason.
func (t *Topology) Exec(host string, name string, args ...string) *exec.Cmd {
	h, err := t.host(host)
	if err != nil {
		c := exec.Command("false")
		c.Err = err
		return c
	}
	return exec.Command("ip", append([]string{"netns", "exec", h.NS, name}, args...)...)
}

// Pids lists the processes living in the named host's namespace.
func (t *Topology) Pids(host string) ([]int, error) {
	h, err := t.host(host)
	if err != nil {
		return nil, err
	}
	return nsPids(h.NS)
}

func nsPids(ns string) ([]int, error) {
	out, err := exec.Command("ip", "netns", "pids", ns).Output()
	if err != nil {
		return nil, fmt.Errorf("netns: ip netns pids %s: %w", ns, err)
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if p, err := strconv.Atoi(f); err == nil {
			pids = append(pids, p)
		}
	}
	return pids, nil
}

// track records a process started in a namespace so that Down stops it first.
func (t *Topology) track(c *exec.Cmd) {
	t.mu.Lock()
	t.procs = append(t.procs, c)
	t.mu.Unlock()
}

// Down stops every process in the namespaces and removes the namespaces, the veth pairs and
// the bridge. It may be called more than once; later calls do nothing.
func (t *Topology) Down() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.down {
		return nil
	}
	t.down = true
	for _, c := range t.procs {
		if c.Process != nil {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
	}
	var errs []error
	for _, h := range t.Hosts {
		if err := removeNS(h.NS); err != nil {
			errs = append(errs, err)
		}
		if err := delLink(h.veth); err != nil {
			errs = append(errs, err)
		}
	}
	for _, c := range t.procs {
		if c.Process != nil {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
	t.procs = nil
	if err := delLink(t.Bridge); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// removeNS ends every process in the namespace (SIGTERM, then SIGKILL after a second) and
// deletes it. A namespace that is already gone is no error.
func removeNS(ns string) error {
	if _, err := os.Stat("/run/netns/" + ns); err != nil {
		return nil
	}
	pids, _ := nsPids(ns)
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGTERM)
	}
	for deadline := time.Now().Add(time.Second); len(pids) > 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		pids, _ = nsPids(ns)
	}
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
	return ip("netns", "del", ns)
}

// delLink deletes an interface unless it is already gone: the kernel removes a veth's root
// end by itself, a moment after its namespace end goes with the namespace.
func delLink(name string) error {
	if !linkExists(name) {
		return nil
	}
	err := ip("link", "del", name)
	if err != nil && !linkExists(name) {
		return nil
	}
	return err
}

func linkExists(name string) bool {
	_, err := net.InterfaceByName(name)
	return err == nil
}

// Cleanup removes namespaces and links that this package made in a process that no longer
// runs: a test killed before its Down leaves them, and they would hold names and subnets.
func Cleanup() error {
	var errs []error
	if out, err := exec.Command("ip", "netns", "list").Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || !strings.HasPrefix(f[0], nsPrefix+prefix) || !stale(f[0]) {
				continue
			}
			if err := removeNS(f[0]); err != nil {
				errs = append(errs, err)
			}
		}
	}
	ifs, err := net.Interfaces()
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	// Veths first: deleting one end removes its peer, and a bridge goes once its ports have.
	for _, bridges := range []bool{false, true} {
		for _, i := range ifs {
			if !strings.HasPrefix(i.Name, prefix) || !stale(i.Name) || strings.HasSuffix(i.Name, "b") != bridges {
				continue
			}
			if err := delLink(i.Name); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// stale tells whether a name of ours belongs to a process that has ended.
func stale(name string) bool {
	m := namePattern.FindStringSubmatch(name)
	if m == nil {
		return false
	}
	pid, err := strconv.Atoi(m[1])
	if err != nil || pid <= 0 {
		return false
	}
	if pid == os.Getpid() {
		return false
	}
	err = syscall.Kill(pid, 0)
	return errors.Is(err, syscall.ESRCH)
}

// freeSubnet picks a 10.213.N.0/24 that no route or address on this machine overlaps.
func freeSubnet() (netip.Prefix, error) {
	var taken []netip.Prefix
	out, err := exec.Command("ip", "-4", "-o", "route", "show", "table", "all").Output()
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("netns: ip route: %w", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		dst := f[0]
		if len(f) > 1 && (dst == "local" || dst == "broadcast" || dst == "unicast" || dst == "blackhole" || dst == "unreachable" || dst == "prohibit") {
			dst = f[1]
		}
		if dst == "default" {
			continue
		}
		if !strings.Contains(dst, "/") {
			dst += "/32"
		}
		if p, err := netip.ParsePrefix(dst); err == nil {
			taken = append(taken, p)
		}
	}
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			if p, err := netip.ParsePrefix(a.String()); err == nil && p.Addr().Is4() {
				taken = append(taken, p.Masked())
			}
		}
	}
	start := os.Getpid() % 250
	for i := range 250 {
		n := (start + i) % 250
		cand := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 213, byte(n), 0}), 24)
		clash := false
		for _, p := range taken {
			if p.Overlaps(cand) {
				clash = true
				break
			}
		}
		if !clash {
			return cand, nil
		}
	}
	return netip.Prefix{}, errors.New("netns: every 10.213.N.0/24 overlaps a route here; run netns.Cleanup or free one")
}

// lock serialises subnet choice between processes on this machine.
func lock() (func(), error) {
	f, err := os.OpenFile("/run/arena-netns.lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("netns: locking %s: %w", f.Name(), err)
	}
	return func() { f.Close() }, nil
}

// ip runs the ip tool and turns its failure into an error that quotes it.
func ip(args ...string) error {
	var stderr bytes.Buffer
	c := exec.Command("ip", args...)
	c.Stderr = &stderr
	if err := c.Run(); err != nil {
		return fmt.Errorf("netns: ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}
