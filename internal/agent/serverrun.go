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
	"os"
	"path/filepath"
	"regexp"
	"sync"
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

// Check refuses a request the agent would not run.
func (r RunRequest) Check() error {
	if !runID.MatchString(r.Spec.ID) {
		return fmt.Errorf("run id %q: letters, digits, '.', '_' or '-'", r.Spec.ID)
	}
	if len(r.LoadAgents) > MaxParts {
		return fmt.Errorf("%d load agents: at most %d", len(r.LoadAgents), MaxParts)
	}
	for _, a := range r.LoadAgents {
		if _, _, err := net.SplitHostPort(a); err != nil {
			return fmt.Errorf("load agent %q: give host:port", a)
		}
	}
	if len(r.LoadAgents) > 0 && net.ParseIP(r.ServerAddress) == nil {
		return fmt.Errorf("server address %q: give the IP address the load agents reach the contender on", r.ServerAddress)
	}
	return nil
}

// runs tracks the server agent's run: one at a time.
type runs struct {
	mu      sync.Mutex
	current string // the id of the run under way, "" when none
}

func (s *Server) runsDir() string {
	if s.RunsDir != "" {
		return s.RunsDir
	}
	return filepath.Join(os.TempDir(), "arena-agent-runs")
}

func (s *Server) serveRun(w http.ResponseWriter, r *http.Request) {
	var req RunRequest
	if err := decodeJSON(http.MaxBytesReader(w, r.Body, maxJob), &req); err != nil {
		writeError(w, http.StatusBadRequest, "a run request is JSON: "+err.Error())
		return
	}
	if err := req.Check(); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.busy.CompareAndSwap(false, true) {
		writeError(w, http.StatusConflict, "agent "+s.Self.Name+" is busy: one run at a time")
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
	status, err := s.Run(r.Context(), req, s.runsDir(), out)
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
	dir := filepath.Join(s.runsDir(), id)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
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
	dec := json.NewDecoder(resp.Body)
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

// extractTarGz unpacks folders and regular files into dir, refusing any path that would
// leave it.
func extractTarGz(rd io.Reader, dir string) error {
	gz, err := gzip.NewReader(rd)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
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
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
			if err != nil {
				return err
			}
			_, err = io.Copy(f, tr)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return err
			}
		}
	}
}
