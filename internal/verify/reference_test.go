package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/downstream"
)

// referenceHTTP is the HTTP part of the contract done plainly with net/http, for the checks'
// own tests: the lab's reference HTTP server, as chat.Server and stream.Server are for
// /chat and /stream. downstreamURL "" calls itself.
type referenceHTTP struct {
	downstreamURL string
	self          string
	// parseMS reads an ms parameter (the reference: an optional +, then digits).
	parseMS func(string) (int, bool)
	// resource serves /resources/<rest> (the reference: the two data files only).
	resource func(w http.ResponseWriter, rest string)
}

var digitsOnly = regexp.MustCompile(`^\+?[0-9]+$`)

func jsonErr(w http.ResponseWriter, status int, what string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": what})
}

func text(w http.ResponseWriter, body string) {
	w.Header().Set("Content-Type", "text/plain")
	_, _ = io.WriteString(w, body)
}

func strictMS(v string) (int, bool) {
	n, err := strconv.Atoi(v)
	return n, err == nil && digitsOnly.MatchString(v)
}

func (h *referenceHTTP) ms(w http.ResponseWriter, r *http.Request, def int) (int, bool) {
	if !r.URL.Query().Has("ms") {
		return def, true
	}
	parse := h.parseMS
	if parse == nil {
		parse = strictMS
	}
	n, ok := parse(r.URL.Query().Get("ms"))
	if !ok || n < 0 || n > 60000 {
		jsonErr(w, 400, "ms must be an integer in 0..60000")
		return 0, false
	}
	return n, true
}

func (h *referenceHTTP) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if len(r.TransferEncoding) > 0 {
		// net/http lets Transfer-Encoding override a Content-Length it then removes, and keeps
		// the connection: RFC 9112 6.1 asks for the close, which this documented header gives.
		w.Header().Set("Connection", "close")
	}
	if r.Method != http.MethodGet {
		jsonErr(w, 405, "GET only")
		return
	}
	p := r.URL.Path
	switch {
	case p == "/actuator/health/liveness" || p == "/actuator/health/readiness":
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"UP"}`)
	case p == "/instant":
		text(w, "INSTANT")
	case p == "/delayed" || p == "/sleep":
		def, answer := 10000, "DELAYED"
		if p == "/sleep" {
			def, answer = 100, "SLEPT"
		}
		if ms, ok := h.ms(w, r, def); ok {
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
			case <-r.Context().Done():
				return
			}
			text(w, answer)
		}
	case strings.HasPrefix(p, "/resources/"):
		rest := strings.TrimPrefix(p, "/resources/")
		if h.resource != nil {
			h.resource(w, rest)
			return
		}
		switch rest {
		case "data1.json", "data2.json":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(map[string][]byte{"data1.json": downstream.Data1, "data2.json": downstream.Data2}[rest])
		default:
			jsonErr(w, 404, "no such resource")
		}
	case strings.HasPrefix(p, "/data/"):
		h.data(w, r, strings.TrimPrefix(p, "/data/"))
	default:
		jsonErr(w, 404, "no such path")
	}
}

// record is study 002's typed record.
type record struct {
	ID     int      `json:"id"`
	Value  string   `json:"value"`
	Active bool     `json:"active"`
	Props  []string `json:"props"`
}

var downstreamClient = &http.Client{Timeout: 2 * time.Second}

func (h *referenceHTTP) data(w http.ResponseWriter, r *http.Request, id string) {
	n, err := strconv.Atoi(id)
	if err != nil {
		jsonErr(w, 400, "id must be an integer")
		return
	}
	base := h.downstreamURL
	if base == "" {
		base = h.self
	}
	req, _ := http.NewRequestWithContext(r.Context(), http.MethodGet, fmt.Sprintf("%s/resources/data%d.json", base, n), nil)
	resp, err := downstreamClient.Do(req)
	if err != nil {
		jsonErr(w, 502, "downstream: "+err.Error())
		return
	}
	defer resp.Body.Close()
	var rec record
	switch {
	case resp.StatusCode == 404:
		jsonErr(w, 404, "no such data")
	case resp.StatusCode != 200:
		jsonErr(w, 502, fmt.Sprintf("downstream answered %d", resp.StatusCode))
	case json.NewDecoder(resp.Body).Decode(&rec) != nil:
		jsonErr(w, 502, "downstream sent no record")
	default:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(rec)
	}
}

// serveHTTP serves h on a loopback port of this process until the test ends.
func serveHTTP(t *testing.T, h *referenceHTTP) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.self = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return inProcessAt(t, ln.Addr().String())
}

// inProcessAt is the server of this process at addr, ready on its own probe.
func inProcessAt(t *testing.T, addr string) *Server {
	t.Helper()
	s := inProcess(t, addr)
	s.Ready = ""
	return s
}

// The HTTP checks, the abuse included, pass against the reference.
func TestHTTPChecksPassAgainstTheReferenceServer(t *testing.T) {
	if testing.Short() {
		t.Skip("the 10-s default of /delayed")
	}
	s := serveHTTP(t, &referenceHTTP{})
	checks := SelfChecks(context.Background(), s)
	if len(checks) < 90 {
		t.Fatalf("%d checks; want every HTTP rule and abuse, each followed by its readiness check", len(checks))
	}
	for _, f := range failures(checks) {
		t.Error(f)
	}
}

// The downstream checks pass against the reference with the lab's downstream, and end with
// the downstream closed, a refused connection answered 502.
func TestDownstreamChecksPassAgainstTheReferenceServer(t *testing.T) {
	ds, err := downstream.Start("127.0.0.1:0", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ds.Close()
	s := serveHTTP(t, &referenceHTTP{downstreamURL: ds.URL()})
	checks := DownstreamChecks(context.Background(), s, ds)
	for _, f := range failures(checks) {
		t.Error(f)
	}
	if _, err := net.DialTimeout("tcp", strings.TrimPrefix(ds.URL(), "http://"), time.Second); err == nil {
		t.Error("the downstream still accepts after the checks: the refused case was not tested")
	}
}
