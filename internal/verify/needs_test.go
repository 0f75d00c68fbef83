package verify

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestNeedsSends(t *testing.T) {
	n := Needs{Routes: []string{"/instant", "/sleep?"}}
	for target, want := range map[string]bool{
		"/instant": true, "/instant?q=1": false, "/sleep": true, "/sleep?ms=250": true, "/sleepy": false, "/data/1": false,
	} {
		if got := n.Sends(target); got != want {
			t.Errorf("Sends(%q) = %v, want %v", target, got, want)
		}
	}
	if n.SendsAll("/instant", "/data/1") || !n.SendsAll("/instant", "/sleep?ms=1") {
		t.Error("SendsAll does not ask every target")
	}
}

// delayedOnly serves /delayed?ms= as the contract says, and nothing else.
func delayedOnly() http.Handler {
	digits := regexp.MustCompile(`^[0-9]{1,7}$`)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ms := r.URL.Query()["ms"]
		n := -1
		if len(ms) > 0 && digits.MatchString(ms[0]) {
			n, _ = strconv.Atoi(ms[0])
		}
		if r.URL.Path != "/delayed" || n < 0 || n > 60000 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":"no such thing here"}`))
			return
		}
		time.Sleep(time.Duration(n) * time.Millisecond)
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("DELAYED"))
	})
}

// A server checked for a scenario that sends only /delayed?ms= gets the checks that send
// there, and passes them though it serves nothing else; every other check is not needed,
// listed, never run and never a failure. Its readiness after a bad input is its own probe.
func TestNeedsRunOnlyTheChecksOfTheScenariosRoutes(t *testing.T) {
	srv := httptest.NewServer(delayedOnly())
	defer srv.Close()
	s := &Server{Addr: strings.TrimPrefix(srv.URL, "http://"), Needs: &Needs{Routes: []string{"/delayed?"}}}
	probed := 0
	s.Probe = func(context.Context) error { probed++; return nil }
	checks := append(runList(context.Background(), s, selfChecks()), AbuseChecks(context.Background(), s)...)
	if f := failures(checks); len(f) > 0 {
		t.Errorf("failures %q; want none", f)
	}
	for _, c := range checks {
		if !strings.Contains(c.Name, "/delayed") {
			t.Errorf("check %q ran: it sends nothing the scenario does", c.Name)
		}
	}
	if len(checks) < 12 || probed == 0 {
		t.Errorf("%d checks, %d probes; want the /delayed?ms= ones, each followed by its probe", len(checks), probed)
	}
	for _, name := range []string{"/sleep?ms=250", "1,000 headers", "three pipelined requests are answered in order", "/data/-1 → 400 or 404"} {
		if !slices.Contains(s.NotNeeded(), name) {
			t.Errorf("not needed %q does not list %q", s.NotNeeded(), name)
		}
	}
	rep := Report{Checks: checks, NotNeeded: s.NotNeeded()}
	if !rep.Passed() || !strings.Contains(rep.Summary(), "not needed here") {
		t.Errorf("report: passed %v, summary %q", rep.Passed(), rep.Summary())
	}
	s.Probe = func(context.Context) error { return errors.New("status 503") }
	if c := s.after(context.Background(), GroupHTTP, "x"); c.OK || c.Detail != "status 503" {
		t.Errorf("after with a failing probe: %+v", c)
	}
}
