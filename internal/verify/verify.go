// Package verify checks a running contender against the contract (contenders/README.md):
// every path, body, content type and error case, and after each bad request that the
// server is still ready. The lab refuses to measure a contender that fails.
package verify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/arena-lab/arena/internal/downstream"
	"github.com/arena-lab/arena/internal/load"
)

// Version names the check list. A verify stamp of another version is not trusted, so that a
// new or changed check re-verifies builds that passed the old list: raise it with every such
// change.
const Version = 4

// The groups of checks, one per part of the contract. A contender is measured on a scenario
// when the groups that scenario needs passed (TechEmpower verifies each test type apart); a
// failed http group keeps it out of everything.
const (
	GroupHTTP   = "http"
	GroupChat   = "chat"
	GroupStream = "stream"
	GroupDB     = "db"
)

// Groups are every group, in the order they run and are reported.
var Groups = []string{GroupHTTP, GroupChat, GroupStream, GroupDB}

// Check is one rule, checked.
type Check struct {
	Group  string        `json:"group"`
	Name   string        `json:"name"`
	OK     bool          `json:"ok"`
	Detail string        `json:"detail,omitempty"`
	Took   time.Duration `json:"took_ns"`
}

// Report is every check of one contender.
type Report struct {
	Contender string  `json:"contender"`
	Checks    []Check `json:"checks"`
	// NotNeeded are the checks not run because the scenario checked for sends nothing they
	// do (a target: see Needs); never failures.
	NotNeeded []string `json:"not_needed,omitempty"`
}

// Passed reports whether every check passed.
func (r Report) Passed() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return len(r.Checks) > 0
}

// PassedGroups reports whether every named group was checked and passed.
func (r Report) PassedGroups(groups ...string) bool {
	for _, g := range groups {
		if t := r.Tally(g); t.Total == 0 || t.Passed < t.Total {
			return false
		}
	}
	return true
}

// Tally counts one group's checks.
type Tally struct {
	Group         string
	Passed, Total int
}

// Tally counts the checks of group.
func (r Report) Tally(group string) Tally {
	t := Tally{Group: group}
	for _, c := range r.Checks {
		if c.Group == group {
			t.Total++
			if c.OK {
				t.Passed++
			}
		}
	}
	return t
}

// String is "http 38/38 ✓" or "stream 20/21 ✗".
func (t Tally) String() string {
	mark := "✓"
	if t.Passed < t.Total {
		mark = "✗"
	}
	return fmt.Sprintf("%s %d/%d %s", t.Group, t.Passed, t.Total, mark)
}

// Summary tallies every group that was checked: "http 38/38 ✓, chat 12/12 ✓, stream 20/21 ✗".
func (r Report) Summary() string {
	var parts []string
	for _, g := range Groups {
		if t := r.Tally(g); t.Total > 0 {
			parts = append(parts, t.String())
		}
	}
	if len(r.NotNeeded) > 0 {
		parts = append(parts, fmt.Sprintf("%d not needed here", len(r.NotNeeded)))
	}
	return strings.Join(parts, ", ")
}

// Failures lists the failed checks' names and details.
func (r Report) Failures() []string {
	var out []string
	for _, c := range r.Checks {
		if !c.OK {
			out = append(out, c.Name+": "+c.Detail)
		}
	}
	return out
}

// tolerated is an answer short of the RFC's that a check accepts, with its reason: the server
// stays safe (it refuses, closes, or ignores the input and goes on, its others unaffected). The
// check passes and its detail says what was tolerated, so that the output shows which stack
// answered so.
type tolerated string

func (t tolerated) Error() string { return "tolerated: " + string(t) }

// request is one row of the contract as a check.
type request struct {
	name     string
	method   string
	path     string
	status   int
	ctype    string // "text/plain", "application/json", or "json" (any JSON media type)
	body     func([]byte) error
	minTook  time.Duration
	maxTook  time.Duration
	bad      bool // a bad request: afterwards the server must still be ready
	deadline time.Duration
}

// Contract media types. The health probes may answer any JSON type (Actuator's own
// vendor type, unless asked for application/json): see contenders/README.md.
const (
	textPlain = "text/plain"
	appJSON   = "application/json"
	anyJSON   = "json"
)

func exactly(want string) func([]byte) error {
	return func(b []byte) error {
		if string(b) != want {
			return fmt.Errorf("body %q, want %q", clip(b), want)
		}
		return nil
	}
}

// The JSON bodies' meaning is load's (load.SameJSON, load.StatusUP): the loads learn each
// contender's bytes for it from one answer checked the same way.

func errorBody(b []byte) error {
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		return fmt.Errorf(`body %q is not a JSON object {"error":…}`, clip(b))
	}
	if s, ok := v["error"].(string); !ok || strings.TrimSpace(s) == "" {
		return fmt.Errorf(`body %q has no non-empty "error" string`, clip(b))
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func bad(name, path string, status int) request {
	return request{name: name, path: path, status: status, ctype: appJSON, body: errorBody, bad: true}
}

// selfChecks need no downstream but the contender itself (DOWNSTREAM_URL unset).
func selfChecks() []request {
	return []request{
		{name: "liveness probe", path: "/actuator/health/liveness", status: 200, ctype: anyJSON, body: load.StatusUP},
		{name: "readiness probe", path: "/actuator/health/readiness", status: 200, ctype: anyJSON, body: load.StatusUP},
		{name: "/instant", path: "/instant", status: 200, ctype: textPlain, body: exactly("INSTANT"), maxTook: time.Second},
		{name: "/delayed?ms=300 waits 300 ms", path: "/delayed?ms=300", status: 200, ctype: textPlain, body: exactly("DELAYED"), minTook: 290 * time.Millisecond, maxTook: 3 * time.Second},
		{name: "/delayed?ms=0", path: "/delayed?ms=0", status: 200, ctype: textPlain, body: exactly("DELAYED"), maxTook: time.Second},
		{name: "/sleep waits 100 ms by default", path: "/sleep", status: 200, ctype: textPlain, body: exactly("SLEPT"), minTook: 95 * time.Millisecond, maxTook: 2 * time.Second},
		{name: "/sleep?ms=250", path: "/sleep?ms=250", status: 200, ctype: textPlain, body: exactly("SLEPT"), minTook: 240 * time.Millisecond, maxTook: 3 * time.Second},
		{name: "/resources/data1.json", path: "/resources/data1.json", status: 200, ctype: appJSON, body: load.SameJSON(downstream.Data1)},
		{name: "/resources/data2.json", path: "/resources/data2.json", status: 200, ctype: appJSON, body: load.SameJSON(downstream.Data2)},
		{name: "/data/1 through itself", path: "/data/1", status: 200, ctype: appJSON, body: load.SameJSON(downstream.Data1)},
		{name: "/data/2 through itself", path: "/data/2", status: 200, ctype: appJSON, body: load.SameJSON(downstream.Data2)},
		bad("/data/3: downstream 404 → 404", "/data/3", 404),
		bad("/data/abc → 400", "/data/abc", 400),
		bad("/data/1.5 → 400", "/data/1.5", 400),
		bad("/delayed?ms=abc → 400", "/delayed?ms=abc", 400),
		bad("/delayed?ms=-1 → 400", "/delayed?ms=-1", 400),
		bad("/delayed?ms=60001 → 400", "/delayed?ms=60001", 400),
		bad("/delayed?ms=99999999999999999999 → 400", "/delayed?ms=99999999999999999999", 400),
		bad("/sleep?ms= → 400", "/sleep?ms=", 400),
		bad("/sleep?ms=1.5 → 400", "/sleep?ms=1.5", 400),
		bad("unknown path → 404", "/no/such/path", 404),
		{name: "POST /instant does not break the server", method: http.MethodPost, path: "/instant", bad: true},
	}
}

// downstreamChecks need the lab's downstream as DOWNSTREAM_URL.
func downstreamChecks() []request {
	return []request{
		{name: "/data/1 through the downstream", path: "/data/1", status: 200, ctype: appJSON, body: load.SameJSON(downstream.Data1)},
		{name: "/data/2 through the downstream", path: "/data/2", status: 200, ctype: appJSON, body: load.SameJSON(downstream.Data2)},
		bad("/data/3: downstream 404 → 404", "/data/3", 404),
		bad(fmt.Sprintf("/data/%d: downstream 500 → 502", downstream.FailingID), fmt.Sprintf("/data/%d", downstream.FailingID), 502),
		bad(fmt.Sprintf("/data/%d: downstream answers malformed JSON → 502", downstream.MalformedID), fmt.Sprintf("/data/%d", downstream.MalformedID), 502),
		{name: fmt.Sprintf("/data/%d: no answer in 2 s → 502", downstream.HangingID), path: fmt.Sprintf("/data/%d", downstream.HangingID),
			status: 502, ctype: appJSON, body: errorBody, bad: true, minTook: 1500 * time.Millisecond, maxTook: 5 * time.Second, deadline: 8 * time.Second},
	}
}

// client is verify's own HTTP client: keep-alive, no automatic redirects or retries.
var client = &http.Client{
	Timeout:       15 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

func (r request) run(ctx context.Context, base string) Check {
	c := Check{Name: r.name}
	deadline := r.deadline
	if deadline == 0 {
		deadline = 15 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	method := r.method
	if method == "" {
		method = http.MethodGet
	}
	req, _ := http.NewRequestWithContext(ctx, method, base+r.path, nil)
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		c.Took = time.Since(start)
		c.Detail = fmt.Sprintf("%s %s: %v", method, r.path, err)
		return c
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	resp.Body.Close()
	c.Took = time.Since(start)
	if err != nil {
		c.Detail = "reading the body: " + err.Error()
		return c
	}
	var problems []string
	if r.status != 0 && resp.StatusCode != r.status {
		problems = append(problems, fmt.Sprintf("status %d, want %d", resp.StatusCode, r.status))
	}
	if r.ctype != "" {
		if err := checkType(resp.Header.Get("Content-Type"), r.ctype); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if r.body != nil {
		if err := r.body(bytes.TrimSpace(body)); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if r.minTook > 0 && c.Took < r.minTook {
		problems = append(problems, fmt.Sprintf("answered in %s, want ≥ %s", c.Took.Round(time.Millisecond), r.minTook))
	}
	if r.maxTook > 0 && c.Took > r.maxTook {
		problems = append(problems, fmt.Sprintf("answered in %s, want ≤ %s", c.Took.Round(time.Millisecond), r.maxTook))
	}
	c.OK = len(problems) == 0
	c.Detail = strings.Join(problems, "; ")
	return c
}

func checkType(header, want string) error {
	mt, _, err := mime.ParseMediaType(header)
	if err != nil {
		return fmt.Errorf("Content-Type %q is not a media type", header)
	}
	switch {
	case want == anyJSON && (mt == appJSON || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json")):
		return nil
	case mt == want:
		return nil
	}
	return fmt.Errorf("Content-Type %q, want %s", header, want)
}

// runList runs checks in order; after a bad one, the server must still be ready and the same
// processes.
func runList(ctx context.Context, s *Server, list []request) []Check {
	var out []Check
	for _, r := range list {
		if ctx.Err() != nil {
			break
		}
		if !s.needed(r.name, r.path) {
			continue
		}
		c := r.run(ctx, s.Base())
		c.Group = GroupHTTP
		out = append(out, c)
		if r.bad {
			out = append(out, s.after(ctx, GroupHTTP, r.name))
		}
	}
	return out
}

// SelfChecks runs the HTTP checks that need no downstream, then the abuse a server meets,
// with the 10-s default of /delayed checked alongside so that it costs no extra time.
func SelfChecks(ctx context.Context, s *Server) []Check {
	var wg sync.WaitGroup
	var slow []Check
	if r := (request{name: "/delayed waits 10 s by default", path: "/delayed", status: 200, ctype: textPlain,
		body: exactly("DELAYED"), minTook: 9900 * time.Millisecond, maxTook: 14 * time.Second, deadline: 20 * time.Second}); s.needed(r.name, r.path) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := r.run(ctx, s.Base())
			c.Group = GroupHTTP
			slow = append(slow, c)
		}()
	}
	out := runList(ctx, s, selfChecks())
	out = append(out, AbuseChecks(ctx, s)...)
	wg.Wait()
	return append(out, slow...)
}

// DownstreamChecks runs the checks against the lab's downstream ds, checks that the
// contender really called it and reused its connections, and ends with the downstream gone:
// a refused connection is a 502 too.
func DownstreamChecks(ctx context.Context, s *Server, ds *downstream.Server) []Check {
	before := ds.Requests()
	out := runList(ctx, s, downstreamChecks())
	called := Check{Group: GroupHTTP, Name: "/data/{id} calls DOWNSTREAM_URL", OK: ds.Requests() > before}
	if !called.OK {
		called.Detail = "the downstream saw no request"
	}
	out = append(out, called, keptAlive(ctx, s, ds))
	// Last, as it ends the downstream: a refused connection (and a pooled one that closed).
	_ = ds.Close()
	return append(out, runList(ctx, s, []request{
		{name: "/data/1: downstream refuses the connection → 502", path: "/data/1", status: 502, ctype: appJSON, body: errorBody, bad: true, maxTook: 5 * time.Second},
	})...)
}

// keptAlive makes twenty calls in a row: a client that keeps connections alive reuses them. A
// stack that spreads calls over one pool per event loop may open one per loop, so the bar is
// that most calls reuse a connection, not that exactly one is open.
func keptAlive(ctx context.Context, s *Server, ds *downstream.Server) Check {
	const calls, maxNew = 20, 10
	conns := ds.Connections()
	var failed error
	for i := 0; i < calls && failed == nil; i++ {
		if c := (request{name: "keep-alive", path: "/data/1", status: 200}).run(ctx, s.Base()); !c.OK {
			failed = errors.New(c.Detail)
		}
	}
	opened := ds.Connections() - conns
	keep := Check{Group: GroupHTTP, Name: fmt.Sprintf("downstream connections are kept alive (%d calls)", calls), OK: failed == nil && opened <= maxNew}
	if failed != nil {
		keep.Detail = failed.Error()
	} else if !keep.OK {
		keep.Detail = fmt.Sprintf("%d new connections for %d sequential calls: most should reuse one", opened, calls)
	}
	return keep
}
