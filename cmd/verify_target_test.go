package cmd

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/chat"
)

// arena verify --target checks a server arena did not start for the scenario named: a chat
// server with no HTTP route passes the chat scenario's checks (exit 0), the HTTP checks it
// has no route for not needed; a server of /instant alone checked for the sleep scenario,
// ready by --target-ready, fails its /sleep checks (exit 2, as run --fail-on).
func TestVerifyTargetExitsAsRunDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the chat checks against a chat server")
	}
	chatSrv, err := chat.StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer chatSrv.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/instant", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("INSTANT")) })
	instant := httptest.NewServer(mux)
	defer instant.Close()
	for _, tt := range []struct {
		args []string
		code int
		says []string
	}{
		{[]string{"--target", "http://" + chatSrv.Addr(), "chat"}, 0, []string{"for what the chat scenario needs", "ok   ready", "chat ", "not needed here", "keeps what the chat scenario needs"}},
		{[]string{"--target", instant.URL, "--target-ready", "/instant", "sleep"}, exitFailed, []string{"FAIL /sleep waits 100 ms by default", "does not keep what the sleep scenario needs"}},
		{[]string{"--target", instant.URL, "--skip-verify"}, exitError, []string{"unknown flag: --skip-verify"}},
		{[]string{"--target", instant.URL, "sleep", "chat"}, exitError, []string{"name one scenario"}},
	} {
		var stdout, stderr bytes.Buffer
		code := runArena(context.Background(), append([]string{"verify", "--server-cpus", "0", "--client-cpus", "0"}, tt.args...), &stdout, &stderr)
		out := stdout.String() + stderr.String()
		if code != tt.code {
			t.Errorf("arena verify %s: exit %d, want %d:\n%s", strings.Join(tt.args, " "), code, tt.code, out)
		}
		for _, s := range tt.says {
			if !strings.Contains(out, s) {
				t.Errorf("arena verify %s does not say %q:\n%s", strings.Join(tt.args, " "), s, out)
			}
		}
	}
}
