package agent

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// The run's key is the secret's: the same for every agent and coordinator holding it,
// another for another secret, and none for a secret too short to be one.
func TestTLSKeyIsTheSecrets(t *testing.T) {
	a, err := tlsKey(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := tlsKey(testSecret)
	other, _ := tlsKey(strings.Repeat("7", len(testSecret)))
	if !a.Equal(again) || a.Equal(other) {
		t.Error("the key is not a function of the secret alone")
	}
	if strings.Contains(string(a.Public().(ed25519.PublicKey)), testSecret[:8]) {
		t.Error("the public key shows the secret")
	}
	if _, err := ServerTLS("short"); err == nil {
		t.Error("a certificate for a 5-character secret")
	}
	if _, err := ClientTLS("short"); err == nil {
		t.Error("a pin for a 5-character secret")
	}
}

// listenTLS serves h as an agent holding secret serves, on loopback, until the test ends.
func listenTLS(t *testing.T, secret string, h http.Handler) string {
	t.Helper()
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := Listen(raw, secret)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// An agent with the secret serves TLS 1.3 that only a caller pinning the run's key accepts:
// a caller holding another secret, or one trusting the system's CAs, never gets as far as
// sending its request; a request in clear gets nothing of the agent.
func TestAgentsTransportIsPinnedTLS(t *testing.T) {
	addr := listenTLS(t, testSecret, (&Server{Self: Self("pinned"), Secret: testSecret}).Handler())
	if _, err := Dial(context.Background(), addr, testSecret); err != nil {
		t.Fatalf("the run's own coordinator: %v", err)
	}
	// Someone in between: a TLS server of another key, which would take the secret from
	// the header of the first call it is sent.
	impostor := listenTLS(t, strings.Repeat("e", len(testSecret)), http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the impostor was sent %s %s with %q", r.Method, r.URL.Path, r.Header.Get("Authorization"))
	}))
	if _, err := Dial(context.Background(), impostor, testSecret); !errors.Is(err, ErrNotPinned) {
		t.Errorf("an agent of another key: %v, want %v", err, ErrNotPinned)
	}
	client, _, err := Client(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	cfg := client.Transport.(*http.Transport).TLSClientConfig
	if cfg.MinVersion != tls.VersionTLS13 {
		t.Errorf("the coordinator accepts TLS below 1.3: %x", cfg.MinVersion)
	}
	if _, err := http.Get("https://" + addr + "/v1/hello"); err == nil {
		t.Error("a client trusting the system's CAs accepted the agent: the pin is the only trust")
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "GET /v1/hello HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "+testSecret+"\r\n\r\n")
	raw, _ := io.ReadAll(bufio.NewReader(conn))
	if strings.Contains(string(raw), "pinned") || strings.Contains(string(raw), "200 OK") {
		t.Errorf("a request in clear was answered: %q", raw)
	}
}

// There is no agent without a secret (issue 34, 2): Listen refuses to serve without one, and
// a Server given none answers every call, its coordinator's "empty" one included, with 401.
func TestNoAgentWithoutASecret(t *testing.T) {
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := Listen(raw, ""); err == nil {
		t.Error("Listen without a secret served")
	}
	srv := httptest.NewServer((&Server{Self: Self("bare"), Run: func(context.Context, RunRequest, string, io.Writer) (string, error) {
		t.Error("a run was carried out for a caller without a secret")
		return "", nil
	}}).Handler())
	defer srv.Close()
	for _, auth := range []string{"", "Bearer ", "Bearer"} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/run", strings.NewReader(`{"spec":{"id":"r"}}`))
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("a run on an agent without a secret, Authorization %q: %d, want 401", auth, resp.StatusCode)
		}
	}
}
