package cmd

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestDownstreamRejectsBadInput(t *testing.T) {
	setup(t)
	refused(t, []string{"downstream", "--port", "-1"}, "--port -1: give 0 (any free port) to 65535")
	refused(t, []string{"downstream", "--port", "65536"}, "--port 65536")
	refused(t, []string{"downstream", "--delay", "-1ms"}, "--delay -1ms: give 0 to 1m")
	refused(t, []string{"downstream", "--delay", "61s"}, "--delay 1m1s: give 0 to 1m")
	refused(t, []string{"downstream", "extra"}, `unknown command "extra" for "arena downstream"`)
}

// arena downstream prints its URL, serves the study's JSON after --delay and the failure
// cases, and ends without an error when stopped.
func TestDownstreamServes(t *testing.T) {
	setup(t)
	url := serve(t, "downstream", "--delay", "50ms")
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+$`).MatchString(url) {
		t.Fatalf("arena downstream printed %q, want its URL", url)
	}
	start := time.Now()
	resp, err := http.Get(url + "/resources/data1.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !strings.HasPrefix(strings.TrimSpace(string(body)), "{") {
		t.Errorf("data1.json: %d %q", resp.StatusCode, body)
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("data1.json answered in %s, before the 50 ms delay", took)
	}
	resp, err = http.Get(url + "/resources/data500.json")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 500 {
		t.Errorf("data500.json: %d, want 500", resp.StatusCode)
	}
}
