package verify

import (
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
)

// inProcess is a server of this test process at addr, its readiness answered by a stand-in
// probe, its process tree this process's (which starts no children while it is checked).
func inProcess(t *testing.T, addr string) *Server {
	t.Helper()
	probe := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
	t.Cleanup(probe.Close)
	s, err := NewServer(addr, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	s.Ready = probe.URL
	return s
}

// failures are the failed checks' names and details.
func failures(checks []Check) []string {
	return Report{Checks: checks}.Failures()
}
