package main

// /chat (study 000) on github.com/coder/websocket: a handler goroutine reads each member,
// a writer goroutine per member drains its buffered queue, and a broadcast puts a message
// into the queue of every member of the room under the room's lock (see README.md).

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"unicode/utf8"

	"github.com/coder/websocket"
)

const (
	maxChatFrame = 64 * 1024        // a bigger message is closed with 1009 by the library
	memberQueue  = 4096             // frames a member may lag behind before it is dropped
	writeTimeout = 10 * time.Second // one frame to one member
)

// chatHub holds the names (unique server-wide) and the rooms. Lock order: hub, then room.
type chatHub struct {
	mu    sync.Mutex
	names map[string]*member
	rooms map[string]*room
	conns map[*websocket.Conn]struct{} // every open /chat connection, for the shutdown
}

// room is one chat room; its lock orders the broadcasts into its members' queues, so every
// member sees one sender's messages in the order they were sent.
type room struct {
	name    string
	mu      sync.Mutex
	members map[*member]struct{}
}

type member struct {
	conn *websocket.Conn
	name string
	room *room
	out  chan []byte // the writer goroutine sends these in order
	drop sync.Once   // a member that falls memberQueue frames behind is closed once
}

// chatFrame is what a client sends: pointers tell a missing field from an empty one.
type chatFrame struct {
	Name    *string `json:"name"`
	Chat    *string `json:"chat"`
	Message *string `json:"message"`
}

type chatMessage struct {
	Name    string `json:"name"`
	Chat    string `json:"chat"`
	Message string `json:"message"`
}

type systemMessage struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

func newChatHub() *chatHub {
	return &chatHub{names: map[string]*member{}, rooms: map[string]*room{}, conns: map[*websocket.Conn]struct{}{}}
}

// serve runs one /chat connection: it reads frames until the connection ends.
func (h *chatHub) serve(w http.ResponseWriter, r *http.Request) {
	conn, err := websocket.Accept(w, r, nil) // compression stays off (the library's default)
	if err != nil {
		return // Accept has answered the request already
	}
	conn.SetReadLimit(maxChatFrame)
	if !h.track(conn) {
		conn.Close(websocket.StatusGoingAway, "server stopping")
		return
	}
	m := &member{conn: conn, out: make(chan []byte, memberQueue)}
	written := make(chan struct{})
	go m.write(written)

	// The connection outlives the request (it is hijacked): read with a context of our own.
	ctx := context.Background()
	taken := false
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			// A frame over the read limit: the library has sent close 1009 already. A
			// client's close was answered by the library; anything else is a dead peer.
			break
		}
		if !validText(conn, typ, data) {
			break
		}
		var f chatFrame
		if err := json.Unmarshal(data, &f); err != nil {
			m.notice("not a JSON object with string fields name, chat and message")
			continue
		}
		has := func(s *string) bool { return s != nil && *s != "" }
		switch {
		case m.room == nil && f.Message != nil:
			m.notice(`join first with {"name","chat"}`)
		case m.room == nil && !(has(f.Name) && has(f.Chat)):
			m.notice(`a join needs {"name","chat"}`)
		case m.room == nil:
			if !h.join(m, *f.Name, *f.Chat) {
				m.notice("the name " + *f.Name + " is taken")
				taken = true
			}
		case !has(f.Name) || !has(f.Chat) || f.Message == nil:
			m.notice("a message needs name, chat and message")
		default:
			out, _ := json.Marshal(chatMessage{Name: m.name, Chat: m.room.name, Message: *f.Message})
			m.room.broadcast(out)
		}
		if taken {
			break
		}
	}

	h.leave(m) // the name is free and no broadcast reaches m any more
	close(m.out)
	if taken {
		<-written // the system frame goes out before the close frame
		conn.Close(websocket.StatusPolicyViolation, "name taken")
	} else {
		conn.CloseNow()
		<-written
	}
	h.untrack(conn)
}

// validText closes the connection with 1007 when a text message is not UTF-8: the library
// leaves that check to the application, and RFC 6455 8.1 fails the connection.
func validText(conn *websocket.Conn, typ websocket.MessageType, data []byte) bool {
	if typ == websocket.MessageText && !utf8.Valid(data) {
		conn.Close(websocket.StatusInvalidFramePayloadData, "text is not UTF-8")
		return false
	}
	return true
}

func (h *chatHub) track(c *websocket.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conns == nil { // shutting down
		return false
	}
	h.conns[c] = struct{}{}
	return true
}

func (h *chatHub) untrack(c *websocket.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.conns, c)
}

func (h *chatHub) join(m *member, name, roomName string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.names[name]; ok {
		return false
	}
	rm := h.rooms[roomName]
	if rm == nil {
		rm = &room{name: roomName, members: map[*member]struct{}{}}
		h.rooms[roomName] = rm
	}
	h.names[name] = m
	m.name, m.room = name, rm
	rm.mu.Lock()
	rm.members[m] = struct{}{}
	rm.mu.Unlock()
	return true
}

func (h *chatHub) leave(m *member) {
	if m.room == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.names, m.name)
	rm := m.room
	rm.mu.Lock()
	delete(rm.members, m)
	empty := len(rm.members) == 0
	rm.mu.Unlock()
	if empty {
		delete(h.rooms, rm.name)
	}
}

// broadcast queues out for every member, the sender included, without blocking: a member
// whose queue is full is closed with 1013 rather than stall the room.
func (rm *room) broadcast(out []byte) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	for peer := range rm.members {
		select {
		case peer.out <- out:
		default:
			peer.drop.Do(func() { go peer.conn.Close(websocket.StatusTryAgainLater, "too slow") })
		}
	}
}

// notice queues a system frame for m alone; only m's reading goroutine calls it.
func (m *member) notice(text string) {
	out, _ := json.Marshal(systemMessage{Type: "system", Message: text})
	select {
	case m.out <- out:
	default: // m is already being dropped for lagging
	}
}

// write sends m's queue in order until it is closed; after a failed write it only drains.
func (m *member) write(done chan<- struct{}) {
	defer close(done)
	for out := range m.out {
		ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		err := m.conn.Write(ctx, websocket.MessageText, out)
		cancel()
		if err != nil {
			for range m.out {
			}
			return
		}
	}
}

// shutdown closes every /chat connection with 1001 and waits up to grace for the handshakes.
func (h *chatHub) shutdown(grace time.Duration) {
	h.mu.Lock()
	conns := h.conns
	h.conns = nil
	h.mu.Unlock()
	closeAll(conns, grace)
}

// closeAll closes conns with 1001, all at once, and waits up to grace for their handshakes.
func closeAll(conns map[*websocket.Conn]struct{}, grace time.Duration) {
	var wg sync.WaitGroup
	for c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.Close(websocket.StatusGoingAway, "server stopping")
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
	}
}
