package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

const testSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// call sends method path with body (JSON of it, when not nil) and secret, and returns the
// status and the answer's body.
func call(t *testing.T, url, method, path, secret string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := pinned(t).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// guarded serves a load agent holding testSecret, allowed to send load to 127.0.0.1 only.
func guarded(t *testing.T) string {
	t.Helper()
	noScenarios := func(name string) (scenario.Scenario, error) { return nil, errors.New("no scenario " + name) }
	return serveTLS(t, &Server{Self: Self("guarded"), Secret: testSecret, Targets: []string{"127.0.0.1"},
		Resolve: PlanResolver(noScenarios)}).URL
}

// serveTLS serves s as `arena agent` serves it, in TLS with the key of s.Secret, until the
// test ends.
func serveTLS(t *testing.T, s *Server) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(s.Handler())
	cfg, err := ServerTLS(s.Secret)
	if err != nil {
		t.Fatal(err)
	}
	srv.TLS = cfg
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// pinned is a coordinator's client: TLS pinned to testSecret's key.
func pinned(t *testing.T) *http.Client {
	t.Helper()
	c, scheme, err := Client(testSecret)
	if err != nil || scheme != "https" {
		t.Fatalf("the client of a secret: %s, %v", scheme, err)
	}
	return c
}

// TestCallWithoutTheSecretGets401: every route, hello included, answers a call without the
// secret or with a wrong one (of the same length, a prefix, another scheme) with 401 and
// nothing of the agent: no name, no build.
func TestCallWithoutTheSecretGets401(t *testing.T) {
	url := guarded(t)
	wrong := []string{"", strings.Repeat("0", len(testSecret)), testSecret[:40], testSecret + "0"}
	for _, route := range []struct{ method, path string }{
		{"GET", "/v1/hello"}, {"GET", "/v1/clock"}, {"POST", "/v1/load"}, {"POST", "/v1/run"}, {"GET", "/v1/runs/x"}, {"GET", "/nothing"},
	} {
		for _, s := range wrong {
			code, body := call(t, url, route.method, route.path, s, nil)
			if code != http.StatusUnauthorized {
				t.Errorf("%s %s with secret %q: %d, want 401", route.method, route.path, s, code)
			}
			if strings.Contains(body, "guarded") || strings.Contains(body, Version()) {
				t.Errorf("%s %s: the 401 tells who the agent is: %s", route.method, route.path, body)
			}
		}
	}
	if code, body := call(t, url, "GET", "/v1/hello", testSecret, nil); code != http.StatusOK || !strings.Contains(body, "guarded") {
		t.Errorf("hello with the secret: %d %s", code, body)
	}
	if _, err := Dial(context.Background(), strings.TrimPrefix(url, "https://"), "another"+testSecret[7:]); err == nil || !errors.Is(err, ErrNotPinned) {
		t.Errorf("Dial with another secret: %v, want the pin refused", err)
	}
	if _, err := Dial(context.Background(), strings.TrimPrefix(url, "https://"), testSecret); err != nil {
		t.Errorf("Dial with the secret: %v", err)
	}
}

// validJob is a job the guarded agent takes: a short closed loop on loopback.
func validJob() Job {
	return Job{Target: "127.0.0.1:9", Parts: 1, Warmup: -1, Interval: time.Second, Start: time.Now(), Slack: 50 * time.Millisecond,
		Closed: &ClosedJob{Tag: "x", Path: "/instant", Connections: 10, Duration: time.Second, Timeout: time.Second}}
}

// TestJobsOutsideTheBoundsGet400: a job aimed at another host, a path with CRLF or a space,
// 100,000 connections, an hour's load, a sub-millisecond interval, a start far ahead: each
// refused with a 400 naming what is wrong, before any load is sent.
func TestJobsOutsideTheBoundsGet400(t *testing.T) {
	url := guarded(t)
	cases := []struct {
		name, want string
		mend       func(j *Job)
	}{
		{"another target", "sends load only to 127.0.0.1", func(j *Job) { j.Target = "10.9.8.7:80" }},
		{"a name for a target", "IP address", func(j *Job) { j.Target = "example.com:80" }},
		{"CRLF in the path", "control characters", func(j *Job) { j.Closed.Path = "/x HTTP/1.1\r\nHost: a\r\n\r\nGET /y" }},
		{"a space in the path", "no spaces", func(j *Job) { j.Closed.Path = "/a b" }},
		{"no leading slash", "starts with '/'", func(j *Job) { j.Closed.Path = "http://evil/" }},
		{"100,000 connections", "at most 20000", func(j *Job) { j.Closed.Connections = 100_000 }},
		{"an hour", "at most 30m0s", func(j *Job) { j.Closed.Duration = time.Hour }},
		{"no duration", "duration above 0", func(j *Job) { j.Closed.Duration = 0 }},
		{"no connections", "over 0 connections", func(j *Job) { j.Closed.Connections = 0 }},
		{"-5 connections", "over -5 connections", func(j *Job) { j.Closed.Connections = -5 }},
		{"a 1-ms interval", "interval 1ms", func(j *Job) { j.Interval = time.Millisecond }},
		{"a start an hour ahead", "within 1m0s", func(j *Job) { j.Start = time.Now().Add(time.Hour) }},
		{"part 3 of 2", "part 3 of 2", func(j *Job) { j.Part, j.Parts = 3, 2 }},
	}
	for _, c := range cases {
		j := validJob()
		c.mend(&j)
		code, body := call(t, url, "POST", "/v1/load", testSecret, j)
		if code != http.StatusBadRequest || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s; want 400 saying %q", c.name, code, body, c.want)
		}
	}
	// The open loop the scenario resolves: a stream beyond the rate bound is refused too.
	if err := checkLoad(withRate(openLoop(), 2*MaxRate)); err == nil || !strings.Contains(err.Error(), "requests a second") {
		t.Errorf("an open loop at twice the rate bound: %v", err)
	}
	if err := checkLoad(openLoop()); err != nil {
		t.Errorf("the test's open loop: %v", err)
	}
}

// TestLoadAgentRefusesRuns: an agent without a lab answers /v1/run and /v1/runs with 404,
// to its own coordinator too.
func TestLoadAgentRefusesRuns(t *testing.T) {
	url := guarded(t)
	if code, _ := call(t, url, "POST", "/v1/run", testSecret, RunRequest{Spec: results.RunSpec{ID: "r1", Scenario: "sleep"}}); code != http.StatusNotFound {
		t.Errorf("POST /v1/run on a load agent: %d, want 404", code)
	}
	if code, _ := call(t, url, "GET", "/v1/runs/r1", testSecret, nil); code != http.StatusNotFound {
		t.Errorf("GET /v1/runs on a load agent: %d, want 404", code)
	}
}

// TestBusyServerAgentAnswersOnlyItsCoordinator: while a server agent carries out a run,
// another coordinator (another secret) gets 401 and learns nothing; its own coordinator
// gets 409 for a second run and for a load.
func TestBusyServerAgentAnswersOnlyItsCoordinator(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	s := &Server{Self: Self("srv"), Secret: testSecret, Targets: []string{"127.0.0.1"}, Resolve: resolverOf(openLoop()), RunsDir: t.TempDir(),
		Run: func(ctx context.Context, req RunRequest, runsDir string, out io.Writer) (string, error) {
			close(started)
			<-release
			return results.RunComplete, nil
		}}
	srv := serveTLS(t, s)
	first := make(chan int)
	go func() {
		code, _ := call(t, srv.URL, "POST", "/v1/run", testSecret, RunRequest{Spec: results.RunSpec{ID: "first", Scenario: "sleep"}})
		first <- code
	}()
	<-started
	other := strings.Repeat("f", len(testSecret))
	if code, body := call(t, srv.URL, "POST", "/v1/run", other, RunRequest{Spec: results.RunSpec{ID: "second", Scenario: "sleep"}}); code != http.StatusUnauthorized || strings.Contains(body, "busy") {
		t.Errorf("another coordinator's run: %d %s, want a bare 401", code, body)
	}
	if code, body := call(t, srv.URL, "POST", "/v1/run", testSecret, RunRequest{Spec: results.RunSpec{ID: "second", Scenario: "sleep"}}); code != http.StatusConflict {
		t.Errorf("its own coordinator's second run: %d %s, want 409", code, body)
	}
	if code, body := call(t, srv.URL, "POST", "/v1/load", testSecret, validJob()); code != http.StatusConflict {
		t.Errorf("its own coordinator's load during the run: %d %s, want 409", code, body)
	}
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Errorf("the first run: %d", code)
	}
}

// TestCheckListen: no secret is allowed nowhere, loopback included (every user of the host
// reaches it); a short secret nowhere.
func TestCheckListen(t *testing.T) {
	for _, c := range []struct {
		listen, secret string
		ok             bool
	}{
		{"127.0.0.1:7600", "", false}, {"[::1]:7600", "", false}, {"localhost:7600", "", false},
		{"0.0.0.0:7600", "", false}, {"10.0.0.2:7600", "", false}, {":7600", "", false},
		{"127.0.0.1:7600", testSecret, true},
		{"0.0.0.0:7600", testSecret, true}, {"0.0.0.0:7600", "short", false},
	} {
		if err := CheckListen(c.listen, c.secret); (err == nil) != c.ok {
			t.Errorf("listen %s, secret %q: %v, want ok=%v", c.listen, c.secret, err, c.ok)
		}
	}
	s, err := NewSecret()
	if err != nil || len(s) != 64 || CheckSecret(s) != nil {
		t.Errorf("NewSecret: %q %v", s, err)
	}
	if again, _ := NewSecret(); again == s {
		t.Error("two secrets alike")
	}
}

// withRate is ld with its first stream paced at rate a second.
func withRate(ld load.OpenLoop, rate int) load.OpenLoop {
	ld.Streams = append([]load.Stream(nil), ld.Streams...)
	ld.Streams[0].Pacer = load.PerSecond(rate)
	return ld
}

// TestSecretFiles: a secret file others may read is refused with the chmod that mends it; one
// the agent makes for itself is 0600 in a folder of 0700 nobody else named, and reads back.
func TestSecretFiles(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "secret")
	if err := os.WriteFile(file, []byte(testSecret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSecret(file); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a secret file of mode 0644: %v, want refused", err)
	}
	if err := os.Chmod(file, 0o604); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSecret(file); err == nil {
		t.Error("a secret file others may read (0604) was read")
	}
	if err := os.Chmod(file, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := ReadSecret(file); err != nil || s != testSecret {
		t.Errorf("a secret file of mode 0600: %q %v", s, err)
	}
	secret, made, err := MakeSecretFile()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(made)) })
	fst, err := os.Stat(made)
	if err != nil {
		t.Fatal(err)
	}
	dst, err := os.Stat(filepath.Dir(made))
	if err != nil {
		t.Fatal(err)
	}
	if fst.Mode().Perm() != 0o600 || dst.Mode().Perm() != 0o700 {
		t.Errorf("the made secret file %s: mode %04o in a folder of %04o, want 0600 in 0700", made, fst.Mode().Perm(), dst.Mode().Perm())
	}
	if back, err := ReadSecret(made); err != nil || back != secret || CheckSecret(secret) != nil {
		t.Errorf("the made secret reads back %q (%v), want %q", back, err, secret)
	}
	if os.Geteuid() == 0 { // the cross-user case: user nobody cannot read the made secret
		cat := exec.Command("cat", made)
		cat.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		if out, err := cat.CombinedOutput(); err == nil || strings.Contains(string(out), secret) {
			t.Errorf("user nobody read the made secret: %q %v", out, err)
		}
	}
}
