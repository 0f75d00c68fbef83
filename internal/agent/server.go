package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/arena-lab/arena/internal/load"
)

// Server is an agent's side of the protocol: it answers who it is and what its clock reads,
// and runs one job at a time, for as long as the coordinator's request stays open (a
// coordinator that goes away, Ctrl-C say, ends the load). It answers only calls that carry
// Secret (guard.go), and sends load only to Targets.
type Server struct {
	Self    Hello
	Resolve Resolver
	// Secret is the run's secret every call must carry; an agent without one answers nobody.
	Secret string
	// Targets are the server addresses the agent may send load to (ParseAllowed: IP or name
	// resolved at each job, with a port or not); none means nowhere.
	Targets []string
	// AllowTargetProbe lets a run's target name a pid or a cgroup of this host to probe.
	AllowTargetProbe bool
	// Run and RunsDir make it a server agent: the whole run on its host (serverrun.go). A
	// load agent has no Run, and no /v1/run or /v1/runs route.
	Run     RunFunc
	RunsDir string
	busy    atomic.Bool
	runs    runs
}

// maxJob bounds a job's JSON: a job is a few hundred bytes.
const maxJob = 1 << 20

// Handler serves the protocol under /v1/ to callers holding the secret.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/hello", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, s.Self) })
	mux.HandleFunc("GET /v1/clock", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, Clock{UnixNano: time.Now().UnixNano()})
	})
	mux.HandleFunc("POST /v1/load", s.serveLoad)
	if s.Run != nil { // a load agent is only a load agent
		mux.HandleFunc("POST /v1/run", s.serveRun)
		mux.HandleFunc("GET /v1/runs/{id}", s.serveRunFolder)
	}
	return s.authorize(mux)
}

func (s *Server) serveLoad(w http.ResponseWriter, r *http.Request) {
	var job Job
	if err := decodeJSON(http.MaxBytesReader(w, r.Body, maxJob), &job); err != nil {
		writeError(w, http.StatusBadRequest, "a job is JSON: "+err.Error())
		return
	}
	ld, err := s.bounded(r.Context(), job)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !s.busy.CompareAndSwap(false, true) {
		writeError(w, http.StatusConflict, "agent "+s.Self.Name+" is running another job")
		return
	}
	defer s.busy.Store(false)
	share, err := RunJob(r.Context(), job, func(Job) (load.Load, error) { return ld, nil }, s.Self)
	if err != nil {
		status := http.StatusUnprocessableEntity
		if r.Context().Err() != nil { // the coordinator went away
			status = http.StatusServiceUnavailable
		}
		writeError(w, status, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, share)
}

// bounded is the load job names, once the job and the load are found within the agent's
// bounds (guard.go).
func (s *Server) bounded(ctx context.Context, job Job) (load.Load, error) {
	if err := s.checkJob(ctx, job); err != nil {
		return nil, err
	}
	if s.Resolve == nil {
		return nil, errors.New("agent " + s.Self.Name + " resolves no loads")
	}
	ld, err := s.Resolve(job)
	if err != nil {
		return nil, err
	}
	if err := checkLoad(ld); err != nil {
		return nil, err
	}
	return ld, nil
}

// Failure is the body of every answer but 200.
type Failure struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, Failure{Error: msg})
}

// decodeJSON reads rd's one JSON value into v, and refuses anything after it: a body that
// is a job and something else is no job (json.Decoder alone stops at the value's end).
func decodeJSON(rd io.Reader, v any) error {
	dec := json.NewDecoder(rd)
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more after the JSON value")
	}
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the coordinator sees a cut answer as an error
}
