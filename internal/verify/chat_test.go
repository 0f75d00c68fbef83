package verify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

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
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	defer probe.Close()
	checks := ChatChecks(context.Background(), s.Addr(), probe.URL)
	if len(checks) < 12 {
		t.Fatalf("%d checks; want every /chat rule", len(checks))
	}
	for _, c := range checks {
		if !c.OK {
			t.Errorf("%s: %s", c.Name, c.Detail)
		}
	}
}

// A server that broadcasts to everyone, whatever the room, fails the room check.
func TestChatChecksCatchALeakyRoom(t *testing.T) {
	s, err := chat.StartServer("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	defer probe.Close()
	chat.LeakRoomsForTest(s)
	var failed []string
	for _, c := range ChatChecks(context.Background(), s.Addr(), probe.URL) {
		if !c.OK {
			failed = append(failed, c.Name)
		}
	}
	if !strings.Contains(strings.Join(failed, ";"), "stay in their room") {
		t.Fatalf("failed checks %v; want the room check among them", failed)
	}
}
