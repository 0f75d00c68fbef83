package lab

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/internal/verify"
)

// ScenarioNeeds are what s sends a server and relies on, when it says so (a scenario with a
// Needs method); ok is false for one that does not, whose targets keep the whole contract.
func ScenarioNeeds(s scenario.Scenario) (needs verify.Needs, ok bool) {
	if d, ok := s.(interface{ Needs() verify.Needs }); ok {
		return d.Needs(), true
	}
	return verify.Needs{}, false
}

// A targetReadiness is how the lab asks a target whether it is ready: what it sends, and one try,
// which returns nil when the target answered as it should, or what came back instead.
type targetReadiness struct {
	sends string
	try   func(ctx context.Context) error
}

// readinessOf is the target's readiness: the path the user named (--target-ready) answered
// with a 2xx; without one, the first route the scenario sends answered with a 2xx, or, for a
// scenario of WebSockets alone, the handshake to its first socket answered with 101; for a
// scenario that says nothing of its routes, the contract's readiness probe.
func readinessOf(t *results.Target, needs *verify.Needs) targetReadiness {
	path := contender.ReadinessPath
	switch {
	case t.Ready != "":
		path = t.Ready
	case needs != nil && len(needs.Routes) > 0:
		path = strings.TrimSuffix(needs.Routes[0], "?")
	case needs != nil && len(needs.Sockets) > 0:
		socket := needs.Sockets[0]
		return targetReadiness{sends: "a WebSocket handshake to " + socket, try: func(ctx context.Context) error {
			return wsHandshake(ctx, t.Addr, socket)
		}}
	}
	url := "http://" + t.Addr + path
	return targetReadiness{sends: "GET " + path, try: func(context.Context) error {
		code, err := (&httpClient{timeout: 2 * time.Second}).get(url)
		switch {
		case err != nil:
			return err
		case code < 200 || code > 299:
			return fmt.Errorf("status %d", code)
		}
		return nil
	}}
}

// targetReady polls the target's readiness until it answers, ctx ends or within passes; its
// error says what was sent and what came back last.
func targetReady(ctx context.Context, addr string, r targetReadiness, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		err := r.try(ctx)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the target at %s did not answer %s as a ready server would within %s (the last answer: %v)", addr, r.sends, within, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// wsHandshake opens a WebSocket to path at addr and closes it: nil when the server
// switched protocols (101), or what it answered instead.
func wsHandshake(ctx context.Context, addr, path string) error {
	d := net.Dialer{Timeout: 2 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(2 * time.Second))
	req := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
	if _, err := nc.Write([]byte(req)); err != nil {
		return err
	}
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return fmt.Errorf("status %d, not 101 Switching Protocols", resp.StatusCode)
	}
	return nil
}
