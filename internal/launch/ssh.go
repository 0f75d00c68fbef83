package launch

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// SSHLauncher starts load agents on client hosts with the system's ssh and scp.
type SSHLauncher struct {
	SSH          []string      // base arguments of every ssh and scp call, e.g. Hosts.SSHArgs()
	Binary       string        // local path of the arena binary to copy to each host
	Stderr       io.Writer     // each agent's stderr, lines prefixed "[name] "; nil drops it
	StartTimeout time.Duration // how long an agent may take to listen; 0 means 20 s
	StopTimeout  time.Duration // how long an agent may take to exit once told; 0 means 5 s
	// Secret is the run's secret, written to each agent's stdin (never its arguments, which
	// any user of the host may read); ServerAddress the one address the agents send load to.
	Secret        string
	ServerAddress string

	mu        sync.Mutex // serialises writes to Stderr across agents
	dirPrefix string     // where agent folders go: "/tmp/arena-agent-" unless a test says
}

// Agent says where one started agent is.
type Agent struct {
	Name string // the client host's name
	Host string // its ssh destination
	Addr string // host:port the coordinator dials
	CPUs string // the taskset list it runs on
	Dir  string // the remote folder holding its binary, removed by Stop
	PID  int    // the agent's process id on its host
}

// Remote is an agent running on a client host, tied to the ssh session that started it: the
// agent exits when that session's stdin closes, which Stop does.
type Remote struct {
	Agent

	l        *SSHLauncher
	cmd      *exec.Cmd      // the long-lived ssh; nil until started
	stdin    io.WriteCloser // kept open while the agent should run
	exited   chan struct{}  // closed when the ssh process has exited
	waitErr  error          // the ssh process's exit, valid once exited is closed
	tail     *tailBuffer    // the last lines of ssh's stderr, for errors
	dirMade  bool           // the remote mkdir may have run: Stop removes Dir
	prepared bool           // the remote mkdir surely ran

	stopOnce sync.Once
	stopErr  error
	stopped  chan struct{}
}

// Start copies the binary to each client host, starts its agent there pinned with taskset,
// and returns once every agent listens. The agents run until Stop, or until ctx is done, when
// they are stopped as by Stop. If any host fails, those started are stopped and the error
// names the host and quotes what ssh said.
func (l *SSHLauncher) Start(ctx context.Context, clients []ClientHost) ([]*Remote, error) {
	if l.Binary == "" {
		return nil, errors.New("launch: no arena binary to copy (SSHLauncher.Binary)")
	}
	if fi, err := os.Stat(l.Binary); err != nil || fi.IsDir() {
		return nil, fmt.Errorf("launch: the arena binary %q to copy to the client hosts is not a file: build it with ./arena build", l.Binary)
	}
	if len(clients) == 0 {
		return nil, errors.New("launch: no client hosts to start agents on")
	}
	prefix := l.dirPrefix
	if prefix == "" {
		prefix = "/tmp/arena-agent-"
	}
	// The first host that fails cuts the others' starts short: they are stopped anyway.
	sctx, cancelStart := context.WithCancel(ctx)
	defer cancelStart()
	remotes := make([]*Remote, len(clients))
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, c := range clients {
		r := &Remote{
			Agent:   Agent{Name: c.Name, Host: c.SSH, Addr: c.Addr(), CPUs: c.CPUs, Dir: prefix + randomHex(8)},
			l:       l,
			exited:  make(chan struct{}),
			stopped: make(chan struct{}),
			tail:    &tailBuffer{max: 20},
		}
		remotes[i] = r
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.start(sctx, c); err != nil {
				if sctx.Err() != nil && ctx.Err() == nil && errors.Is(err, context.Canceled) {
					return // cut short by another host's failure, which is the one to report
				}
				errs[i] = fmt.Errorf("launch: client %s (ssh %s): %w", c.Name, c.SSH, err)
				cancelStart()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("launch: starting agents: %w", ctx.Err())
		}
		return nil, errors.Join(err, stopAll(remotes))
	}
	for _, r := range remotes {
		go func() {
			select {
			case <-ctx.Done():
				_ = r.Stop()
			case <-r.stopped:
			}
		}()
	}
	return remotes, nil
}

// stopAll stops the agents of a failed Start. It reports what it could not clean on hosts
// where the folder surely was made: on the others the cleaning fails as the start did.
func stopAll(remotes []*Remote) error {
	errs := make([]error, len(remotes))
	var wg sync.WaitGroup
	for i, r := range remotes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.Stop(); err != nil && r.prepared {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// remoteAgent is the name of the binary in its remote folder; Stop's check of /proc/PID/exe
// relies on it.
const remoteAgent = "arena"

// install makes the agent's folder on c's host and copies the binary into it.
func (r *Remote) install(ctx context.Context, c ClientHost) error {
	// One round trip checks taskset and makes the folder; mkdir fails on an existing one, so
	// a folder is never shared with anything else.
	//
	// It is not cut short by ctx: ssh killed locally does not stop a mkdir already under
	// way on the host, which could then make the folder after Stop removed it. It is short,
	// and bounded by its own timeout.
	r.dirMade = true
	prep := "command -v taskset >/dev/null 2>&1 || { echo 'taskset is not installed on this host: install util-linux' >&2; exit 3; }; " +
		"mkdir -m 700 " + shellQuote(r.Dir)
	prepCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	out, err := r.l.run(prepCtx, r.l.sshArgs(c.SSH, prep)...)
	cancel()
	if err != nil {
		hint := ""
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 255 { // ssh's own failure
			hint = fmt.Sprintf("; check that \"ssh %s\" logs in without a prompt", strings.Join(append(append([]string{}, r.l.SSH...), c.SSH, "true"), " "))
		}
		return fmt.Errorf("preparing %s: %v: %s%s", r.Dir, err, out, hint)
	}
	r.prepared = true
	if err := ctx.Err(); err != nil {
		return err
	}
	// A copy cut short leaves no folder behind: the host's end of scp writes into the
	// folder but never makes it, so Stop's removal holds.
	scp := append(append([]string{}, r.l.SSH...), "-q", "-o", "BatchMode=yes", "--", r.l.Binary, scpTarget(c.SSH, r.Dir+"/"+remoteAgent))
	if out, err := r.l.runCmd(ctx, "scp", scp...); err != nil {
		return fmt.Errorf("copying %s: %v: %s", r.l.Binary, err, out)
	}
	return nil
}

func (r *Remote) start(ctx context.Context, c ClientHost) error {
	if err := checkDestination(c.SSH); err != nil {
		return err
	}
	if err := checkCPUList(c.CPUs); err != nil {
		return fmt.Errorf("cpus %q: %w", c.CPUs, err)
	}
	if err := r.install(ctx, c); err != nil {
		return err
	}

	// An agent with a Root runs there, the lab's folder on that host (a server agent).
	root := ""
	if c.Root != "" {
		root = "cd " + shellQuote(c.Root) + " && ARENA_ROOT=" + shellQuote(c.Root) + " "
	}
	cmd := exec.Command("ssh", r.l.sshArgs(c.SSH, r.l.agentCommand(r.Dir, root, c))...)
	// Its own process group: a Ctrl-C at the terminal reaches the coordinator, which stops
	// the agent in order, instead of killing ssh first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting ssh: %w", err)
	}
	r.cmd, r.stdin = cmd, stdin
	// The secret's line is the first the agent reads (--secret-file -); the rest of stdin
	// stays open for --exit-with-stdin. A pipe of 64 KiB takes it without blocking.
	if _, err := io.WriteString(stdin, r.l.Secret+"\n"); err != nil {
		return fmt.Errorf("handing the agent its secret: %w", err)
	}

	listening := make(chan struct{})
	var pipes sync.WaitGroup
	pipes.Add(2)
	go func() {
		defer pipes.Done()
		r.readStdout(stdout, listening)
	}()
	go func() {
		defer pipes.Done()
		r.readStderr(stderr)
	}()
	go func() {
		pipes.Wait() // Wait closes the pipes: read them to the end first
		r.waitErr = cmd.Wait()
		close(r.exited)
	}()

	timeout := r.l.StartTimeout
	if timeout == 0 {
		timeout = 20 * time.Second
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case <-listening:
		return nil
	case <-r.exited:
		hint := ""
		if strings.Contains(r.tail.String(), "taskset:") {
			hint = fmt.Sprintf("; check cpus %q against the CPUs that host has (nproc there)", c.CPUs)
		}
		return fmt.Errorf("the agent ended before it listened (%v): %s%s", r.waitErr, r.tail.String(), hint)
	case <-timer.C:
		return fmt.Errorf("the agent did not listen on %s within %s: %s", c.Addr(), timeout, r.tail.String())
	case <-ctx.Done():
		return ctx.Err()
	}
}

// agentCommand is the shell command that starts the agent in dir: it reports its pid, then
// execs into taskset, which execs into the agent, so the agent keeps the pid and Stop can
// make sure of it after a dropped session. The secret comes on stdin, not here.
func (l *SSHLauncher) agentCommand(dir, root string, c ClientHost) string {
	role := "load"
	if c.Server {
		role = "server"
	}
	cmd := "echo arena-launch-pid $$; chmod 700 " + shellQuote(dir+"/"+remoteAgent) + " && " + root + "exec taskset -c " + shellQuote(c.CPUs) + " " +
		shellQuote(dir+"/"+remoteAgent) + " agent --listen " + shellQuote(c.Addr()) + " --name " + shellQuote(c.Name) + " --exit-with-stdin" +
		" --secret-file - --role " + role +
		" --runs " + shellQuote(dir+"/runs") // a server agent's runs go with the folder Stop removes
	if l.ServerAddress != "" {
		cmd += " --server-address " + shellQuote(l.ServerAddress)
	}
	return cmd
}

// readStdout waits for the agent's pid and its "listening on" line, then passes on whatever
// else it prints as it would stderr.
func (r *Remote) readStdout(stdout io.Reader, listening chan struct{}) {
	sc := bufio.NewScanner(stdout)
	said := false
	for sc.Scan() {
		line := sc.Text()
		if pid, ok := strings.CutPrefix(line, "arena-launch-pid "); ok && r.PID == 0 {
			r.PID, _ = strconv.Atoi(strings.TrimSpace(pid))
			continue
		}
		if !said && strings.HasPrefix(line, "arena agent ") && strings.Contains(line, " listening on ") {
			said = true
			close(listening)
			continue
		}
		r.l.log(r.Name, line)
	}
}

func (r *Remote) readStderr(stderr io.Reader) {
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		r.tail.add(sc.Text())
		r.l.log(r.Name, sc.Text())
	}
}

// Done is closed when the agent's ssh session has ended, whether by Stop or not: an agent
// that dies during a run shows here.
func (r *Remote) Done() <-chan struct{} { return r.exited }

// Err tells, once Done is closed, how the ssh session ended, with ssh's last words.
func (r *Remote) Err() error {
	select {
	case <-r.exited:
	default:
		return nil
	}
	if r.waitErr == nil {
		return nil
	}
	return fmt.Errorf("agent %s (ssh %s): %v: %s", r.Name, r.Host, r.waitErr, r.tail.String())
}

// Stop ends the agent and removes its folder: it closes the session's stdin, which the agent
// exits on, waits for the session to end, kills ssh if it does not, then over a fresh ssh
// session kills the agent's pid should it still run and removes the folder. It may be called
// more than once and from several goroutines; all return once the first has finished.
func (r *Remote) Stop() error {
	r.stopOnce.Do(func() {
		defer close(r.stopped)
		var errs []error
		if r.cmd != nil {
			_ = r.stdin.Close()
			wait := r.l.StopTimeout
			if wait == 0 {
				wait = 5 * time.Second
			}
			select {
			case <-r.exited:
			case <-time.After(wait):
				_ = r.cmd.Process.Kill()
				<-r.exited
			}
		}
		if r.dirMade {
			if err := r.clean(); err != nil {
				errs = append(errs, err)
			}
		}
		r.stopErr = errors.Join(errs...)
	})
	return r.stopErr
}

// clean makes sure the agent is gone and removes its folder. It checks that the pid still
// runs our binary before it signals it, so a reused pid is left alone. The removal is tried
// twice: a copy cut short may still be writing its last file as rm empties the folder.
func (r *Remote) clean() error {
	pid := "0"
	if r.PID > 0 {
		pid = strconv.Itoa(r.PID)
	}
	exe := shellQuote(r.Dir + "/" + remoteAgent)
	script := "p=" + pid + "; " +
		"case \"$(readlink /proc/$p/exe 2>/dev/null)\" in " + exe + "|" + exe + "' (deleted)') " +
		"kill $p 2>/dev/null; i=0; while [ -d /proc/$p ] && [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done; kill -9 $p 2>/dev/null;; esac; " +
		"rm -rf " + shellQuote(r.Dir) + " 2>/dev/null || { sleep 0.5; rm -rf " + shellQuote(r.Dir) + "; }"
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if out, err := r.l.run(ctx, r.l.sshArgs(r.Host, script)...); err != nil {
		return fmt.Errorf("launch: client %s (ssh %s): removing %s: %v: %s; remove it by hand", r.Name, r.Host, r.Dir, err, out)
	}
	return nil
}

// sshArgs are the arguments of one ssh call running a shell command on dest.
func (l *SSHLauncher) sshArgs(dest, command string) []string {
	args := append([]string{}, l.SSH...)
	args = append(args, "-T", "-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
		"-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "--", dest, command)
	return args
}

// run runs one short ssh call and returns its trimmed output on failure.
func (l *SSHLauncher) run(ctx context.Context, args ...string) (string, error) {
	return l.runCmd(ctx, "ssh", args...)
}

func (l *SSHLauncher) runCmd(ctx context.Context, name string, args ...string) (string, error) {
	var out bytes.Buffer
	c := exec.CommandContext(ctx, name, args...)
	c.Stdout, c.Stderr = &out, &out
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // as the agent's ssh: see start
	c.WaitDelay = 2 * time.Second
	err := c.Run()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return strings.TrimSpace(out.String()), err
}

func (l *SSHLauncher) log(name, line string) {
	if l.Stderr == nil {
		return
	}
	l.mu.Lock()
	fmt.Fprintf(l.Stderr, "[%s] %s\n", name, line)
	l.mu.Unlock()
}

// scpTarget writes dest:path, bracketing a bare IPv6 address as scp needs.
func scpTarget(dest, path string) string {
	user, host := "", dest
	if i := strings.LastIndex(dest, "@"); i >= 0 {
		user, host = dest[:i+1], dest[i+1:]
	}
	if strings.Contains(host, ":") && !strings.HasPrefix(host, "[") {
		host = "[" + host + "]"
	}
	return user + host + ":" + path
}

// shellQuote quotes s for a POSIX shell, the remote end of every ssh command.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tailBuffer keeps the last lines written to it.
type tailBuffer struct {
	mu    sync.Mutex
	max   int
	lines []string
}

func (t *tailBuffer) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, line)
	if len(t.lines) > t.max {
		t.lines = t.lines[len(t.lines)-t.max:]
	}
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lines) == 0 {
		return "ssh said nothing"
	}
	return strings.Join(t.lines, " / ")
}
