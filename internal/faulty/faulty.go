// Package faulty wraps the lab's reference servers (internal/chat's /chat, internal/stream's
// /stream, and the contract's plain HTTP paths, http.go) so that they misbehave on purpose:
// send a message twice, leak one to another chat room, drop one without counting it, ignore
// BACKPRESSURE=off, answer /instant and the probes with a fast 503, /data with an empty 200. The lab's tests start them as
// contenders and check that the real loads and judges catch each fault. Only tests import
// it: nothing the arena binary runs can misbehave this way.
package faulty

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/stream"
)

// Fault is how a wrapped server misbehaves.
type Fault string

const (
	// None passes every message on unchanged: the control.
	None Fault = "none"
	// DuplicateLast sends a connection's last message again once the connection has gone
	// quiet for quiet (a chat member's last message, the hardest copy to catch); on /stream,
	// where the messages never stop, it sends the 20th again.
	DuplicateLast Fault = "duplicate-last"
	// LeakOne sends one message of one chat room to a member of another room too.
	LeakOne Fault = "leak-one"
	// DropOne drops each /stream connection's 20th message (a chat's first member's 10th)
	// and counts nothing.
	DropOne Fault = "drop-one"
	// IgnoreBackpressureOff runs the /stream producer with back-pressure whatever
	// BACKPRESSURE says: told off, it still drops (and counts) when a queue is full.
	IgnoreBackpressureOff Fault = "ignore-backpressure-off"
)

// Faults are every fault a wrapped server can have.
var Faults = []Fault{None, DuplicateLast, LeakOne, DropOne, IgnoreBackpressureOff}

// quiet is how long a connection is silent before DuplicateLast sends its last message
// again: well inside the chat load's grace.
const quiet = 300 * time.Millisecond

// nth is the message DropOne drops and DuplicateLast repeats on /stream: early enough that
// a slow reader gets past it.
const nth = 20

// Server is a reference /chat and /stream server behind a proxy that does its fault, with
// the contract's plain HTTP paths (http.go).
type Server struct {
	fault  Fault
	chat   *chat.Server
	stream *stream.Server
	srv    *http.Server
	ln     net.Listener
	leak   leak
}

// Start serves on addr (e.g. "127.0.0.1:0") the reference servers wrapped with fault;
// backpressure is the /stream producer's, as BACKPRESSURE would set it.
func Start(addr string, fault Fault, backpressure bool) (*Server, error) {
	if fault == IgnoreBackpressureOff {
		backpressure = true
	}
	s := &Server{fault: fault}
	var err error
	if s.chat, err = chat.StartServer("127.0.0.1:0"); err != nil {
		return nil, err
	}
	if s.stream, err = stream.StartServer("127.0.0.1:0", stream.ServerOptions{Backpressure: backpressure}); err != nil {
		s.chat.Close()
		return nil, err
	}
	if s.ln, err = net.Listen("tcp", addr); err != nil {
		s.Close()
		return nil, err
	}
	stats := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: s.stream.Addr()})
	mux := http.NewServeMux()
	contractHTTP(mux, fault)
	mux.Handle("GET /stream/stats", stats)
	mux.HandleFunc("/chat", func(w http.ResponseWriter, r *http.Request) { s.proxy(w, r, s.chat.Addr(), s.chatFilter()) })
	mux.HandleFunc("GET /stream", func(w http.ResponseWriter, r *http.Request) { s.proxy(w, r, s.stream.Addr(), s.streamFilter()) })
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(s.ln) }()
	return s, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the proxy and the servers behind it.
func (s *Server) Close() error {
	var errs []error
	if s.srv != nil {
		errs = append(errs, s.srv.Close())
	}
	if s.stream != nil {
		errs = append(errs, s.stream.Close())
	}
	if s.chat != nil {
		errs = append(errs, s.chat.Close())
	}
	return errors.Join(errs...)
}

// conn is one proxied client: its writes are serialised, since a leak writes to it from
// another connection's goroutine.
type conn struct {
	ws   *websocket.Conn
	mu   sync.Mutex
	room string // chat: the room it joined
}

func (c *conn) send(msg []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, msg)
}

// filter passes a server's message to the client, as its fault would; it is called in order,
// one message at a time.
type filter func(c *conn, msg []byte) error

var upgrader = websocket.Upgrader{ReadBufferSize: 64 << 10, WriteBufferSize: 64 << 10}

// proxy joins a client's WebSocket to the server at upstream (same path and query) and pumps
// both ways, the server's messages through f.
func (s *Server) proxy(w http.ResponseWriter, r *http.Request, upstream string, f filter) {
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 64 << 10}
	up, resp, err := dialer.Dial("ws://"+upstream+r.URL.RequestURI(), nil)
	if err != nil {
		status := http.StatusBadGateway
		if resp != nil {
			status = resp.StatusCode
		}
		http.Error(w, fmt.Sprintf("upstream: %v", err), status)
		return
	}
	defer up.Close()
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer ws.Close()
	c := &conn{ws: ws}
	defer s.leak.forget(c)
	go func() { // client → server, noting the room a chat member joins
		defer up.Close()
		for {
			_, msg, err := ws.ReadMessage()
			if err != nil {
				return
			}
			var join struct{ Chat string }
			if c.room == "" && json.Unmarshal(msg, &join) == nil && join.Chat != "" {
				s.leak.join(c, join.Chat)
			}
			if up.WriteMessage(websocket.TextMessage, msg) != nil {
				return
			}
		}
	}()
	for {
		_, msg, err := up.ReadMessage()
		if err != nil {
			return
		}
		if f(c, msg) != nil {
			return
		}
	}
}

// chatFilter is the fault on /chat's room messages.
func (s *Server) chatFilter() filter {
	seen := 0
	var repeat *time.Timer
	return func(c *conn, msg []byte) error {
		if !strings.Contains(string(msg), `"message"`) || strings.Contains(string(msg), `"system"`) {
			return c.send(msg)
		}
		seen++
		switch s.fault {
		case DropOne:
			if seen == 10 && s.leak.first(c) {
				return nil
			}
		case LeakOne:
			s.leak.once(c, msg)
		case DuplicateLast:
			if repeat != nil {
				repeat.Stop()
			}
			last := append([]byte(nil), msg...)
			repeat = time.AfterFunc(quiet, func() { _ = c.send(last) })
		}
		return c.send(msg)
	}
}

// streamFilter is the fault on /stream's messages.
func (s *Server) streamFilter() filter {
	seen := 0
	return func(c *conn, msg []byte) error {
		seen++
		switch {
		case s.fault == DropOne && seen == nth:
			return nil
		case s.fault == DuplicateLast && seen == nth:
			if err := c.send(msg); err != nil {
				return err
			}
		}
		return c.send(msg)
	}
}

// leak is what the chat connections share: who is in which room, for LeakOne (one message
// of a room to a member of another, once) and DropOne (one member only).
type leak struct {
	mu     sync.Mutex
	conns  []*conn
	leaked bool
}

func (l *leak) join(c *conn, room string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c.room = room
	l.conns = append(l.conns, c)
}

func (l *leak) forget(c *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i, x := range l.conns {
		if x == c {
			l.conns = append(l.conns[:i], l.conns[i+1:]...)
			return
		}
	}
}

// first says whether c was the first member to join.
func (l *leak) first(c *conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.conns) > 0 && l.conns[0] == c
}

// once sends msg, meant for c's room, to a member of another room: the first time only.
func (l *leak) once(c *conn, msg []byte) {
	l.mu.Lock()
	if l.leaked {
		l.mu.Unlock()
		return
	}
	var to *conn
	for _, x := range l.conns {
		if x.room != c.room {
			to = x
			break
		}
	}
	l.leaked = to != nil
	l.mu.Unlock()
	if to != nil {
		_ = to.send(msg)
	}
}
