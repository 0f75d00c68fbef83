package verify

import (
	"bufio"
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Server is a started server under check: where it answers and the process tree it runs as.
// After every bad input it must still be ready and still be the same processes: a cluster
// worker that died, whether its primary replaced it or not, is a failure the readiness probe
// alone would miss.
type Server struct {
	Addr  string // host:port of its HTTP and WebSocket endpoints
	Ready string // base URL of the readiness probe checked after a bad input; "" is http://Addr
	Pid   int    // the root of its process tree; 0 leaves the processes unchecked
	// Needs, when set, are what the scenario it is checked for sends: only the HTTP checks
	// sending to those routes run (a target); nil runs the whole contract.
	Needs *Needs
	// Probe, when set, is its readiness after a bad input in place of the contract's
	// readiness probe (a target that serves none): nil when it answered, or what came back.
	Probe     func(ctx context.Context) error
	notNeeded []string

	pids []int // the tree as last seen
}

// NewServer is the server at addr whose process tree has its root at pid; it reads the tree
// now, so call it once the server is ready.
func NewServer(addr string, pid int) (*Server, error) {
	s := &Server{Addr: addr, Pid: pid}
	if pid == 0 {
		return s, nil
	}
	pids, err := processTree(pid)
	if err != nil {
		return nil, err
	}
	s.pids = pids
	return s, nil
}

// Base is the server's base URL.
func (s *Server) Base() string { return "http://" + s.Addr }

func (s *Server) readyBase() string {
	if s.Ready != "" {
		return s.Ready
	}
	return s.Base()
}

// after is the check that follows a bad input: still ready, and the same processes.
func (s *Server) after(ctx context.Context, group, what string) Check {
	c := Check{Name: "still ready, same processes after " + what, OK: true}
	if s.Probe != nil {
		start := time.Now()
		if err := s.Probe(ctx); err != nil {
			c.OK, c.Detail = false, err.Error()
		}
		c.Took = time.Since(start)
	} else {
		c = request{name: c.Name, path: "/actuator/health/readiness", status: 200}.run(ctx, s.readyBase())
	}
	c.Group = group
	if s.Pid == 0 {
		return c
	}
	now, err := processTree(s.Pid)
	if err != nil {
		now = nil // the root is gone: every pid left
	}
	if !c.OK {
		// Not ready: it may be dying of this input (a reset while its process exits), so its
		// death is read once the tree has settled, at this input rather than the next one.
		now = s.settled(now)
	}
	if gone, came := diff(s.pids, now); len(gone)+len(came) > 0 {
		// A primary may be replacing a dead worker: wait for the tree to settle, so that the
		// death and its replacement are one change, reported at this input.
		now = s.settled(now)
		gone, came = diff(s.pids, now)
		c.OK = false
		c.Detail = strings.TrimPrefix(c.Detail+fmt.Sprintf("; processes changed: gone %v, new %v", gone, came), "; ")
		s.pids = now // report each change once, at the input that caused it
	}
	return c
}

// settleQuiet is how long a changed process tree must stay as it is before it is taken as
// the new one; settleLimit bounds the wait.
const (
	settleQuiet = 250 * time.Millisecond
	settleLimit = 2 * time.Second
)

// settled reads the tree until it has not changed for settleQuiet (at most settleLimit),
// starting from now; nil when the root is gone.
func (s *Server) settled(now []int) []int {
	quietSince, deadline := time.Now(), time.Now().Add(settleLimit)
	for time.Now().Before(deadline) && time.Since(quietSince) < settleQuiet {
		time.Sleep(25 * time.Millisecond)
		next, err := processTree(s.Pid)
		if err != nil {
			return nil
		}
		if !slices.Equal(next, now) {
			now, quietSince = next, time.Now()
		}
	}
	return now
}

// diff is what left a and what came in b (both sorted).
func diff(a, b []int) (gone, came []int) {
	for _, p := range a {
		if !slices.Contains(b, p) {
			gone = append(gone, p)
		}
	}
	for _, p := range b {
		if !slices.Contains(a, p) {
			came = append(came, p)
		}
	}
	return gone, came
}

// processTree is root and its living descendants, sorted, read from /proc (zombies are dead).
func processTree(root int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	alive := map[int]bool{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // it exited while we looked
		}
		// pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
		rest := string(raw[strings.LastIndexByte(string(raw), ')')+1:])
		f := strings.Fields(rest)
		if len(f) < 2 || f[0] == "Z" || f[0] == "X" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		alive[pid] = true
		children[ppid] = append(children[ppid], pid)
	}
	if !alive[root] {
		return nil, fmt.Errorf("process %d is not running", root)
	}
	tree := []int{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	slices.Sort(tree)
	return tree, nil
}

// ContractHost is the address the contract binds PORT to when no BIND_ADDRESS is given.
const ContractHost = "127.0.0.1"

// ListenersCheck checks where the server's process tree listens (/proc): its port on the
// server's own address only (the contract's 127.0.0.1, or the BIND_ADDRESS it was given in
// Addr) and every other listener on loopback. A contender on 0.0.0.0 is open to the network;
// one that keeps 127.0.0.1:PORT beside BIND_ADDRESS half ignored it.
func (s *Server) ListenersCheck() Check {
	host, port, _ := net.SplitHostPort(s.Addr)
	bound := net.ParseIP(host)
	c := Check{Group: GroupHTTP, Name: "every listener of the process tree is on loopback"}
	if host != ContractHost {
		c.Name = fmt.Sprintf("the port on BIND_ADDRESS %s only, every other listener on loopback", host)
	}
	if s.Pid == 0 {
		c.Detail = "no process to read"
		return c
	}
	addrs, err := listeners(s.Pid)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	var open, elsewhere []string
	found := false
	for _, a := range addrs {
		h, p, _ := net.SplitHostPort(a)
		ip := net.ParseIP(h)
		switch {
		case ip == nil || !(ip.IsLoopback() || ip.Equal(bound)):
			open = append(open, a)
		case p != port: // a listener of its own beside the port (e.g. pprof's), on loopback
		case ip.Equal(bound):
			found = true
		default: // the port on another loopback address too
			elsewhere = append(elsewhere, a)
		}
	}
	switch {
	case len(open) > 0:
		c.Detail = "listening beyond loopback on " + strings.Join(open, ", ")
	case !found:
		c.Detail = fmt.Sprintf("no listener on %s among the tree's sockets %v", s.Addr, addrs)
	case len(elsewhere) > 0:
		c.Detail = fmt.Sprintf("port %s is also on %s, not only on %s", port, strings.Join(elsewhere, ", "), host)
	default:
		c.OK = true
	}
	return c
}

// BindCheck checks, from outside, a server given a BIND_ADDRESS (its Addr): it answers the
// readiness probe there, and the contract's 127.0.0.1 on the same port refuses connections,
// as it would on a host where load agents reach it on BIND_ADDRESS alone.
func (s *Server) BindCheck(ctx context.Context) Check {
	host, port, _ := net.SplitHostPort(s.Addr)
	c := request{name: fmt.Sprintf("answers on BIND_ADDRESS %s, and %s on the same port refuses", host, ContractHost),
		path: "/actuator/health/readiness", status: 200}.run(ctx, s.Base())
	c.Group = GroupHTTP
	if !c.OK {
		return c
	}
	if host == ContractHost {
		c.OK, c.Detail = false, "no BIND_ADDRESS: the server is on the contract's "+ContractHost
		return c
	}
	d := net.Dialer{Timeout: 2 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", net.JoinHostPort(ContractHost, port))
	if err == nil {
		nc.Close()
		c.OK, c.Detail = false, fmt.Sprintf("%s accepts connections too: BIND_ADDRESS must replace %s, not add to it",
			net.JoinHostPort(ContractHost, port), ContractHost)
	}
	return c
}

// listeners are the local addresses of the TCP sockets in LISTEN state that the processes of
// root's tree hold open: the sockets of /proc/<pid>/fd, looked up by inode in the network
// namespace's /proc/<root>/net/tcp and tcp6.
func listeners(root int) ([]string, error) {
	pids, err := processTree(root)
	if err != nil {
		return nil, err
	}
	inodes := map[string]bool{}
	for _, pid := range pids {
		dir := fmt.Sprintf("/proc/%d/fd", pid)
		fds, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("reading the sockets of process %d: %w", pid, err)
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join(dir, fd.Name()))
			if ino, ok := strings.CutPrefix(link, "socket:["); err == nil && ok {
				inodes[strings.TrimSuffix(ino, "]")] = true
			}
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6"} {
		f, err := os.Open(fmt.Sprintf("/proc/%d/net/%s", root, table))
		if err != nil {
			continue // no IPv6 on this machine
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(sc.Text())
			if len(fields) < 10 || fields[3] != "0A" || !inodes[fields[9]] {
				continue
			}
			if addr, err := procAddr(fields[1]); err == nil {
				out = append(out, addr)
			}
		}
		f.Close()
	}
	return out, nil
}

// procAddr decodes /proc/net/tcp's "0100007F:1F90": the address in 32-bit words of host
// byte order (little-endian here), then the port.
func procAddr(s string) (string, error) {
	hexIP, hexPort, ok := strings.Cut(s, ":")
	raw, err := hex.DecodeString(hexIP)
	if !ok || err != nil || len(raw)%4 != 0 {
		return "", fmt.Errorf("address %q", s)
	}
	for i := 0; i < len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return "", fmt.Errorf("port %q", s)
	}
	return net.JoinHostPort(net.IP(raw).String(), strconv.FormatUint(port, 10)), nil
}
