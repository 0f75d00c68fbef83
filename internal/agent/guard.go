package agent

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/arena-lab/arena/internal/load"
)

// What an agent trusts (docs/distributed.md, "What an agent trusts"): a caller holding the
// run's secret, which the coordinator made and handed over out of band, and nobody else;
// and even that caller's jobs only within the bounds below, towards the server addresses the
// agent was started with.

// SecretEnv is the environment variable an agent started by hand (or a coordinator given
// agents started by hand) reads the run's secret from when no file is named.
const SecretEnv = "ARENA_AGENT_SECRET"

// secretAtStart is SecretEnv as this process was started with it, taken out of the
// environment as the package is initialised, before main runs: nothing arena starts (a
// contender, its build, psql, perf, a profiler's java) inherits it, whichever path starts it
// and whether or not this run reads it.
var secretAtStart = takeEnv(SecretEnv)

func takeEnv(name string) string {
	v := os.Getenv(name)
	_ = os.Unsetenv(name) // fails only on a name with "=" or NUL: SecretEnv has neither
	return v
}

// NewSecret is a run's secret: 32 random bytes, hex-encoded.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("making the run's secret: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// minSecret is the shortest secret an agent accepts: 16 bytes' worth of hex.
const minSecret = 32

// CheckSecret refuses a secret too short to guess at, or one that could not travel in a header.
func CheckSecret(s string) error {
	if len(s) < minSecret {
		return fmt.Errorf("the agents' secret has %d characters: give at least %d (arena makes 64 hex digits)", len(s), minSecret)
	}
	for _, c := range s {
		if c <= ' ' || c >= 0x7f {
			return errors.New("the agents' secret holds spaces or control characters: give printable ASCII")
		}
	}
	return nil
}

// ReadSecret reads the secret from file (its first line), or from SecretEnv when file is "";
// "" when neither gives one. A file that others may read is refused (CheckSecretFile).
func ReadSecret(file string) (string, error) {
	if file == "" {
		// Set since the start only by this process itself (a test): taken out as it is read.
		secret := strings.TrimSpace(cmp.Or(takeEnv(SecretEnv), secretAtStart))
		return secret, nil
	}
	if err := CheckSecretFile(file); err != nil {
		return "", err
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("the agents' secret: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSpace(line), nil
}

// CheckSecretFile refuses a secret file another user may read: one readable or writable by
// others, or by a group that is not the user's own private group (the group of the same id
// as the user, as a Kubernetes pod's fsGroup gives its Secret's files).
func CheckSecretFile(file string) error {
	st, err := os.Stat(file)
	if err != nil {
		return fmt.Errorf("the agents' secret: %w", err)
	}
	perm := st.Mode().Perm()
	private := false
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		private = int(sys.Gid) == os.Getegid() && os.Getegid() == os.Geteuid()
	}
	if perm&0o007 != 0 || perm&0o070 != 0 && !private {
		return fmt.Errorf("the agents' secret %s has mode %04o: other users may read it; chmod 600 %s", file, perm, file)
	}
	return nil
}

// MakeSecretFile makes a secret in a file of mode 0600 in a new folder of mode 0700 under
// the system's temp folder (os.MkdirTemp: a name nobody else chose), for an agent started
// without one; it returns the secret and the file.
func MakeSecretFile() (secret, file string, err error) {
	if secret, err = NewSecret(); err != nil {
		return "", "", err
	}
	dir, err := os.MkdirTemp("", "arena-agent-secret-")
	if err != nil {
		return "", "", fmt.Errorf("making the agent's secret file: %w", err)
	}
	file = filepath.Join(dir, "secret")
	if err := os.WriteFile(file, []byte(secret+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("making the agent's secret file: %w", err)
	}
	return secret, file, nil
}

// CheckListen refuses to serve without a good secret, anywhere: on loopback too, since every
// user of the host reaches loopback.
func CheckListen(listen, secret string) error {
	if _, _, err := net.SplitHostPort(listen); err != nil {
		return err
	}
	if secret == "" {
		return fmt.Errorf("--listen %s without a secret: an agent needs the run's secret (--secret-file, or %s)", listen, SecretEnv)
	}
	return CheckSecret(secret)
}

// authorize passes a call that carries the secret, and answers any other 401 with nothing
// else: no name, no build, no route. An agent without a secret answers nobody.
func (s *Server) authorize(next http.Handler) http.Handler {
	want := []byte("Bearer " + s.Secret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Secret == "" || subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="arena agent"`)
			w.Header().Set("Connection", "close") // nothing held open for a stranger
			writeError(w, http.StatusUnauthorized, "this agent answers only its coordinator: give the run's secret")
			return
		}
		// The coordinator's run or load lasts longer than the server's read timeout, whose
		// end would cancel it: lifted for the caller holding the secret.
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		next.ServeHTTP(w, r)
	})
}

// The bounds an agent holds every job to, whoever sends it: wide enough for every study's
// heaviest level on one agent, far below what would turn an agent into an amplifier.
const (
	MaxConnections = 20_000
	MaxDuration    = 30 * time.Minute
	MaxTimeout     = 2 * time.Minute
	MaxRate        = 1_000_000 // requests a second, per stream
	MinInterval    = 10 * time.Millisecond
	MaxInterval    = time.Minute
	MaxParts       = 1024
	// MaxLead is how far ahead a job's start may be: a job that waits longer only holds
	// the agent busy.
	MaxLead = time.Minute
)

// checkJob refuses a job outside the bounds, or one aimed anywhere but the server addresses.
func (s *Server) checkJob(ctx context.Context, job Job) error {
	if err := s.checkTarget(ctx, job.Target); err != nil {
		return err
	}
	switch {
	case job.Parts < 1 || job.Parts > MaxParts || job.Part < 0 || job.Part >= job.Parts:
		return fmt.Errorf("part %d of %d: give 0 ≤ part < parts ≤ %d", job.Part, job.Parts, MaxParts)
	case job.Interval != 0 && (job.Interval < MinInterval || job.Interval > MaxInterval):
		return fmt.Errorf("interval %s: give %s to %s", job.Interval, MinInterval, MaxInterval)
	case job.Slack < 0 || job.Slack > time.Second:
		return fmt.Errorf("slack %s: give 0 to 1s", job.Slack)
	case time.Until(job.Start.Add(job.Offset)) > MaxLead:
		return fmt.Errorf("start %s ahead: give a start within %s", time.Until(job.Start.Add(job.Offset)).Round(time.Millisecond), MaxLead)
	}
	if c := job.Closed; c != nil {
		if err := CheckPath(c.Path); err != nil {
			return err
		}
		if c.Connections < 1 {
			return fmt.Errorf("closed loop over %d connections: give 1 to %d", c.Connections, MaxConnections)
		}
		if c.Duration <= 0 || c.Timeout < 0 {
			return fmt.Errorf("closed loop of %s with timeout %s: give a duration above 0", c.Duration, c.Timeout)
		}
	}
	return nil
}

// checkLoad refuses a resolved load beyond the bounds: what the job named or the scenario's
// options planned (a duration or a rate overridden).
func checkLoad(ld load.Load) error {
	d := ld.Describe()
	if d.Duration > MaxDuration || d.Expected > MaxDuration+time.Minute {
		return fmt.Errorf("duration %s: this agent runs loads of at most %s", max(d.Duration, d.Expected), MaxDuration)
	}
	if d.Timeout > MaxTimeout {
		return fmt.Errorf("timeout %s: this agent allows at most %s", d.Timeout, MaxTimeout)
	}
	conns := 0
	for _, st := range d.Streams {
		if err := CheckPath(st.Path); err != nil {
			return fmt.Errorf("stream %s: %w", st.Tag, err)
		}
		if st.Rate > MaxRate {
			return fmt.Errorf("stream %s at %.0f requests a second: this agent allows at most %d", st.Tag, st.Rate, MaxRate)
		}
		if st.Connections < 0 {
			return fmt.Errorf("stream %s over %d connections: give 0 (one a hit) to %d", st.Tag, st.Connections, MaxConnections)
		}
		conns += st.Connections
	}
	if conns > MaxConnections {
		return fmt.Errorf("%d connections: this agent opens at most %d", conns, MaxConnections)
	}
	return nil
}

// CheckPath refuses a request path that does not start with '/' or holds a space or a
// control character: the engine writes the path into the request line as it is, so a CRLF
// in it would let a caller write any bytes to the server.
func CheckPath(p string) error {
	if !strings.HasPrefix(p, "/") {
		return fmt.Errorf("path %q: a path starts with '/'", p)
	}
	for _, c := range p {
		if c <= ' ' || c == 0x7f {
			return fmt.Errorf("path %q: no spaces or control characters in a path", p)
		}
	}
	return nil
}

// checkTarget passes a target, an IP and a port, that one of the addresses this agent was
// started with allows (Allowed); an agent started with none sends load nowhere: on a shared
// host every user's services listen on loopback, so loopback is no allow-list.
func (s *Server) checkTarget(ctx context.Context, target string) error {
	ip, port, err := splitTarget(target)
	if err != nil {
		return err
	}
	if len(s.Targets) == 0 {
		return fmt.Errorf("target %s: this agent was started with no --server-address, so it sends load nowhere: start it with --server-address IP[:port]", target)
	}
	for _, raw := range s.Targets {
		a, err := ParseAllowed(raw)
		if err != nil {
			return err
		}
		if a.Port != 0 && a.Port != port {
			continue
		}
		if slices.ContainsFunc(a.ips(ctx), ip.Equal) {
			return nil
		}
	}
	return fmt.Errorf("target %s: this agent sends load only to %s, the server address(es) it was started with", target, strings.Join(s.Targets, ", "))
}

// splitTarget is target's IP and port: an address, never a name, which would be resolved
// wherever its sender chose.
func splitTarget(target string) (net.IP, int, error) {
	host, portText, err := net.SplitHostPort(target)
	if err != nil {
		return nil, 0, fmt.Errorf("target %q: give IP:port", target)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return nil, 0, fmt.Errorf("target %q: give the server's IP address, not a name", target)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 1 || port > 65535 {
		return nil, 0, fmt.Errorf("target %q: give a port from 1 to 65535", target)
	}
	return ip, port, nil
}

// Allowed is an address an agent may send load to (its --server-address): an IP or a name
// the agent's own resolver looks up at each job (a Kubernetes Service's pod address), and a
// port, 0 when any port of it.
type Allowed struct {
	Host string
	Port int
}

// ParseAllowed reads one --server-address: IP, IP:port, name or name:port ([v6]:port). An
// unspecified address (0.0.0.0, ::) or a multicast one allows nothing: it is refused.
func ParseAllowed(raw string) (Allowed, error) {
	host, port := raw, 0
	if h, p, err := net.SplitHostPort(raw); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return Allowed{}, fmt.Errorf("--server-address %q: give a port from 1 to 65535", raw)
		}
		host, port = h, n
	}
	if ip := net.ParseIP(host); ip != nil {
		if ip.IsUnspecified() || ip.IsMulticast() {
			return Allowed{}, fmt.Errorf("--server-address %s: give the server's own address, not %s", raw, host)
		}
	} else if host == "" || strings.ContainsAny(host, "/ \t\r\n[]@") {
		return Allowed{}, fmt.Errorf("--server-address %q: give IP[:port] or a host name[:port]", raw)
	}
	return Allowed{Host: host, Port: port}, nil
}

// CheckAllowed refuses a list of --server-address an agent could not hold to.
func CheckAllowed(targets []string) error {
	for _, t := range targets {
		if _, err := ParseAllowed(t); err != nil {
			return err
		}
	}
	return nil
}

// ips are the addresses a allows: its IP, or its name's addresses now.
func (a Allowed) ips(ctx context.Context) []net.IP {
	if ip := net.ParseIP(a.Host); ip != nil {
		return []net.IP{ip}
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, _ := net.DefaultResolver.LookupIP(lctx, "ip", a.Host)
	return ips
}
