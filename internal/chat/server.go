package chat

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
)

// MaxFrame is the contract's largest chat frame: a bigger one is closed with 1009.
const MaxFrame = 64 * 1024

// Server is a small, correct /chat server: the reference the checks are tested against and
// the trivial broadcast server the chat client is benchmarked against. Each connection has
// a writer goroutine fed by a buffered queue, so one slow member never blocks a room.
type Server struct {
	mu    sync.Mutex
	conns map[*member]bool // every open connection, joined or not
	names map[string]*member
	rooms map[string]map[*member]bool
	srv   *http.Server
	ln    net.Listener
}

type member struct {
	ws   *websocket.Conn
	name string
	room string
	out  chan []byte
	done chan struct{}
	once sync.Once
}

var upgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 4096}

// StartServer listens on addr (e.g. "127.0.0.1:0") and serves /chat until Close.
func StartServer(addr string) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{conns: map[*member]bool{}, names: map[string]*member{}, rooms: map[string]map[*member]bool{}, ln: ln}
	mux := http.NewServeMux()
	mux.HandleFunc("/chat", s.serve)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server and drops every connection (http.Server.Close leaves the hijacked
// WebSocket connections open).
func (s *Server) Close() error {
	err := s.srv.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for m := range s.conns {
		m.ws.Close()
	}
	return err
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(MaxFrame)
	m := &member{ws: ws, out: make(chan []byte, 4096), done: make(chan struct{})}
	s.mu.Lock()
	s.conns[m] = true
	s.mu.Unlock()
	go m.write()
	defer func() {
		s.leave(m)
		m.flush()
		ws.Close()
	}()
	for {
		kind, raw, err := ws.ReadMessage()
		if err == nil && kind == websocket.TextMessage && !utf8.Valid(raw) {
			// gorilla leaves UTF-8 to the application (as its Autobahn server shows); RFC 6455
			// 8.1 fails the connection with 1007.
			s.leave(m)
			m.flush()
			m.closeWith(websocket.CloseInvalidFramePayloadData, "text frame is not UTF-8")
			linger(ws)
			return
		}
		if err != nil {
			if err == websocket.ErrReadLimit {
				s.leave(m) // out of the room before its queue closes: a broadcast would panic on it
				m.flush()
				m.closeWith(websocket.CloseMessageTooBig, "frame over 64 KiB")
				linger(ws)
			}
			return
		}
		var f map[string]any
		if json.Unmarshal(raw, &f) != nil {
			m.notice("not a JSON object")
			continue
		}
		name, _ := f["name"].(string)
		room, _ := f["chat"].(string)
		msg, hasMsg := f["message"].(string)
		switch {
		case m.name == "" && (name == "" || room == "" || hasMsg):
			m.notice("join first with {\"name\",\"chat\"}")
		case m.name == "":
			if !s.join(m, name, room) {
				m.notice("the name " + name + " is taken")
				m.flush() // the notice goes out before the close frame
				m.closeWith(websocket.ClosePolicyViolation, "name taken")
				return
			}
		case !hasMsg || name == "" || room == "":
			m.notice("a message needs name, chat and message")
		default:
			out, _ := json.Marshal(map[string]string{"name": m.name, "chat": m.room, "message": msg})
			s.broadcast(m.room, out)
		}
	}
}

func (s *Server) join(m *member, name, room string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.names[name] != nil {
		return false
	}
	m.name, m.room = name, room
	s.names[name] = m
	if s.rooms[room] == nil {
		s.rooms[room] = map[*member]bool{}
	}
	s.rooms[room][m] = true
	return true
}

func (s *Server) leave(m *member) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, m)
	if m.name != "" && s.names[m.name] == m {
		delete(s.names, m.name)
		delete(s.rooms[m.room], m)
	}
}

// broadcast queues out for every member of room under the lock, so that every member sees
// the messages of one sender in the order they were sent.
func (s *Server) broadcast(room string, out []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for peer := range s.rooms[room] {
		select {
		case peer.out <- out:
		default: // a member 4096 frames behind is dropped rather than stall the room
			go peer.closeWith(websocket.CloseTryAgainLater, "too slow")
		}
	}
}

func (m *member) notice(text string) {
	out, _ := json.Marshal(map[string]string{"type": "system", "message": text})
	m.out <- out
}

// flush ends the member's queue and waits until the writer has sent what it held.
func (m *member) flush() {
	m.once.Do(func() { close(m.out) })
	<-m.done
}

func (m *member) closeWith(code int, text string) {
	_ = m.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
}

// linger reads and drops what the peer still sends (the rest of the frame cut short, then
// its answer to the close) until it closes the connection or a second has passed: a socket
// closed with unread data resets the connection, and the peer may then lose the close frame
// it had not yet read.
func linger(ws *websocket.Conn) {
	nc := ws.NetConn()
	_ = nc.SetReadDeadline(time.Now().Add(time.Second))
	_, _ = io.Copy(io.Discard, nc)
}

func (m *member) write() {
	defer close(m.done)
	for b := range m.out {
		_ = m.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if m.ws.WriteMessage(websocket.TextMessage, b) != nil {
			for range m.out { // drain so broadcasters never block on a dead member
			}
			return
		}
	}
}
