package agent

import (
	"encoding/json"
	"net/http"
	"sync/atomic"
	"time"
)

// Server is an agent's side of the protocol: it answers who it is and what its clock reads,
// and runs one job at a time, for as long as the coordinator's request stays open (a
// coordinator that goes away, Ctrl-C say, ends the load).
type Server struct {
	Self    Hello
	Resolve Resolver
	// Run and RunsDir make it a server agent too: the whole run on its host (serverrun.go).
	Run     RunFunc
	RunsDir string
	busy    atomic.Bool
	runs    runs
}

// maxJob bounds a job's JSON: a job is a few hundred bytes.
const maxJob = 1 << 20

// Handler serves the protocol under /v1/.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/hello", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, s.Self) })
	mux.HandleFunc("GET /v1/clock", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, Clock{UnixNano: time.Now().UnixNano()})
	})
	mux.HandleFunc("POST /v1/load", s.serveLoad)
	mux.HandleFunc("POST /v1/run", s.serveRun)
	mux.HandleFunc("GET /v1/runs/{id}", s.serveRunFolder)
	return mux
}

func (s *Server) serveLoad(w http.ResponseWriter, r *http.Request) {
	var job Job
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxJob)).Decode(&job); err != nil {
		writeError(w, http.StatusBadRequest, "a job is JSON: "+err.Error())
		return
	}
	if !s.busy.CompareAndSwap(false, true) {
		writeError(w, http.StatusConflict, "agent "+s.Self.Name+" is running another job: one coordinator at a time")
		return
	}
	defer s.busy.Store(false)
	share, err := RunJob(r.Context(), job, s.Resolve, s.Self)
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

// Failure is the body of every answer but 200.
type Failure struct {
	Error string `json:"error"`
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, Failure{Error: msg})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v) // the coordinator sees a cut answer as an error
}
