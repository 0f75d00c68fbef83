// Package chat speaks study 000's chat protocol (contenders/README.md, "/chat"): join a
// room by name, send messages, receive every message of the room. It is used by verify's
// /chat checks and by the chat scenario's users.
package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// Frame is any frame a chat server sends: a room message (Name, Chat, Message) or a system
// notice (Type "system", Message).
type Frame struct {
	Type    string `json:"type,omitempty"`
	Name    string `json:"name,omitempty"`
	Chat    string `json:"chat,omitempty"`
	Message string `json:"message"`
}

// IsSystem reports whether the frame is a system notice.
func (f Frame) IsSystem() bool { return f.Type == "system" }

// Conn is one chat connection.
type Conn struct {
	ws *websocket.Conn
}

// dialer keeps per-connection buffers small: the chat client holds thousands of users.
var dialer = websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 4096, WriteBufferSize: 4096}

// wholeFrames writes any message up to 256 KiB as one frame: gorilla splits a message into
// frames of its write buffer's size, and the contract's 64 KiB limit is on a frame.
var wholeFrames = websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 4096, WriteBufferSize: 256 << 10}

// Dial opens ws://addr/chat.
func Dial(ctx context.Context, addr string) (*Conn, error) { return dial(ctx, &dialer, addr) }

// DialWholeFrames opens ws://addr/chat on a connection that sends every message as a single
// frame, to test a server's frame limit.
func DialWholeFrames(ctx context.Context, addr string) (*Conn, error) {
	return dial(ctx, &wholeFrames, addr)
}

func dial(ctx context.Context, d *websocket.Dialer, addr string) (*Conn, error) {
	ws, resp, err := d.DialContext(ctx, "ws://"+addr+"/chat", http.Header{})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("opening /chat: %w (HTTP %d)", err, resp.StatusCode)
		}
		return nil, fmt.Errorf("opening /chat: %w", err)
	}
	ws.SetReadLimit(1 << 20)
	return &Conn{ws: ws}, nil
}

// Join sends the join frame.
func (c *Conn) Join(name, room string) error {
	return c.WriteJSON(map[string]string{"name": name, "chat": room})
}

// Send sends one message to the room joined as name.
func (c *Conn) Send(name, room, message string) error {
	return c.WriteJSON(map[string]string{"name": name, "chat": room, "message": message})
}

// WriteJSON sends v as one text frame.
func (c *Conn) WriteJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.WriteText(b)
}

// WriteText sends raw bytes as one text frame.
func (c *Conn) WriteText(b []byte) error {
	_ = c.ws.SetWriteDeadline(time.Now().Add(10 * time.Second))
	return c.ws.WriteMessage(websocket.TextMessage, b)
}

// ErrTimeout is Read's error when nothing came in time.
var ErrTimeout = errors.New("no frame in time")

// Read returns the next frame, ErrTimeout, or a *websocket.CloseError when the server closed.
// After a timeout the connection is no longer usable (gorilla's read deadlines are final),
// so callers use Read with a deadline only where a silence is the expected answer.
func (c *Conn) Read(timeout time.Duration) (Frame, error) {
	_ = c.ws.SetReadDeadline(time.Now().Add(timeout))
	_, raw, err := c.ws.ReadMessage()
	if err != nil {
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			return Frame{}, ErrTimeout
		}
		return Frame{}, err
	}
	var f Frame
	if err := json.Unmarshal(raw, &f); err != nil {
		return Frame{}, fmt.Errorf("a frame that is not a JSON object: %q", clip(raw))
	}
	return f, nil
}

// ReadRaw returns the next frame's bytes, for the load client's own parsing.
func (c *Conn) ReadRaw() ([]byte, error) {
	_, raw, err := c.ws.ReadMessage()
	return raw, err
}

// Close closes the connection politely (a close frame, then the socket).
func (c *Conn) Close() error {
	_ = c.ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	return c.ws.Close()
}

// CloseCode returns the close code in err, or 0 when err is no close.
func CloseCode(err error) int {
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		return ce.Code
	}
	return 0
}

func clip(b []byte) string {
	if len(b) > 120 {
		return string(b[:120]) + "…"
	}
	return string(b)
}
