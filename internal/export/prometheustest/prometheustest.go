// Package prometheustest runs Debian's prometheus for tests (the binary never imports it):
// a server of its own on a free loopback port, its remote-write receiver on, its data in the
// test's temporary folder, stopped when the test ends; and its HTTP query API.
package prometheustest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Server is a running prometheus.
type Server struct {
	base string // http://127.0.0.1:port
	log  *lockedBuffer
}

// Binary is Debian's prometheus, or the test is skipped, or under CI (where .ci/run installs
// it) failed: a test that needs it never passes without it.
func Binary(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("prometheus")
	if err == nil {
		return bin
	}
	if ci := os.Getenv("CI"); ci != "" && ci != "false" {
		t.Fatal("prometheus is not installed: .ci/run installs Debian's (apt-get install prometheus)")
	}
	t.Skip("prometheus is not installed (apt-get install --no-install-recommends prometheus)")
	return ""
}

// Start runs prometheus with its remote-write receiver, and native histograms when native
// (Prometheus 2.x takes them only behind a feature flag), until the test ends.
func Start(t testing.TB, native bool) *Server {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte("global:\n  scrape_interval: 1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--config.file=" + cfg, "--storage.tsdb.path=" + filepath.Join(dir, "data"),
		"--web.listen-address=127.0.0.1:" + strconv.Itoa(port), "--web.enable-remote-write-receiver", "--log.level=warn"}
	if native {
		args = append(args, "--enable-feature=native-histograms")
	}
	s := &Server{base: fmt.Sprintf("http://127.0.0.1:%d", port), log: &lockedBuffer{}}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = s.log, s.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() { stop(cmd, exited) })
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("prometheus %s exited:\n%s", strings.Join(args, " "), s.log)
		default:
		}
		if resp, err := http.Get(s.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready within 30 s:\n%s", s.log)
		}
	}
}

// stop ends prometheus: SIGTERM, then its group killed after 10 s.
func stop(cmd *exec.Cmd, exited chan struct{}) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// WriteURL is the remote-write receiver's URL.
func (s *Server) WriteURL() string { return s.base + "/api/v1/write" }

// Log is what prometheus printed.
func (s *Server) Log() string { return s.log.String() }

// Sample is one series' value in a query's answer.
type Sample struct {
	Labels map[string]string
	Value  float64
}

// Query evaluates expr at an instant through the HTTP API; a query that fails fails the test.
func (s *Server) Query(t testing.TB, expr string, at time.Time) []Sample {
	t.Helper()
	q := url.Values{"query": {expr}, "time": {strconv.FormatFloat(float64(at.UnixMilli())/1000, 'f', 3, 64)}}
	resp, err := http.Get(s.base + "/api/v1/query?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status, Error string
		Data          struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v %s %s", expr, err, body.Status, body.Error)
	}
	var out []Sample
	for _, r := range body.Data.Result {
		str, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			t.Fatalf("query %s: value %v: %v", expr, r.Value, err)
		}
		out = append(out, Sample{Labels: r.Metric, Value: v})
	}
	return out
}

// One is the query's only sample: a query that answers none or several fails the test.
func (s *Server) One(t testing.TB, expr string, at time.Time) float64 {
	t.Helper()
	got := s.Query(t, expr, at)
	if len(got) != 1 {
		t.Fatalf("query %s at %s: %d samples %v; want one\nprometheus said:\n%s", expr, at.Format(time.RFC3339Nano), len(got), got, s.log)
	}
	return got[0].Value
}

// lockedBuffer is prometheus' output, written by the process while a test may read it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
