package agent

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"
)

// How an agent's HTTP server holds nothing for strangers (docs/distributed.md, "What an agent
// trusts"): a caller has a few seconds to send its request and the idle connection is closed
// soon after, a 401 closes the connection, at most MaxOpenConns are open at once, and a
// failed TLS handshake is counted, the count written once a period, not a line each (the
// SSH launcher relays an agent's output into the coordinator's).

// The server's bounds: a job or run request is a few hundred bytes, sent at once.
const (
	MaxOpenConns   = 64
	headerTimeout  = 10 * time.Second
	requestTimeout = 30 * time.Second // the header and the body; lifted once the caller holds the secret
	idleTimeout    = 60 * time.Second
	// SummariseEvery is the period the agent writes its failed handshakes' count at.
	SummariseEvery = time.Minute
)

// NewHTTPServer is the agent's http.Server for h: its timeouts, and failed handshakes
// counted in the Handshakes it returns, every other server error written to errs.
func NewHTTPServer(h http.Handler, errs io.Writer) (*http.Server, *Handshakes) {
	hs := &Handshakes{errs: errs}
	return &http.Server{Handler: h, ReadHeaderTimeout: headerTimeout, ReadTimeout: requestTimeout, IdleTimeout: idleTimeout,
		ErrorLog: log.New(hs, "", 0)}, hs
}

// Handshakes counts failed TLS handshakes from the server's error log and passes every other
// line on to errs.
type Handshakes struct {
	mu     sync.Mutex
	errs   io.Writer
	failed int
	last   string
}

var handshakeError = []byte("TLS handshake error from ")

// Write takes one line of the server's error log.
func (h *Handshakes) Write(p []byte) (int, error) {
	i := bytes.Index(p, handshakeError)
	if i < 0 {
		h.mu.Lock()
		defer h.mu.Unlock()
		return h.errs.Write(p)
	}
	from, _, _ := bytes.Cut(p[i+len(handshakeError):], []byte(":"))
	h.mu.Lock()
	h.failed++
	h.last = string(bytes.TrimPrefix(from, []byte("[")))
	h.mu.Unlock()
	return len(p), nil
}

// Summarise writes, every period until ctx ends, how many handshakes failed in it, when any
// did: one line, whatever their count.
func (h *Handshakes) Summarise(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			h.flush(every)
		}
	}
}

func (h *Handshakes) flush(every time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.failed > 0 {
		fmt.Fprintf(h.errs, "arena agent: %d TLS handshake(s) failed in the last %s (the last from %s): callers without the run's key\n", h.failed, every, h.last)
	}
	h.failed = 0
}

// LimitListener accepts at most n connections open at once: the next waits until one closes
// (the timeouts close a stranger's soon).
func LimitListener(ln net.Listener, n int) net.Listener {
	return &limitListener{Listener: ln, free: make(chan struct{}, n)}
}

type limitListener struct {
	net.Listener
	free chan struct{}
}

func (l *limitListener) Accept() (net.Conn, error) {
	l.free <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.free
		return nil, err
	}
	return &limitedConn{Conn: c, release: sync.OnceFunc(func() { <-l.free })}, nil
}

type limitedConn struct {
	net.Conn
	release func()
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.release()
	return err
}
