package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// A Runner runs shares of loads for the coordinator: an agent reached over HTTP (Remote), or
// the coordinator's own process (InProcess). Each says so with a `var _ Runner = …` line.
type Runner interface {
	Hello() Hello
	// Addr is where the coordinator reaches it ("in-process" for its own).
	Addr() string
	// Clock is the agent's clock minus the coordinator's, and the round trip it was
	// measured over (0, 0 in-process).
	Clock() (offset, rtt time.Duration)
	Run(ctx context.Context, job Job) (*Share, error)
}

var _ Runner = (*Remote)(nil)

// Remote is an agent over HTTPS pinned to the run's key (HTTP on loopback without a
// secret); every call carries the run's secret.
type Remote struct {
	addr        string
	scheme      string
	secret      string
	hello       Hello
	offset, rtt time.Duration
	client      *http.Client
}

// clockRounds is how many round trips the offset is estimated over; the one with the
// shortest round trip is kept, as NTP's filter does.
const clockRounds = 8

// Dial greets the agent at addr (host:port) with the run's secret ("" for an agent on
// loopback started without one), over TLS pinned to the run's key, refuses it when it runs
// another protocol or build, and measures its clock's offset.
func Dial(ctx context.Context, addr, secret string) (*Remote, error) {
	client, scheme, err := Client(secret)
	if err != nil {
		return nil, err
	}
	r := &Remote{addr: addr, scheme: scheme, secret: secret, client: client}
	hctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := r.get(hctx, "/v1/hello", &r.hello); err != nil {
		return nil, fmt.Errorf("agent at %s: %w", addr, err)
	}
	if err := r.hello.Check(); err != nil {
		return nil, err
	}
	best := time.Duration(-1)
	for i := 0; i < clockRounds; i++ {
		var c Clock
		t0 := time.Now()
		if err := r.get(hctx, "/v1/clock", &c); err != nil {
			return nil, fmt.Errorf("agent %s's clock: %w", r.hello.Name, err)
		}
		t1 := time.Now()
		rtt := t1.Sub(t0)
		if best < 0 || rtt < best {
			best = rtt
			mid := t0.Add(rtt / 2)
			r.offset = time.Unix(0, c.UnixNano).Sub(mid)
		}
	}
	r.rtt = best
	return r, nil
}

func (r *Remote) Hello() Hello                       { return r.hello }
func (r *Remote) Addr() string                       { return r.addr }
func (r *Remote) Clock() (offset, rtt time.Duration) { return r.offset, r.rtt }

// Run posts the job and waits for the share; ctx bounds it (the coordinator's Ctrl-C ends
// the request, and with it the agent's load).
func (r *Remote) Run(ctx context.Context, job Job) (*Share, error) {
	body, err := json.Marshal(job)
	if err != nil {
		return nil, err
	}
	req, err := r.request(ctx, http.MethodPost, "/v1/load", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	var share Share
	if err := r.do(req, &share); err != nil {
		return nil, fmt.Errorf("agent %s: %w", r.hello.Name, err)
	}
	return &share, nil
}

func (r *Remote) get(ctx context.Context, path string, v any) error {
	req, err := r.request(ctx, http.MethodGet, path, nil)
	if err != nil {
		return err
	}
	return r.do(req, v)
}

// request is a call to the agent carrying the run's secret; a body is JSON.
func (r *Remote) request(ctx context.Context, method, path string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, method, r.scheme+"://"+r.addr+path, body)
	if err != nil {
		return nil, err
	}
	if r.secret != "" {
		req.Header.Set("Authorization", "Bearer "+r.secret)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// MaxAnswer bounds an agent's answer the coordinator decodes: a share's histograms and
// windows are a few MiB at most; an agent (or someone in its place) sends no more (a
// variable so that a test can reach it).
var maxAnswer int64 = 64 << 20

// do sends req and reads a 200's JSON into v, or the agent's Failure as the error.
func (r *Remote) do(req *http.Request, v any) error {
	resp, err := r.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var f Failure
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		if json.Unmarshal(raw, &f) == nil && f.Error != "" {
			return fmt.Errorf("%s", f.Error)
		}
		return fmt.Errorf("%s %s: %s", req.Method, req.URL.Path, resp.Status)
	}
	if err := decodeJSON(io.LimitReader(resp.Body, maxAnswer), v); err != nil {
		return fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err)
	}
	return nil
}

var _ Runner = (*InProcess)(nil)

// InProcess is an agent inside the coordinator's process: the same RunJob, no network.
type InProcess struct {
	Self    Hello
	Resolve Resolver
}

func (p *InProcess) Hello() Hello                       { return p.Self }
func (p *InProcess) Addr() string                       { return "in-process" }
func (p *InProcess) Clock() (offset, rtt time.Duration) { return 0, 0 }
func (p *InProcess) Run(ctx context.Context, job Job) (*Share, error) {
	return RunJob(ctx, job, p.Resolve, p.Self)
}
