package load

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// Request is one request of a stream, relative to the target's base address.
type Request struct {
	Method string // GET when empty
	Path   string // e.g. /instant?ms=10
	// Paths, when set, are sent in turn, from the first (which Path then is), instead of
	// Path alone: a stream over many resources, e.g. /db/{id} over the data set's ids, each
	// path's request serialised once. Every answer must be Want: the paths are chosen to
	// answer alike (rows whose JSON is as long).
	Paths []string
	// Want is what its answer must be to count as correct; the loads set it from the
	// target's Answers before they start.
	Want Answer
}

// PathAt is the path of the stream's n-th request, from 0.
func (r Request) PathAt(n int64) string {
	if len(r.Paths) == 0 {
		return r.Path
	}
	return r.Paths[n%int64(len(r.Paths))]
}

// Outcome is what one attempt ended with: a correct answer (its status, no ErrKind), a
// wrong one (its status, and ErrStatus or ErrBody), or no answer (an ErrKind alone).
type Outcome struct {
	Status  int
	ErrKind string // "" for a correct answer; else one of the ErrKind constants
}

// Error kinds, counted separately because each points somewhere else: a timeout at a
// starved server, a refusal at one that died, a reset at one that gave up on a connection,
// a wrong status or body at one that answers fast and wrong.
const (
	ErrTimeout = "timeout"
	ErrRefused = "refused"
	ErrReset   = "reset"
	ErrClosed  = "closed"
	ErrOther   = "other"
	ErrStatus  = "status" // an answer of another status than the request's Want
	ErrBody    = "body"   // an answer whose body is not the length its Want fixes
)

// A Doer performs one request, for DoerDriver: tests drive it with fakes, and with the
// fasthttp doer as the reference the engine (internal/load/engine) is held against.
type Doer interface {
	Do(ctx context.Context, r Request, timeout time.Duration) Outcome
}

// HTTPDoer sends HTTP/1.1 requests with fasthttp over pooled keep-alive connections to one
// host: arena's first client, now the reference the engine's counts and error kinds are
// tested against.
type HTTPDoer struct {
	client *fasthttp.HostClient
	base   string
}

// NewHTTPDoer returns a doer for addr ("127.0.0.1:8080") that opens at most maxConns
// connections (0: practically unbounded, for open loops whose requests may all hang).
func NewHTTPDoer(addr string, maxConns int) *HTTPDoer {
	if maxConns <= 0 {
		maxConns = 1 << 20
	}
	return &HTTPDoer{
		base: "http://" + addr,
		client: &fasthttp.HostClient{
			Addr:                          addr,
			MaxConns:                      maxConns,
			MaxIdleConnDuration:           90 * time.Second,
			DisableHeaderNamesNormalizing: true,
			DisablePathNormalizing:        true,
			NoDefaultUserAgentHeader:      true,
			ReadBufferSize:                16 << 10,
			// One attempt per request: a silent retry would hide exactly the failures we count.
			MaxIdemponentCallAttempts: 1,
		},
	}
}

func (d *HTTPDoer) Do(ctx context.Context, r Request, timeout time.Duration) Outcome {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(d.base + r.Path)
	if r.Method != "" {
		req.Header.SetMethod(r.Method)
	}
	if err := d.client.DoTimeout(req, resp, timeout); err != nil {
		return Outcome{ErrKind: ErrKindOf(err)}
	}
	status := resp.StatusCode()
	return Outcome{Status: status, ErrKind: r.Want.Check(status, int64(len(resp.Body())))}
}

// CloseIdle drops the pooled connections.
func (d *HTTPDoer) CloseIdle() { d.client.CloseIdleConnections() }

// ErrKindOf sorts a transport error into one of the counted kinds.
func ErrKindOf(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, fasthttp.ErrTimeout), errors.Is(err, fasthttp.ErrDialTimeout),
		errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return ErrTimeout
	case errors.Is(err, syscall.ECONNREFUSED):
		return ErrRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return ErrReset
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, fasthttp.ErrConnectionClosed):
		return ErrClosed
	}
	return ErrOther
}
