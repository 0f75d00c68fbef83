package cmd

import (
	"context"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/chat"
)

func TestChatServerRejectsBadInput(t *testing.T) {
	setup(t)
	refused(t, []string{"chat-server", "--port", "-1"}, "--port -1: give 0 (any free port) to 65535")
	refused(t, []string{"chat-server", "--port", "65536"}, "--port 65536")
	refused(t, []string{"chat-server", "extra"}, `unknown command "extra" for "arena chat-server"`)
}

// arena chat-server prints its /chat URL and serves the chat there until stopped.
func TestChatServerServes(t *testing.T) {
	setup(t)
	url := serve(t, "chat-server")
	addr, ok := strings.CutPrefix(url, "ws://")
	addr, ok2 := strings.CutSuffix(addr, "/chat")
	if !ok || !ok2 || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("arena chat-server printed %q, want ws://127.0.0.1:port/chat", url)
	}
	c, err := chat.Dial(context.Background(), addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Join("ann", "r"); err != nil {
		t.Fatal(err)
	}
	if err := c.Send("ann", "r", "hi"); err != nil {
		t.Fatal(err)
	}
	f, err := c.Read(quickly)
	if err != nil || f.Name != "ann" || f.Chat != "r" || f.Message != "hi" {
		t.Errorf("got %+v, %v; want ann's own hi back", f, err)
	}
}
