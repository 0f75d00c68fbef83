// Command server is the go-nethttp contender: Go's net/http server, a goroutine per request,
// blocking waits and blocking calls (see README.md).
package main

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

//go:embed resources/*.json
var resourceFiles embed.FS

const (
	downstreamTimeout = 2 * time.Second // the whole /data/{id} call, body included
	shutdownGrace     = 2 * time.Second // open requests get this long after SIGTERM
)

// Data is the typed shape of /resources/dataN.json: /data/{id} decodes into it and encodes it back.
type Data struct {
	ID     int      `json:"id"`
	Value  string   `json:"value"`
	Active bool     `json:"active"`
	Props  []string `json:"props"`
}

type server struct {
	downstream string
	client     *http.Client
	resources  map[string][]byte
	mux        *http.ServeMux
	chat       *chatHub
	stream     *streamHub
	db         *database
}

func newServer(downstream string, backpressure bool, db *database) (*server, error) {
	// One shared client. All its calls go to one host, so that host may keep as many idle
	// connections as the whole pool (DefaultMaxIdleConnsPerHost is 2, which would close most
	// connections under concurrent load instead of reusing them).
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = transport.MaxIdleConns
	s := &server{
		downstream: strings.TrimRight(downstream, "/"),
		client:     &http.Client{Transport: transport, Timeout: downstreamTimeout},
		resources:  map[string][]byte{},
		mux:        http.NewServeMux(),
		chat:       newChatHub(),
		stream:     newStreamHub(backpressure),
		db:         db,
	}
	files, err := fs.Glob(resourceFiles, "resources/*.json")
	if err != nil {
		return nil, err
	}
	for _, f := range files {
		if s.resources[strings.TrimPrefix(f, "resources/")], err = resourceFiles.ReadFile(f); err != nil {
			return nil, err
		}
	}

	s.mux.HandleFunc("GET /actuator/health/liveness", up)
	s.mux.HandleFunc("GET /actuator/health/readiness", up)
	s.mux.HandleFunc("GET /instant", func(w http.ResponseWriter, r *http.Request) { writeText(w, "INSTANT") })
	s.mux.HandleFunc("GET /delayed", waitThen(10_000, "DELAYED"))
	s.mux.HandleFunc("GET /sleep", waitThen(100, "SLEPT"))
	s.mux.HandleFunc("GET /resources/{name}", s.resource)
	s.mux.HandleFunc("GET /data/{id}", s.data)
	s.mux.HandleFunc("GET /db/slow", s.db.slow) // see db.go
	s.mux.HandleFunc("GET /db/{id}", s.db.row)
	s.mux.HandleFunc("GET /chat", s.chat.serve)     // WebSocket, see chat.go
	s.mux.HandleFunc("GET /stream", s.stream.serve) // WebSocket, see stream.go
	s.mux.HandleFunc("GET /stream/stats", s.stream.stats)
	s.mux.HandleFunc("/", s.fallback)
	return s, nil
}

// closeAfterChunked closes the connection after answering a request whose body came with
// Transfer-Encoding. net/http lets Transfer-Encoding override a Content-Length (and removes
// it) but keeps the connection, so what a Content-Length would have framed as body is read
// as the next request; RFC 9112 6.1 asks for the close, which the documented
// "Connection: close" response header gives. No request of this API has a body.
func closeAfterChunked(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if len(r.TransferEncoding) > 0 {
			w.Header().Set("Connection", "close")
		}
		h.ServeHTTP(w, r)
	})
}

func up(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Status string `json:"status"`
	}{"UP"})
}

// waitThen blocks the request's goroutine for ?ms=N (default dflt) and then answers body.
// The timer also ends when the client goes away, so an abandoned request frees its goroutine.
func waitThen(dflt int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ms := dflt
		if q := r.URL.Query(); q.Has("ms") {
			n, err := strconv.Atoi(q.Get("ms"))
			if err != nil || n < 0 || n > 60_000 {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("ms must be an integer in 0..60000, got %q", q.Get("ms")))
				return
			}
			ms = n
		}
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
			writeText(w, body)
		case <-r.Context().Done():
		}
	}
}

func (s *server) resource(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	body, ok := s.resources[name]
	if !ok {
		writeError(w, http.StatusNotFound, "no resource "+name)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// data calls the downstream with the shared client and blocks its goroutine until it answers.
func (s *server) data(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("id must be an integer, got %q", r.PathValue("id")))
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), http.MethodGet,
		fmt.Sprintf("%s/resources/data%d.json", s.downstream, id), nil)
	if err != nil {
		writeError(w, http.StatusBadGateway, "downstream URL: "+err.Error())
		return
	}
	resp, err := s.client.Do(req)
	if err != nil { // refused, reset, or no answer within 2 s
		writeError(w, http.StatusBadGateway, "downstream failed: "+err.Error())
		return
	}
	defer func() {
		io.Copy(io.Discard, resp.Body) // read to the end so the connection goes back to the pool
		resp.Body.Close()
	}()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		writeError(w, http.StatusNotFound, fmt.Sprintf("no data %d", id))
		return
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		writeError(w, http.StatusBadGateway, "downstream answered "+resp.Status)
		return
	}
	var d Data
	if err := json.NewDecoder(resp.Body).Decode(&d); err != nil {
		writeError(w, http.StatusBadGateway, "downstream body: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// fallback gets every request no other pattern takes: "/" matches any method on any path, so
// a known path asked with another method lands here too and is told 405 rather than 404.
func (s *server) fallback(w http.ResponseWriter, r *http.Request) {
	asGet := r.Clone(r.Context())
	asGet.Method = http.MethodGet
	if _, pattern := s.mux.Handler(asGet); r.Method != http.MethodGet && pattern != "/" && pattern != "" {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s is not allowed on %s", r.Method, r.URL.Path))
		return
	}
	writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
}

func writeText(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, body)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		log.Printf("encoding a response: %v", err)
	}
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, struct {
		Error string `json:"error"`
	}{message})
}

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	// BIND_ADDRESS moves the listener off loopback only when load agents on other hosts
	// must reach it (a multi-host run); the contract's default is 127.0.0.1.
	host := os.Getenv("BIND_ADDRESS")
	if host == "" {
		host = "127.0.0.1"
	}
	downstream := os.Getenv("DOWNSTREAM_URL")
	if downstream == "" {
		// Itself, where it listens: 127.0.0.1 does not answer once BIND_ADDRESS moved it.
		downstream = "http://" + net.JoinHostPort(host, port)
	}
	bp := strings.ToLower(strings.TrimSpace(os.Getenv("BACKPRESSURE")))
	switch bp {
	case "":
		bp = "on"
	case "on", "off":
	default:
		log.Fatalf("BACKPRESSURE must be on or off, got %q", bp)
	}
	backpressure := bp == "on"
	// /db's pool: made now, connecting only when /db asks (DB_URL unset: /db answers 502).
	db := openDatabase(os.Getenv("DB_URL"), os.Getenv("DB_POOL"))
	s, err := newServer(downstream, backpressure, db)
	if err != nil {
		log.Fatalf("loading resources: %v", err)
	}
	if addr := os.Getenv("PPROF_ADDR"); addr != "" {
		servePprof(addr)
	}
	srv := &http.Server{Handler: closeAfterChunked(s.mux), ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
	if err != nil {
		log.Fatalf("cannot listen: %v", err)
	}
	log.Printf("go-nethttp listening on %s (%s, GOMAXPROCS %d, GOMEMLIMIT %q, BACKPRESSURE %v)",
		ln.Addr(), runtime.Version(), runtime.GOMAXPROCS(0), os.Getenv("GOMEMLIMIT"), bp)

	stop, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		log.Fatalf("serving: %v", err)
	case <-stop.Done():
	}

	// Stop accepting, let open requests finish for a short grace, then close what is left.
	log.Printf("SIGTERM: shutting down")
	ctx, done := context.WithTimeout(context.Background(), shutdownGrace)
	defer done()
	if err := srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
		srv.Close()
	}
	// /chat and /stream connections are hijacked, so Shutdown does not see them: close them
	// with 1001.
	var closing sync.WaitGroup
	closing.Go(func() { s.chat.shutdown(time.Second) })
	closing.Go(func() { s.stream.shutdown(time.Second) })
	closing.Wait()
	// The pool's connections close (Close waits for any still in use: at most 1 s of that).
	closed := make(chan struct{})
	go func() { s.db.close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(time.Second):
	}
}
