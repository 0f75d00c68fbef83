package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// The server agent's part of the protocol: the whole run on the contender's host.
//
//	POST /v1/run          RunRequest → the run's events as JSON, one a line: its progress
//	                      ({"progress": …}) as it comes, then its end ({"end": RunStatus})
//	GET  /v1/runs/{id}    the run's folder as a gzipped tar, once it has ended
//
// The lab on that host builds, verifies, starts, probes and stops the contender exactly as
// on one machine, and drives the load from the load agents the request names: the same
// code, not a second one. A coordinator that goes away (Ctrl-C) ends the run, which keeps
// its finished cells; the coordinator then fetches the folder.

// RunFunc carries out req's run in this process, its folder in runsDir, writing its progress
// to progress; it returns the run's status (a results.Run* status, "" when no run began) and
// its error.
type RunFunc func(ctx context.Context, req RunRequest, runsDir string, progress io.Writer) (string, error)

// RunRequest is a run for a server agent: its spec (named by the coordinator: Spec.ID), and
// the coordinator's placement, the load agents' addresses and the address they reach the
// contender on. Where the results go is the agent's.
type RunRequest struct {
	Spec          results.RunSpec `json:"spec"`
	LoadAgents    []string        `json:"load_agents"`
	ServerAddress string          `json:"server_address"`
	// Command is the coordinator's command line, for the run's record.
	Command []string `json:"command,omitempty"`
}

// RunEvent is one line of a run's answer: some of its progress, or its end.
type RunEvent struct {
	Progress string     `json:"progress,omitempty"`
	End      *RunStatus `json:"end,omitempty"`
}

// RunStatus is how a remote run ended: its status (results.RunComplete, RunInterrupted or
// RunFailed) and, when it failed, why.
type RunStatus struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

var runID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$`)

// Check refuses a request the agent would not run whatever it was started with: an id that
// is no folder's name, load agents or a server address that are not IP addresses.
func (r RunRequest) Check() error {
	if !runID.MatchString(r.Spec.ID) {
		return fmt.Errorf("run id %q: letters, digits, '.', '_' or '-'", r.Spec.ID)
	}
	if len(r.LoadAgents) > MaxParts {
		return fmt.Errorf("%d load agents: at most %d", len(r.LoadAgents), MaxParts)
	}
	for _, a := range r.LoadAgents {
		if _, _, err := splitTarget(a); err != nil {
			return fmt.Errorf("load agent %q: give IP:port", a)
		}
	}
	if len(r.LoadAgents) > 0 && net.ParseIP(r.ServerAddress) == nil {
		return fmt.Errorf("server address %q: give the IP address the load agents reach the contender on", r.ServerAddress)
	}
	if ip := net.ParseIP(r.ServerAddress); r.ServerAddress != "" && (ip == nil || ip.IsUnspecified() || ip.IsMulticast()) {
		return fmt.Errorf("server address %q: give the one IP address of this host the load agents reach the contender on", r.ServerAddress)
	}
	return nil
}

// addressVars are the contract variables that name an address the contender listens on or
// calls: the lab sets them itself (BIND_ADDRESS from the server address, the downstream's
// and the database's), and a request that sets them would open the contender to every
// interface or send its calls where the request chose. PPROF_ADDR is allowed on loopback.
var addressVars = []string{"BIND_ADDRESS", "DOWNSTREAM_URL", "DB_URL", "DB_POOL"}

// checkRun refuses a request that would send traffic anywhere this agent was not started
// allowing: the spec's target (its address derived from its URL, then held to the
// allow-list, as a load job's), a server address not its own, variables that name addresses;
// and a target's pid or cgroup unless it was started allowing them (--allow-target-probe).
func (s *Server) checkRun(ctx context.Context, r RunRequest) error {
	if err := r.Check(); err != nil {
		return err
	}
	for k, v := range r.Spec.Env {
		if slices.Contains(addressVars, k) {
			return fmt.Errorf("env %s: the lab sets it itself on a server agent", k)
		}
		if k == "PPROF_ADDR" {
			if ip, _, err := splitTarget(v); err != nil || !ip.IsLoopback() {
				return fmt.Errorf("env PPROF_ADDR=%s: give a loopback IP:port (the profile is read here)", v)
			}
		}
	}
	if r.ServerAddress != "" && len(s.Targets) > 0 && !s.allowsHost(ctx, r.ServerAddress) {
		return fmt.Errorf("server address %s: this agent's contender listens only on %s, the address(es) it was started with", r.ServerAddress, strings.Join(s.Targets, ", "))
	}
	t := r.Spec.Target
	if t == nil {
		return nil
	}
	if (t.Pid != 0 || t.Cgroup != "") && !s.AllowTargetProbe {
		return errors.New("target pid or cgroup: this agent probes no process or cgroup of its host (start it with --allow-target-probe to allow it)")
	}
	addr, err := TargetAddr(t.URL)
	if err != nil {
		return err
	}
	if t.Addr != addr {
		return fmt.Errorf("target addr %q is not its URL's %s", t.Addr, addr)
	}
	return s.checkTarget(ctx, addr)
}

// allowsHost is whether ip is the host of one of the agent's allowed addresses, whatever
// their ports.
func (s *Server) allowsHost(ctx context.Context, ip string) bool {
	want := net.ParseIP(ip)
	for _, raw := range s.Targets {
		if a, err := ParseAllowed(raw); err == nil && slices.ContainsFunc(a.ips(ctx), want.Equal) {
			return true
		}
	}
	return false
}

// TargetAddr is the IP:port of a target's http:// URL: the address every load, the watchdog
// and verify go to, derived here, never taken as sent. localhost is 127.0.0.1; any other name
// is refused, since it would be resolved wherever the URL's sender chose.
func TargetAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("target URL %q: %w", raw, err)
	}
	if u.Scheme != "http" || u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/") {
		return "", fmt.Errorf("target URL %q: give http://IP:port alone", raw)
	}
	host := u.Hostname()
	if host == "localhost" {
		host = "127.0.0.1"
	}
	addr := net.JoinHostPort(host, u.Port())
	if _, _, err := splitTarget(addr); err != nil {
		return "", fmt.Errorf("target URL %q: %w", raw, err)
	}
	return addr, nil
}

// runs tracks the server agent's run: one at a time.
type runs struct {
	mu      sync.Mutex
	current string // the id of the run under way, "" when none
}

// runsDir is the folder of the agent's runs: RunsDir, or a folder made for this agent under
// the system's temp folder the first time (os.MkdirTemp: a fixed name there is one another
// user could make first, or link to a folder of theirs). It is refused unless it is a folder,
// not a link, of the agent's own user (CheckRunsDir).
func (s *Server) runsDir() (string, error) {
	s.runs.mu.Lock()
	defer s.runs.mu.Unlock()
	if s.RunsDir == "" {
		dir, err := os.MkdirTemp("", "arena-agent-runs-")
		if err != nil {
			return "", fmt.Errorf("making the agent's runs folder: %w", err)
		}
		s.RunsDir = dir
	}
	return s.RunsDir, CheckRunsDir(s.RunsDir)
}

// CheckRunsDir refuses a runs folder, or a run's folder in it, that another user could have
// chosen: a symbolic link (followed, the run would be written where the link's maker said)
// or a folder another user owns. A folder that does not exist yet passes: the lab makes it.
func CheckRunsDir(dir string) error {
	st, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	case st.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("runs folder %s is a symbolic link: give the folder itself (a link is another's choice of where the run goes)", dir)
	case !st.IsDir():
		return fmt.Errorf("runs folder %s is not a folder", dir)
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("runs folder %s belongs to user %d, not this agent's %d: give a folder of this user's", dir, sys.Uid, os.Geteuid())
	}
	if st.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("runs folder %s has mode %04o: others may write in it (and link a run's folder anywhere); chmod go-w %s", dir, st.Mode().Perm(), dir)
	}
	return nil
}

func (s *Server) serveRun(w http.ResponseWriter, r *http.Request) {
	var req RunRequest
	if err := decodeJSON(http.MaxBytesReader(w, r.Body, maxJob), &req); err != nil {
		writeError(w, http.StatusBadRequest, "a run request is JSON: "+err.Error())
		return
	}
	if err := s.checkRun(r.Context(), req); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.busy.CompareAndSwap(false, true) {
		writeError(w, http.StatusConflict, "agent "+s.Self.Name+" is busy: one run at a time")
		return
	}
	runsDir, err := s.runsDir()
	if err == nil {
		err = CheckRunsDir(filepath.Join(runsDir, req.Spec.ID))
	}
	if err != nil {
		s.busy.Store(false)
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	s.runs.mu.Lock()
	s.runs.current = req.Spec.ID
	s.runs.mu.Unlock()
	done := sync.OnceFunc(func() {
		s.runs.mu.Lock()
		s.runs.current = ""
		s.runs.mu.Unlock()
		s.busy.Store(false)
	})
	defer done()
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	out := &eventWriter{enc: json.NewEncoder(w), f: http.NewResponseController(w)}
	status, err := s.Run(r.Context(), req, runsDir, out)
	end := RunStatus{Status: status}
	if err != nil {
		end.Error = err.Error()
		if end.Status == "" || end.Status == results.RunRunning {
			end.Status = results.RunFailed
		}
	}
	done() // free before the end is sent: the coordinator fetches the folder at once
	out.end(end)
}

func (s *Server) serveRunFolder(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if !runID.MatchString(id) {
		writeError(w, http.StatusBadRequest, "no such run id")
		return
	}
	s.runs.mu.Lock()
	running := s.runs.current == id
	s.runs.mu.Unlock()
	if running {
		writeError(w, http.StatusConflict, "run "+id+" is still under way")
		return
	}
	runsDir, err := s.runsDir()
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	dir := filepath.Join(runsDir, id)
	if st, err := os.Lstat(dir); err != nil || !st.IsDir() || CheckRunsDir(dir) != nil {
		writeError(w, http.StatusNotFound, "no run "+id+" on agent "+s.Self.Name)
		return
	}
	w.Header().Set("Content-Type", "application/gzip")
	w.WriteHeader(http.StatusOK)
	_ = writeTarGz(w, dir) // a cut archive fails the coordinator's extraction
}

// eventWriter sends each write of progress at once, as a RunEvent: the coordinator shows
// the progress as it comes.
type eventWriter struct {
	mu  sync.Mutex
	enc *json.Encoder
	f   *http.ResponseController
}

func (e *eventWriter) Write(p []byte) (int, error) {
	if err := e.send(RunEvent{Progress: string(p)}); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (e *eventWriter) end(s RunStatus) { _ = e.send(RunEvent{End: &s}) }

func (e *eventWriter) send(ev RunEvent) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	err := e.enc.Encode(ev)
	_ = e.f.Flush()
	return err
}

// writeTarGz writes dir's regular files and folders, paths relative to dir.
func writeTarGz(w io.Writer, dir string) error {
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil || rel == "." {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() && !info.IsDir() {
			return nil // no links or devices leave the host
		}
		hdr, err := tar.FileInfoHeader(info, "")
		if err != nil {
			return err
		}
		hdr.Name = filepath.ToSlash(rel)
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if info.IsDir() {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.Copy(tw, f)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// RunRemote asks the server agent to carry out the run and copies its progress to progress
// as it comes. It returns how the run ended, or an error when the run could not be asked for
// or its end never came (the connection cut). ctx's end (Ctrl-C) ends the remote run, which
// keeps its finished cells: fetch them with FetchRun.
func (r *Remote) RunRemote(ctx context.Context, req RunRequest, progress io.Writer) (RunStatus, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return RunStatus{}, err
	}
	hreq, err := r.request(ctx, http.MethodPost, "/v1/run", bytes.NewReader(body))
	if err != nil {
		return RunStatus{}, err
	}
	resp, err := r.client.Do(hreq)
	if err != nil {
		return RunStatus{}, fmt.Errorf("server agent %s: %w", r.hello.Name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var f Failure
		if json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&f) == nil && f.Error != "" {
			return RunStatus{}, fmt.Errorf("server agent %s: %s", r.hello.Name, f.Error)
		}
		return RunStatus{}, fmt.Errorf("server agent %s: %s", r.hello.Name, resp.Status)
	}
	dec := json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)) // the run's progress lines and its end
	for {
		var ev RunEvent
		if err := dec.Decode(&ev); err != nil {
			if ctx.Err() != nil {
				return RunStatus{}, ctx.Err()
			}
			return RunStatus{}, fmt.Errorf("server agent %s: the run's events ended without its end (%v): the connection was cut", r.hello.Name, err)
		}
		if ev.End != nil {
			return *ev.End, nil
		}
		io.WriteString(progress, ev.Progress)
	}
}

// FetchRun copies the run's folder from the server agent into runsDir/id, waiting (up to
// wait) while the run is still ending, and returns the folder.
func (r *Remote) FetchRun(ctx context.Context, id, runsDir string, wait time.Duration) (string, error) {
	deadline := time.Now().Add(wait)
	for {
		req, err := r.request(ctx, http.MethodGet, "/v1/runs/"+id, nil)
		if err != nil {
			return "", err
		}
		resp, err := r.client.Do(req)
		if err != nil {
			return "", fmt.Errorf("fetching run %s from %s: %w", id, r.hello.Name, err)
		}
		if resp.StatusCode == http.StatusConflict && time.Now().Before(deadline) {
			resp.Body.Close()
			select {
			case <-time.After(300 * time.Millisecond):
				continue
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
		if resp.StatusCode != http.StatusOK {
			var f Failure
			_ = json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&f)
			resp.Body.Close()
			return "", fmt.Errorf("fetching run %s from %s: %s %s", id, r.hello.Name, resp.Status, f.Error)
		}
		dir := filepath.Join(runsDir, id)
		err = extractTarGz(resp.Body, dir)
		resp.Body.Close()
		if err != nil {
			return "", fmt.Errorf("fetching run %s from %s: %w", id, r.hello.Name, err)
		}
		return dir, nil
	}
}

// The bounds of a run's folder the coordinator unpacks from a server agent: far above a
// run's results, logs and profiles, far below what would fill the coordinator's disk
// (variables so that a test can reach them).
var (
	maxArchiveBytes int64 = 4 << 30
	maxArchiveFiles       = 20_000
)

// extractTarGz unpacks folders and regular files into dir, refusing any path that would
// leave it (absolute, or with ..), links and other kinds of file, more than maxArchiveFiles
// entries or maxArchiveBytes of content, and a dir that is a link already.
func extractTarGz(rd io.Reader, dir string) error {
	if err := CheckRunsDir(dir); err != nil {
		return err
	}
	gz, err := gzip.NewReader(rd)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var files int
	left := maxArchiveBytes
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if files++; files > maxArchiveFiles {
			return fmt.Errorf("the archive holds more than %d entries", maxArchiveFiles)
		}
		name := filepath.FromSlash(hdr.Name)
		if !filepath.IsLocal(name) {
			return fmt.Errorf("the archive names %q, outside the run's folder", hdr.Name)
		}
		path := filepath.Join(dir, name)
		switch hdr.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(path, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if hdr.Size > left {
				return fmt.Errorf("the archive's files pass %d bytes", maxArchiveBytes)
			}
			left -= hdr.Size
			if err := extractFile(tr, path); err != nil {
				return err
			}
		default:
			return fmt.Errorf("the archive holds %q of type %q: a run's folder holds only files and folders, no links", hdr.Name, hdr.Typeflag)
		}
	}
}

// extractFile writes the archive's current file to path, over a file of the run's fetched
// before (a resumed run), never through a link.
func extractFile(tr *tar.Reader, path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, tr)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
