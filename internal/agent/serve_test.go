package agent

import (
	"bufio"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a strings.Builder the server's goroutines write while the test reads.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveAgent serves s as `arena agent` does (the limit, TLS, the server's timeouts, the
// handshakes counted), its timeouts shortened to short, and returns its address, what it
// wrote and its handshakes.
func serveAgent(t *testing.T, s *Server, short time.Duration) (string, *syncBuffer, *Handshakes) {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(LimitListener(raw, MaxOpenConns), s.Secret)
	if err != nil {
		t.Fatal(err)
	}
	errs := &syncBuffer{}
	srv, hs := NewHTTPServer(s.Handler(), errs)
	srv.ReadHeaderTimeout, srv.ReadTimeout, srv.IdleTimeout = short, short, short
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return raw.Addr().String(), errs, hs
}

// TestAgentServerHasTimeouts: the agent's server bounds the header, the request and the
// idle connection (issue 34, 6: only the header was, and 300 idle connections stayed open).
func TestAgentServerHasTimeouts(t *testing.T) {
	srv, _ := NewHTTPServer(http.NotFoundHandler(), io.Discard)
	for name, d := range map[string]time.Duration{"ReadHeaderTimeout": srv.ReadHeaderTimeout, "ReadTimeout": srv.ReadTimeout, "IdleTimeout": srv.IdleTimeout} {
		if d <= 0 || d > time.Minute {
			t.Errorf("%s %s: want a bound of at most a minute", name, d)
		}
	}
}

// TestStrangersAreHeldForNothing replays issue 34 (6): connections that send nothing, or
// finish a handshake and send nothing, are closed by the server's timeouts; a call without
// the secret is answered 401 with the connection closed.
func TestStrangersAreHeldForNothing(t *testing.T) {
	addr, _, _ := serveAgent(t, &Server{Self: Self("held"), Secret: testSecret}, 300*time.Millisecond)
	var conns []net.Conn
	for range 20 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
	}
	cfg, err := ClientTLS(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	tc, err := tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	conns = append(conns, tc)
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err == nil || isTimeout(err) {
			t.Errorf("idle connection %d: %v, want it closed by the agent", i, err)
		}
		c.Close()
	}
	// Two requests on one connection without the secret: the first is answered, and closes it.
	tc, err = tls.Dial("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tc.Close() }()
	_, _ = io.WriteString(tc, "GET /v1/hello HTTP/1.1\r\nHost: x\r\n\r\nGET /v1/hello HTTP/1.1\r\nHost: x\r\n\r\n")
	_ = tc.SetReadDeadline(time.Now().Add(5 * time.Second))
	rd := bufio.NewReader(tc)
	resp, err := http.ReadResponse(rd, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != http.StatusUnauthorized || !resp.Close {
		t.Errorf("a call without the secret: %d, Connection %q; want 401 and close", resp.StatusCode, resp.Header.Get("Connection"))
	}
	if _, err := http.ReadResponse(rd, nil); err == nil {
		t.Error("a second request on the connection of a 401 was answered")
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestLimitListener: at most n connections are open; the next is accepted once one closes.
func TestLimitListener(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(raw, 2)
	defer ln.Close()
	accepted := make(chan net.Conn, 3)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", raw.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	first, second := <-accepted, <-accepted
	defer second.Close()
	select {
	case c := <-accepted:
		c.Close()
		t.Fatal("a third connection was accepted while two were open")
	case <-time.After(200 * time.Millisecond):
	}
	first.Close()
	select {
	case c := <-accepted:
		c.Close()
	case <-time.After(5 * time.Second):
		t.Fatal("the third connection was not accepted once one closed")
	}
}

// TestFailedHandshakesSummarised replays issue 34 (6): callers without the run's key fail
// their handshakes; the agent writes no line each, but one line a period with their count.
func TestFailedHandshakesSummarised(t *testing.T) {
	addr, errs, hs := serveAgent(t, &Server{Self: Self("counted"), Secret: testSecret}, 2*time.Second)
	wrong, err := ClientTLS(strings.Repeat("e", 64))
	if err != nil {
		t.Fatal(err)
	}
	const tries = 30
	for range tries {
		if c, err := tls.Dial("tcp", addr, wrong); err == nil {
			_ = c.Close()
			t.Fatal("a handshake with another run's key succeeded")
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		hs.mu.Lock()
		n := hs.failed
		hs.mu.Unlock()
		if n == tries {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if out := errs.String(); out != "" {
		t.Errorf("the agent wrote a line per failed handshake:\n%s", out)
	}
	hs.flush(time.Minute)
	if out := errs.String(); strings.Count(out, "\n") != 1 || !strings.Contains(out, "30 TLS handshake(s) failed in the last 1m0s (the last from 127.0.0.1)") {
		t.Errorf("the summary: %q", out)
	}
	hs.flush(time.Minute)
	if out := errs.String(); strings.Count(out, "\n") != 1 {
		t.Errorf("a period without failures wrote: %q", out)
	}
	if _, err := hs.Write([]byte("http: panic serving x\n")); err != nil || !strings.Contains(errs.String(), "panic serving") {
		t.Error("another server error was not passed on")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	hs.Summarise(ctx, time.Millisecond) // returns once ctx ends
}
