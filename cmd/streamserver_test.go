package cmd

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

func TestStreamServerRejectsBadInput(t *testing.T) {
	setup(t)
	refused(t, []string{"stream-server", "--port", "-1"}, "--port -1: give 0 (any free port) to 65535")
	refused(t, []string{"stream-server", "--port", "65536"}, "--port 65536")
	refused(t, []string{"stream-server", "--backpressure", "maybe"}, `--backpressure "maybe": on or off`)
	refused(t, []string{"stream-server", "--blast=perhaps"}, `invalid argument "perhaps"`)
}

// arena stream-server prints its /stream URL and answers the contract's stats beside it
// until stopped.
func TestStreamServerServes(t *testing.T) {
	setup(t)
	url := serve(t, "stream-server", "--backpressure", "off")
	addr, ok := strings.CutPrefix(url, "ws://")
	addr, ok2 := strings.CutSuffix(addr, "/stream")
	if !ok || !ok2 || !strings.HasPrefix(addr, "127.0.0.1:") {
		t.Fatalf("arena stream-server printed %q, want ws://127.0.0.1:port/stream", url)
	}
	resp, err := http.Get("http://" + addr + "/stream/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var stats map[string]int64
	if err := json.NewDecoder(resp.Body).Decode(&stats); err != nil || resp.StatusCode != 200 {
		t.Fatalf("/stream/stats: %d, %v", resp.StatusCode, err)
	}
	if _, ok := stats["clients"]; !ok || stats["clients"] != 0 {
		t.Errorf("/stream/stats %v, want no clients yet", stats)
	}
}
