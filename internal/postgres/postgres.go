// Package postgres is the lab's database: a throwaway cluster of Debian's PostgreSQL, made in
// a temporary folder, listening on a loopback port of its own behind a password made for it,
// loaded with a fixed data set, and removed with nothing left behind when it stops.
package postgres

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Options say how the lab's PostgreSQL runs.
type Options struct {
	Port int    // on 127.0.0.1; 0: a free port
	CPUs string // taskset's list to pin it to (the client's, as the downstream is); "": unpinned
	Rows int    // rows of the data set; 0: Rows
	// MaxConnections bounds the pools it can serve at once; 0: 200, four times the largest
	// pool a level sets, with room for verify's own connections.
	MaxConnections int
	Log            io.Writer // its server log; nil: kept in the folder until Stop
}

// The cluster's names: the database and the role every contender connects as.
const (
	Database = "arena"
	User     = "arena"
)

// settings are the server settings beyond initdb's. The data set is rebuilt at every start
// and only read, so nothing is gained by writing it durably: fsync, the commit's flush and
// full-page writes are off, which the results say.
var settings = [][2]string{
	{"fsync", "off"},
	{"synchronous_commit", "off"},
	{"full_page_writes", "off"},
	{"shared_buffers", "128MB"},
	{"log_min_messages", "warning"},
}

// Server is a running cluster.
type Server struct {
	Version  string            // e.g. "PostgreSQL 15.18 (Debian 15.18-0+deb12u1)"
	Port     int               // on 127.0.0.1
	Password string            // the arena role's, made for this cluster
	Settings map[string]string // what it runs with beyond the defaults, for the results
	Rows     int

	bin    string // the folder of its binaries
	dir    string // the cluster's temporary folder
	cmd    *exec.Cmd
	exited chan struct{}
	log    *os.File
}

// URL is the cluster's database as a libpq URL, password included: DB_URL for a contender.
func (s *Server) URL() string {
	u := url.URL{Scheme: "postgres", User: url.UserPassword(User, s.Password), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), Path: "/" + Database}
	return u.String()
}

// Describe is the cluster's version and settings, as the results record them: every setting
// beyond the defaults but its port, which each cluster picks.
func (s *Server) Describe() string {
	var kv []string
	for k, v := range s.Settings {
		if k != "port" {
			kv = append(kv, k+"="+v)
		}
	}
	slices.Sort(kv)
	return s.Version + "; " + strings.Join(kv, " ")
}

// Pid is the postmaster's, for the probe (its backends are its children).
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// ErrNotInstalled says the server's binaries are missing.
var ErrNotInstalled = errors.New("PostgreSQL's server is not installed: the lab starts its own (Debian: apt-get install postgresql)")

// FindBin is the folder of the newest PostgreSQL server Debian installed
// (/usr/lib/postgresql/<major>/bin), else the folder of an initdb on PATH.
func FindBin() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	major := func(d string) int {
		n, _ := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		return n
	}
	slices.SortFunc(dirs, func(a, b string) int { return major(b) - major(a) })
	for _, d := range dirs {
		if isServerBin(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && isServerBin(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
	}
	return "", ErrNotInstalled
}

func isServerBin(dir string) bool {
	for _, name := range []string{"initdb", "postgres", "psql"} {
		if fi, err := os.Stat(filepath.Join(dir, name)); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// startWait is how long the cluster may take to make, start and load.
const startWait = 2 * time.Minute

// Start makes a cluster in a temporary folder, starts it and loads the data set. On error
// nothing is left running or on disk.
func Start(ctx context.Context, o Options) (*Server, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	if o.Rows == 0 {
		o.Rows = Rows
	}
	if o.MaxConnections == 0 {
		o.MaxConnections = 200
	}
	if o.Rows < 2 || o.Rows > MaxRows || o.MaxConnections < 10 || o.MaxConnections > 5000 {
		return nil, fmt.Errorf("postgres: %d rows and %d connections: give 2 to %d rows, 10 to 5000 connections", o.Rows, o.MaxConnections, MaxRows)
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	sweep(time.Now())
	s := &Server{bin: bin, Rows: o.Rows, exited: make(chan struct{})}
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	if err := s.start(ctx, o, cred); err != nil {
		_ = s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, o Options, cred *syscall.Credential) error {
	var err error
	if s.dir, err = os.MkdirTemp("", "arena-postgres-"); err != nil {
		return err
	}
	if s.Password, err = newPassword(); err != nil {
		return err
	}
	if s.Version, err = version(s.bin); err != nil {
		return err
	}
	if s.Port, err = port(o.Port); err != nil {
		return err
	}
	if err := s.initdb(ctx, cred); err != nil {
		return err
	}
	if err := s.serve(o, cred); err != nil {
		return err
	}
	if err := s.waitReady(ctx); err != nil {
		return err
	}
	return s.load(ctx, o.Rows)
}

// staleAfter is how old a cluster's folder must be before a start may sweep it: a folder
// being made has no postmaster yet.
const staleAfter = time.Hour

// sweep removes the folders of clusters whose lab died without stopping them (the kernel
// killed the postmaster with it, the folder stayed): older than staleAfter, with no
// postmaster alive.
func sweep(now time.Time) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "arena-postgres-*"))
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || now.Sub(fi.ModTime()) < staleAfter || alive(d) {
			continue
		}
		_ = os.RemoveAll(d)
	}
}

// alive says whether the cluster in dir has a running postmaster (the first line of its
// postmaster.pid names a live process).
func alive(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		return false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	return err == nil && pid > 0 && syscall.Kill(pid, 0) == nil
}

// runAs is who the cluster runs as: this user, or Debian's postgres user when this is root
// (PostgreSQL refuses to run as root).
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("postgres: running as root, the cluster needs the postgres user Debian's package makes: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

func newPassword() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// version is what postgres --version says, without its program name.
func version(bin string) (string, error) {
	out, err := exec.Command(filepath.Join(bin, "postgres"), "--version").Output()
	if err != nil {
		return "", fmt.Errorf("postgres --version: %w", err)
	}
	v := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(out)), "postgres (PostgreSQL)"))
	return "PostgreSQL " + v, nil
}

// port is p when it is free on 127.0.0.1 (a clear error when not), or a free one for 0.
func port(p int) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		return 0, fmt.Errorf("postgres: port %d on 127.0.0.1 is in use: give another, or 0 for any free port", p)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// own hands path to the cluster's user.
func own(path string, cred *syscall.Credential) error {
	if cred == nil {
		return nil
	}
	return os.Chown(path, int(cred.Uid), int(cred.Gid))
}

// initdb makes the cluster: the arena role with its password, password authentication
// (scram-sha-256) for every connection, no unix socket.
func (s *Server) initdb(ctx context.Context, cred *syscall.Credential) error {
	if err := own(s.dir, cred); err != nil {
		return err
	}
	pw := filepath.Join(s.dir, "pw")
	if err := os.WriteFile(pw, []byte(s.Password+"\n"), 0o600); err != nil {
		return err
	}
	if err := own(pw, cred); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "initdb"), "-D", filepath.Join(s.dir, "data"), "-U", User,
		"--pwfile", pw, "--auth", "scram-sha-256", "--encoding", "UTF8", "--locale", "C", "--no-sync")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	cmd.Dir = s.dir
	out, err := cmd.CombinedOutput()
	_ = os.Remove(pw)
	if err != nil {
		return fmt.Errorf("postgres: initdb: %v\n%s", err, lastLines(string(out), 10))
	}
	return nil
}

// serve starts the postmaster, pinned, in a process group of its own (the terminal's Ctrl-C
// reaches the lab, which stops it; the lab's death kills it).
func (s *Server) serve(o Options, cred *syscall.Credential) error {
	s.Settings = map[string]string{"listen_addresses": "127.0.0.1", "port": strconv.Itoa(s.Port),
		"unix_socket_directories": "", "max_connections": strconv.Itoa(o.MaxConnections)}
	args := []string{"-D", filepath.Join(s.dir, "data")}
	for k, v := range s.Settings {
		args = append(args, "-c", k+"="+v)
	}
	for _, kv := range settings {
		s.Settings[kv[0]] = kv[1]
		args = append(args, "-c", kv[0]+"="+kv[1])
	}
	name := filepath.Join(s.bin, "postgres")
	if o.CPUs != "" {
		args = append([]string{"-c", o.CPUs, name}, args...)
		name = "taskset"
	}
	var err error
	if s.log, err = os.Create(filepath.Join(s.dir, "server.log")); err != nil {
		return err
	}
	s.cmd = exec.Command(name, args...)
	s.cmd.Dir = s.dir
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if o.Log != nil {
		s.cmd.Stdout, s.cmd.Stderr = io.MultiWriter(s.log, o.Log), io.MultiWriter(s.log, o.Log)
	}
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: cred}
	if err := s.cmd.Start(); err != nil {
		s.cmd = nil
		return fmt.Errorf("postgres: starting %s: %w", name, err)
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	return nil
}

// waitReady waits until the cluster takes a query.
func (s *Server) waitReady(ctx context.Context) error {
	for {
		if _, err := s.Query(ctx, "postgres", "SELECT 1"); err == nil {
			return nil
		}
		select {
		case <-s.exited:
			return fmt.Errorf("postgres: the server exited at start:\n%s", s.logTail())
		case <-ctx.Done():
			return fmt.Errorf("postgres: not ready within %s (%v):\n%s", startWait, ctx.Err(), s.logTail())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Query runs sql in database db with psql, as the arena role, and returns what it prints
// (unaligned, tuples only). Errors stop it, and come back with psql's message.
func (s *Server) Query(ctx context.Context, db, sql string) (string, error) {
	return s.psql(ctx, db, strings.NewReader(sql))
}

func (s *Server) psql(ctx context.Context, db string, script io.Reader) (string, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1",
		"-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-U", User, "-d", db, "-f", "-")
	cmd.Env = append(os.Environ(), "PGPASSWORD="+s.Password, "PGCONNECT_TIMEOUT=5")
	cmd.Stdin = script
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), fmt.Errorf("psql: %v: %s", err, strings.TrimSpace(errOut.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// load makes the database and its table, and copies the data set in.
func (s *Server) load(ctx context.Context, rows int) error {
	if _, err := s.Query(ctx, "postgres", "CREATE DATABASE "+Database); err != nil {
		return fmt.Errorf("postgres: making the database: %w", err)
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeScript(pw, rows)) }()
	_, err := s.psql(ctx, Database, pr)
	_ = pr.Close() // a psql that stopped early must not leave the writer waiting
	if err != nil {
		return fmt.Errorf("postgres: loading the data set: %w", err)
	}
	return nil
}

// Connections is how many client connections of the arena role the cluster holds, the
// asker's own excepted: what a contender's pool holds open.
func (s *Server) Connections(ctx context.Context) (int, error) {
	out, err := s.Query(ctx, Database, "SELECT count(*) FROM pg_stat_activity WHERE usename = '"+User+"' AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(out)
}

// logTail is the end of the server's log, for an error.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "server.log"))
	return lastLines(string(b), 15)
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// stopGrace is how long a fast shutdown may take before the server's group is killed.
const stopGrace = 10 * time.Second

// Stop shuts the cluster down (a fast shutdown: its connections are ended) and removes its
// folder; safe on a partly started server, and twice.
func (s *Server) Stop() error {
	if s == nil {
		return nil
	}
	if s.cmd != nil {
		pid := s.cmd.Process.Pid
		_ = syscall.Kill(pid, syscall.SIGINT) // the postmaster's fast shutdown
		t := time.NewTimer(stopGrace)
		select {
		case <-s.exited:
		case <-t.C:
			_ = syscall.Kill(-pid, syscall.SIGKILL)
			<-s.exited
		}
		t.Stop()
		s.cmd = nil // the postmaster waits for its backends before it exits
	}
	if s.log != nil {
		_ = s.log.Close()
		s.log = nil
	}
	if s.dir != "" {
		if err := os.RemoveAll(s.dir); err != nil {
			return fmt.Errorf("postgres: removing %s: %w", s.dir, err)
		}
		s.dir = ""
	}
	return nil
}
