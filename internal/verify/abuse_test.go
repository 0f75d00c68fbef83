package verify

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// abuseNamed is the abuse whose name starts with prefix.
func abuseNamed(t *testing.T, prefix string) abuse {
	t.Helper()
	for _, a := range abuses() {
		if strings.HasPrefix(a.name, prefix) {
			return a
		}
	}
	t.Fatalf("no abuse %q", prefix)
	return abuse{}
}

// failedAbuses runs every abuse against s and returns the names of those that failed.
func failedAbuses(s *Server) []string {
	var failed []string
	for _, a := range abuses() {
		if c := a.run(context.Background(), s); !c.OK {
			failed = append(failed, a.name)
		}
	}
	return failed
}

func wantFailed(t *testing.T, failed []string, prefixes ...string) {
	t.Helper()
	for _, p := range prefixes {
		found := false
		for _, f := range failed {
			found = found || strings.HasPrefix(f, p)
		}
		if !found {
			t.Errorf("%q passed; it should fail (failed: %q)", p, failed)
		}
	}
}

// rawServer serves each connection with handle, concurrently unless serial, until the test
// ends; it returns host:port.
func rawServer(t *testing.T, serial bool, handle func(net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
			if serial {
				handle(nc)
				nc.Close()
				continue
			}
			wg.Add(1)
			go func() { defer wg.Done(); defer nc.Close(); handle(nc) }()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, nc := range conns {
			nc.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// naiveHTTP answers every line that looks like a request line, once its headers end, with
// INSTANT on a connection it never closes: it reads no body, so a request hidden in a body
// is answered, and it keeps HTTP/1.0 clients waiting.
func naiveHTTP(nc net.Conn) {
	br := bufio.NewReader(nc)
	inRequest := false
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "GET ") || strings.HasPrefix(line, "POST "):
			inRequest = true
		case line == "" && inRequest:
			inRequest = false
			_, _ = io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 7\r\n\r\nINSTANT")
		}
	}
}

// A server that reads no body answers the request hidden behind a body framed two ways, and
// one that keeps HTTP/1.0 connections open fails that check; pipelined answers must match.
func TestAbuseChecksCatchANaiveParser(t *testing.T) {
	s := inProcessAt(t, rawServer(t, false, naiveHTTP))
	wantFailed(t, failedAbuses(s),
		"Content-Length and Transfer-Encoding together",
		"two different Content-Lengths",
		"an HTTP/1.0 request is answered, then closed",
		"three pipelined requests")
}

// A /resources/ that joins the path to a folder serves a file above it.
func TestAbuseChecksCatchPathTraversal(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "1", "2", "3", "4")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "etc", "passwd"), []byte("root:x:0:0:root:/root:/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := serveHTTP(t, &referenceHTTP{resource: func(w http.ResponseWriter, rest string) {
		b, err := os.ReadFile(filepath.Join(root, rest))
		if err != nil {
			jsonErr(w, 404, "no such file")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}})
	wantFailed(t, failedAbuses(s),
		"/resources/..%2f..%2f..%2f..%2fetc%2fpasswd",
		"/resources/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
		"/resources/../../../../etc/passwd")
}

// A server that reads ms as JavaScript's Number does takes 1e3, 0x10 and " 5" for numbers.
func TestAbuseChecksCatchALenientNumberParser(t *testing.T) {
	s := serveHTTP(t, &referenceHTTP{parseMS: func(v string) (int, bool) {
		v = strings.TrimSpace(v)
		if n, err := strconv.ParseInt(strings.TrimPrefix(v, "0x"), 16, 64); strings.HasPrefix(v, "0x") && err == nil {
			return int(n), true
		}
		f, err := strconv.ParseFloat(v, 64)
		return int(f), err == nil
	}})
	wantFailed(t, failedAbuses(s), "/delayed?ms=1e3", "/delayed?ms=0x10", "/delayed?ms=%205")
}

// A server that fails on a large body answers 500, which no check accepts.
func TestAbuseChecksCatchAServerErrorOnALargeBody(t *testing.T) {
	ref := &referenceHTTP{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n, _ := io.Copy(io.Discard, r.Body); n > 1<<20 {
			jsonErr(w, 500, "body too large")
			return
		}
		ref.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	s := inProcessAt(t, ln.Addr().String())
	for _, name := range []string{"GET /instant with a 10 MB body", "POST /instant with a 10 MB body"} {
		if c := abuseNamed(t, name).run(context.Background(), s); c.OK {
			t.Errorf("%s passed against a server that answers 500", name)
		}
	}
}

// A server that serves one connection at a time is held by the first slow client: /instant
// no longer answers, and the slowloris check fails.
func TestSlowlorisCatchesAServerOfOneConnectionAtATime(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for a request's timeout")
	}
	addr := rawServer(t, true, func(nc net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(nc))
		if err != nil {
			return
		}
		req.Body.Close()
		_, _ = io.WriteString(nc, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nINSTANT")
	})
	s := inProcessAt(t, addr)
	c := holds()[0].run(context.Background(), s)
	if c.OK {
		t.Fatalf("%s passed against a server that serves one connection at a time", c.Name)
	}
	t.Log(c.Detail)
}

// The traversal answers accepted and refused, one by one.
func TestTraversalAnswers(t *testing.T) {
	jsonHeader := http.Header{"Content-Type": {"application/json"}}
	for _, tc := range []struct {
		what string
		a    answer
		ok   bool
	}{
		{"404 with a JSON error", answer{status: 404, header: jsonHeader, body: []byte(`{"error":"no"}`)}, true},
		{"400 with a JSON error", answer{status: 400, header: jsonHeader, body: []byte(`{"error":"no"}`)}, true},
		{"a redirect to the clean path", answer{status: 307, header: http.Header{"Location": {"/etc/passwd"}}}, true},
		{"a redirect that still climbs", answer{status: 301, header: http.Header{"Location": {"/resources/../etc/passwd"}}}, false},
		{"a file", answer{status: 200, header: jsonHeader, body: []byte("root:x:0:0")}, false},
		{"400 in HTML, refused before routing", answer{status: 400, header: http.Header{"Content-Type": {"text/html"}}, body: []byte("<h1>Bad</h1>")}, true},
		{"404 in HTML", answer{status: 404, header: http.Header{"Content-Type": {"text/html"}}, body: []byte("<h1>Not found</h1>")}, false},
	} {
		if err := traversal(exchange{answers: []answer{tc.a}}); (err == nil) != tc.ok {
			t.Errorf("%s: accepted %v (%v), want %v", tc.what, err == nil, err, tc.ok)
		}
	}
}
