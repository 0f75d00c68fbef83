package netns

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// SSH is one OpenSSH daemon per host, each in its namespace on <ip>:22, and the client side
// that logs in to them as root with a key made for the test.
type SSH struct {
	Dir        string // holds keys, known_hosts, each daemon's config, pid file and log
	ConfigPath string // an ssh_config with one Host block per host name: use it as ssh -F
	KeyPath    string // the client's private key

	t    *Topology
	cmds map[string]*exec.Cmd
}

// Args are the base arguments every ssh and scp call needs to reach the hosts.
func (s *SSH) Args() []string { return []string{"-F", s.ConfigPath} }

// StartSSHD starts one sshd per host with keys and configs made in dir, and returns once
// each accepts TCP connections. Down stops them.
func (t *Topology) StartSSHD(dir string) (*SSH, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	s := &SSH{Dir: dir, ConfigPath: filepath.Join(dir, "ssh_config"), KeyPath: filepath.Join(dir, "client_key"), t: t, cmds: map[string]*exec.Cmd{}}
	if err := keygen(s.KeyPath); err != nil {
		return nil, err
	}
	pub, err := os.ReadFile(s.KeyPath + ".pub")
	if err != nil {
		return nil, err
	}
	authorized := filepath.Join(dir, "authorized_keys")
	if err := os.WriteFile(authorized, pub, 0o600); err != nil {
		return nil, err
	}
	// sshd refuses to start without its privilege separation directory, which Debian makes
	// only when its own service starts.
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		return nil, fmt.Errorf("netns: sshd needs /run/sshd: %w", err)
	}

	var known, config strings.Builder
	for _, h := range t.Hosts {
		hostKey, err := s.configure(h, authorized)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&known, "%s %s\n", h.IP, hostKey)
		fmt.Fprintf(&config, "Host %s\n  HostName %s\n  Port 22\n  User root\n  IdentityFile %s\n  IdentitiesOnly yes\n"+
			"  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n"+
			"  ConnectTimeout 5\n  LogLevel ERROR\n\n",
			h.Name, h.IP, s.KeyPath, filepath.Join(dir, "known_hosts"))
		if err := s.start(h); err != nil {
			return nil, err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "known_hosts"), []byte(known.String()), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(s.ConfigPath, []byte(config.String()), 0o600); err != nil {
		return nil, err
	}
	for _, h := range t.Hosts {
		if err := s.wait(h); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// configure makes h's folder, host key and sshd_config, and returns its public host key as
// known_hosts spells it (type and key).
func (s *SSH) configure(h Host, authorized string) (string, error) {
	hdir := filepath.Join(s.Dir, h.Name)
	if err := os.MkdirAll(hdir, 0o700); err != nil {
		return "", err
	}
	hostKey := filepath.Join(hdir, "ssh_host_ed25519_key")
	if err := keygen(hostKey); err != nil {
		return "", err
	}
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		return "", err
	}
	f := strings.Fields(string(hostPub))
	if len(f) < 2 {
		return "", fmt.Errorf("netns: host key %s.pub is malformed", hostKey)
	}
	sshdConfig := filepath.Join(hdir, "sshd_config")
	cfg := fmt.Sprintf(`ListenAddress %s:22
HostKey %s
PidFile %s
AuthorizedKeysFile %s
PermitRootLogin prohibit-password
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
StrictModes no
UsePAM no
UseDNS no
PrintMotd no
X11Forwarding no
AllowTcpForwarding no
Subsystem sftp internal-sftp
LogLevel ERROR
`, h.IP, hostKey, filepath.Join(hdir, "sshd.pid"), authorized)
	if err := os.WriteFile(sshdConfig, []byte(cfg), 0o600); err != nil {
		return "", err
	}
	return f[0] + " " + f[1], nil
}

func (s *SSH) start(h Host) error {
	hdir := filepath.Join(s.Dir, h.Name)
	logf, err := os.Create(filepath.Join(hdir, "sshd.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	c := s.t.Exec(h.Name, Sshd, "-D", "-e", "-f", filepath.Join(hdir, "sshd_config"))
	c.Stdout, c.Stderr = logf, logf
	if err := c.Start(); err != nil {
		return fmt.Errorf("netns: starting sshd on %s: %w", h.Name, err)
	}
	s.t.track(c)
	s.cmds[h.Name] = c
	return nil
}

// wait dials the host's port 22 from the root namespace until it answers, for 10 s.
func (s *SSH) wait(h Host) error {
	addr := net.JoinHostPort(h.IP, "22")
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			logb, _ := os.ReadFile(filepath.Join(s.Dir, h.Name, "sshd.log"))
			return fmt.Errorf("netns: sshd on %s (%s) does not accept after 10s: %v; its log: %s", h.Name, addr, err, strings.TrimSpace(string(logb)))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop ends the named host's sshd, so that a test can see what a client does when a host's
// daemon is down. Sessions it already serves go on; Down ends them.
func (s *SSH) Stop(host string) error {
	c, ok := s.cmds[host]
	if !ok {
		return fmt.Errorf("netns: no sshd runs on %q", host)
	}
	delete(s.cmds, host)
	_ = c.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		_ = c.Wait() // its exit status is SIGTERM's or SIGKILL's
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = c.Process.Kill()
		<-done
	}
	return nil
}

// Restart starts the named host's sshd again after Stop.
func (s *SSH) Restart(host string) error {
	h, err := s.t.host(host)
	if err != nil {
		return err
	}
	if _, ok := s.cmds[host]; ok {
		return errors.New("netns: sshd on " + host + " already runs")
	}
	if err := s.start(h); err != nil {
		return err
	}
	return s.wait(h)
}

// Command prepares `ssh -F <config> <host> <args...>`.
func (s *SSH) Command(host string, args ...string) *exec.Cmd {
	return exec.Command("ssh", append(append(s.Args(), host), args...)...)
}

func keygen(path string) error {
	var out bytes.Buffer
	c := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "arena-netns-test", "-f", path)
	c.Stdout, c.Stderr = &out, &out
	if err := c.Run(); err != nil {
		return fmt.Errorf("netns: ssh-keygen %s: %v: %s", path, err, strings.TrimSpace(out.String()))
	}
	return nil
}
