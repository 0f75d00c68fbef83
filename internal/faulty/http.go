package faulty

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/arena-lab/arena/internal/downstream"
)

// HTTP faults: the contract's plain HTTP paths (the probes, /instant, /delayed, /data/{id})
// served by a small reference handler, answering wrongly and fast, as a server that sheds
// load or loses its data does. A judge that counts such answers as successes calls the
// first isolated and ranks the second by its speed.
const (
	// Unavailable503 answers /instant and both probes with an immediate 503 while any
	// /delayed request waits: ready and correct before the load, shedding during it.
	Unavailable503 Fault = "unavailable-503"
	// EmptyData answers /data/{id} with an immediate 200 and an empty body.
	EmptyData Fault = "empty-data"
)

// HTTPFaults are the faults of the plain HTTP paths.
var HTTPFaults = []Fault{Unavailable503, EmptyData}

// contractHTTP serves the contract's plain HTTP paths on mux, with fault where it has one;
// /data/{id} answers the study's record itself (no downstream call: what it costs is not
// what these faults are about).
func contractHTTP(mux *http.ServeMux, fault Fault) {
	var waiting atomic.Int64 // /delayed requests under way
	shed := func(next func(http.ResponseWriter)) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			if fault == Unavailable503 && waiting.Load() > 0 {
				http.Error(w, `{"error":"unavailable"}`, http.StatusServiceUnavailable)
				return
			}
			next(w)
		}
	}
	up := func(w http.ResponseWriter) { write(w, "application/json", []byte(`{"status":"UP"}`)) }
	mux.HandleFunc("GET /actuator/health/readiness", shed(up))
	mux.HandleFunc("GET /actuator/health/liveness", shed(up))
	mux.HandleFunc("GET /instant", shed(func(w http.ResponseWriter) { write(w, "text/plain", []byte("INSTANT")) }))
	mux.HandleFunc("GET /delayed", func(w http.ResponseWriter, r *http.Request) {
		ms := 10000
		if q := r.URL.Query().Get("ms"); q != "" {
			n, err := strconv.Atoi(q)
			if err != nil || n < 0 || n > 60000 {
				http.Error(w, `{"error":"ms must be an integer in 0..60000"}`, http.StatusBadRequest)
				return
			}
			ms = n
		}
		waiting.Add(1)
		defer waiting.Add(-1)
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			write(w, "text/plain", []byte("DELAYED"))
		case <-r.Context().Done():
		}
	})
	data := map[string][]byte{"1": downstream.Data1, "2": downstream.Data2}
	mux.HandleFunc("GET /data/{id}", func(w http.ResponseWriter, r *http.Request) {
		body, ok := data[r.PathValue("id")]
		switch {
		case !ok:
			http.Error(w, `{"error":"no such record"}`, http.StatusNotFound)
		case fault == EmptyData:
			write(w, "application/json", nil)
		default:
			write(w, "application/json", body)
		}
	})
}

func write(w http.ResponseWriter, ctype string, body []byte) {
	w.Header().Set("Content-Type", ctype)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}
