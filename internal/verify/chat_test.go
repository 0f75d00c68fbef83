package verify

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/arena-lab/arena/internal/chat"
)

// The /chat checks pass against the lab's reference chat server, and the readiness checks
// between them pass against a stand-in probe.
func TestChatChecksPassAgainstTheReferenceServer(t *testing.T) {
	s, err := chat.StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checks := ChatChecks(context.Background(), inProcess(t, s.Addr()))
	if len(checks) < 36 {
		t.Fatalf("%d checks; want every /chat rule", len(checks))
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("%s: %s", c.Name, c.Detail)
		}
	}
}

// A server that broadcasts to everyone, whatever the room, fails the room check and no
// other.
func TestChatChecksCatchALeakyRoom(t *testing.T) {
	addr := leakyChatServer(t)
	var failed []string
	for _, c := range ChatChecks(context.Background(), inProcess(t, addr)) {
		if !c.OK {
			failed = append(failed, c.Name+": "+c.Detail)
		}
	}
	if len(failed) != 1 || !strings.HasPrefix(failed[0], "chat: messages stay in their room: ") {
		t.Fatalf("failed checks %q; want the room check alone", failed)
	}
}

// leakyChatServer is the lab's reference chat server behind a proxy that moves every
// member into one room, whatever room it names: a server that breaks the room rule alone.
// It returns the proxy's host:port.
func leakyChatServer(t *testing.T) string {
	t.Helper()
	ref, err := chat.StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ref.Close() })
	// Buffers larger than any frame the checks send, so that a frame stays one frame.
	upgrader := websocket.Upgrader{WriteBufferSize: 256 << 10}
	dialer := websocket.Dialer{WriteBufferSize: 256 << 10}
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		client, err := upgrader.Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer client.Close()
		server, _, err := dialer.Dial("ws://"+ref.Addr()+"/chat", nil)
		if err != nil {
			return
		}
		defer server.Close()
		done := make(chan struct{})
		go func() {
			defer close(done)
			relay(client, server, nil)
		}()
		relay(server, client, intoOneRoom)
		<-done
	}))
	t.Cleanup(proxy.Close)
	return strings.TrimPrefix(proxy.URL, "http://")
}

// relay passes the messages read from from to to, changed by rewrite when there is one,
// until from ends; its close frame is passed on with its code.
func relay(to, from *websocket.Conn, rewrite func([]byte) []byte) {
	for {
		kind, msg, err := from.ReadMessage()
		if err != nil {
			code, text := websocket.CloseAbnormalClosure, ""
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				code, text = ce.Code, ce.Text
			}
			_ = to.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
			return
		}
		if rewrite != nil {
			msg = rewrite(msg)
		}
		if err := to.WriteMessage(kind, msg); err != nil {
			return
		}
	}
}

// intoOneRoom names the room "everyone" in a frame that names one.
func intoOneRoom(frame []byte) []byte {
	var f map[string]any
	if !utf8.Valid(frame) || json.Unmarshal(frame, &f) != nil || f["chat"] == nil { // not UTF-8: the server's to refuse
		return frame
	}
	f["chat"] = "everyone"
	out, err := json.Marshal(f)
	if err != nil {
		return frame
	}
	return out
}
