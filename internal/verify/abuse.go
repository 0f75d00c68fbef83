package verify

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// The HTTP abuse a real server meets (TechEmpower's verifier and the usual scanners): bodies
// and headers too large, bodies framed two ways at once, slow and half-open clients, paths
// that climb out of /resources/, numbers written oddly, old and pipelined requests. Each is
// sent as raw bytes on a connection of its own, so that no client library tidies it first,
// and each is followed by the server's readiness and its process tree.

// answer is one HTTP response read off a raw connection.
type answer struct {
	status int
	proto  string
	header http.Header
	body   []byte
}

// exchange is what a raw connection gave back: the answers in order, and whether the server
// closed the connection (else the wait ran out with it open).
type exchange struct {
	answers []answer
	closed  bool
}

func (e exchange) String() string {
	if len(e.answers) == 0 {
		if e.closed {
			return "no answer, the connection closed"
		}
		return "no answer, the connection left open"
	}
	var parts []string
	for _, a := range e.answers {
		parts = append(parts, fmt.Sprintf("%d %q", a.status, clip(a.body)))
	}
	return strings.Join(parts, ", ")
}

// abuseWait bounds a raw exchange: an answer or a close must come by then.
const abuseWait = 5 * time.Second

// roundTrip connects to addr, writes what send writes (while reading, so that a server that
// answers before reading a large body is heard) and reads answers until the server closes the
// connection, want answers came, or wait ran out.
func roundTrip(ctx context.Context, addr string, send func(net.Conn) error, want int, wait time.Duration) (exchange, error) {
	var ex exchange
	d := net.Dialer{Timeout: 5 * time.Second}
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return ex, err
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Now().Add(wait))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = send(nc) // a server may answer and close before it has read everything: not an error
	}()
	defer wg.Wait()
	br := bufio.NewReader(nc)
	for want <= 0 || len(ex.answers) < want {
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodGet})
		if err != nil {
			var ne net.Error
			if !(errors.As(err, &ne) && ne.Timeout()) {
				ex.closed = true // EOF, a reset, or bytes that are no HTTP: the server is done with it
			}
			return ex, nil
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		ex.answers = append(ex.answers, answer{status: resp.StatusCode, proto: resp.Proto, header: resp.Header, body: bytes.TrimSpace(body)})
		if err != nil {
			ex.closed = true
			return ex, nil
		}
		if resp.Close {
			ex.closed = true
			return ex, nil
		}
	}
	return ex, nil
}

// raw writes b whole.
func raw(b string) func(net.Conn) error {
	return func(nc net.Conn) error { _, err := io.WriteString(nc, b); return err }
}

// halfClose writes b, then shuts the connection's write side (a FIN): a client half gone.
func halfClose(b string) func(net.Conn) error {
	return func(nc net.Conn) error {
		if err := raw(b)(nc); err != nil {
			return err
		}
		return nc.(*net.TCPConn).CloseWrite()
	}
}

// withBody writes head, then n bytes of body in 64 KiB writes.
func withBody(head string, n int) func(net.Conn) error {
	return func(nc net.Conn) error {
		if _, err := io.WriteString(nc, head); err != nil {
			return err
		}
		chunk := bytes.Repeat([]byte("x"), 64<<10)
		for left := n; left > 0; left -= len(chunk) {
			if _, err := nc.Write(chunk[:min(left, len(chunk))]); err != nil {
				return err
			}
		}
		return nil
	}
}

// An abuse is one bad input and the answers the check accepts.
type abuse struct {
	name   string
	send   func(net.Conn) error
	sends  []string // the request targets it sends (none: /instant, as most do)
	want   int      // answers to wait for (0: until the server closes or the wait ends)
	wait   time.Duration
	accept func(exchange) error
}

// survives accepts any answer short of a server error, or a close: a refusal is the server's
// to choose (413, 414, 431, 400, 501 for a method it does not know, or a plain close); any
// other 5xx, or a connection left hanging, is not.
func survives(ex exchange) error {
	for _, a := range ex.answers {
		if a.status >= 500 && a.status != http.StatusNotImplemented {
			return fmt.Errorf("answered %s: a server error", ex)
		}
	}
	if len(ex.answers) == 0 && !ex.closed {
		return fmt.Errorf("%s: want an answer or a close", ex)
	}
	return nil
}

// notSmuggled accepts the request framed two ways answered or refused, but what follows it
// never answered as a request of its own: no answer after the first may be a success (a
// refusal of the leftover bytes, 4xx, is no answer to the hidden request).
func notSmuggled(ex exchange) error {
	for _, a := range ex.answers[min(1, len(ex.answers)):] {
		if a.status < 400 {
			return fmt.Errorf("answered %s: the request hidden in the body was answered as a second request", ex)
		}
	}
	return survives(ex)
}

// unreadable accepts what survives accepts; it tolerates a 500 with the connection closed for
// a request that cannot be read at all (no HTTP, or cut short by the client's FIN), as a
// stack may answer its own parse failure so (Helidon 4.3 does): the server is unharmed.
func unreadable(ex exchange) error {
	if len(ex.answers) == 1 && ex.answers[0].status == http.StatusInternalServerError && ex.closed {
		return tolerated("500, then the connection closed, where RFC 9112 asks for 400 (a stack that answers its own parse failure so)")
	}
	return survives(ex)
}

// jsonError accepts one answer with one of statuses and the contract's JSON error body.
func jsonError(statuses ...int) func(exchange) error {
	return func(ex exchange) error {
		if len(ex.answers) == 0 {
			return fmt.Errorf("%s, want %v with a JSON error", ex, statuses)
		}
		a := ex.answers[0]
		if !slices.Contains(statuses, a.status) {
			return fmt.Errorf("status %d, want one of %v", a.status, statuses)
		}
		if err := checkType(a.header.Get("Content-Type"), appJSON); err != nil {
			return err
		}
		return errorBody(a.body)
	}
}

// okOrJSONError accepts 200 with body, or one of statuses with a JSON error: for inputs the
// contract leaves open ("+5" is an integer to some parsers, a repeated parameter may be read
// first or last).
func okOrJSONError(body string, statuses ...int) func(exchange) error {
	return func(ex exchange) error {
		if len(ex.answers) > 0 && ex.answers[0].status == 200 {
			if got := string(ex.answers[0].body); got != body {
				return fmt.Errorf("200 with body %q, want %q", clip(ex.answers[0].body), body)
			}
			return nil
		}
		return jsonError(statuses...)(ex)
	}
}

// answers accepts exactly the bodies given, in order, each with status 200.
func answers(bodies ...string) func(exchange) error {
	return func(ex exchange) error {
		if len(ex.answers) < len(bodies) {
			return fmt.Errorf("%s, want %d answers in order", ex, len(bodies))
		}
		for i, want := range bodies {
			a := ex.answers[i]
			if a.status != 200 || !bytes.Equal(bytes.Join(bytes.Fields(a.body), nil), []byte(want)) {
				return fmt.Errorf("answer %d: %d %q, want 200 %q", i+1, a.status, clip(a.body), want)
			}
		}
		return nil
	}
}

// get is a raw HTTP/1.1 GET of target, one request.
func get(target string) string {
	return "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
}

// compactData1 is data1.json without spaces, as answers compares bodies.
const compactData1 = `{"id":1,"value":"one","active":true,"props":["yxc","xcv","xcv"]}`

// abuses are the HTTP inputs, each sent on its own connection.
func abuses() []abuse {
	const tenMB = 10 << 20
	manyHeaders := strings.Builder{}
	for i := range 1000 {
		fmt.Fprintf(&manyHeaders, "X-Flood-%d: %d\r\n", i, i)
	}
	smuggled := get("/resources/data2.json")
	var list []abuse
	add := func(a abuse) { list = append(list, a) }
	add(abuse{name: "GET /instant with a 10 MB body", send: withBody(fmt.Sprintf("GET /instant HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\n\r\n", tenMB), tenMB), want: 1, accept: survives})
	add(abuse{name: "POST /instant with a 10 MB body", send: withBody(fmt.Sprintf("POST /instant HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/octet-stream\r\nContent-Length: %d\r\n\r\n", tenMB), tenMB), want: 1, accept: survives})
	add(abuse{name: "1,000 headers", send: raw("GET /instant HTTP/1.1\r\nHost: 127.0.0.1\r\n" + manyHeaders.String() + "\r\n"), want: 1, accept: survives})
	add(abuse{name: "one header of 64 KiB", send: raw("GET /instant HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + strings.Repeat("b", 64<<10) + "\r\n\r\n"), want: 1, accept: survives})
	add(abuse{name: "a request line of 64 KiB", send: raw(get("/instant?q=" + strings.Repeat("q", 64<<10))), want: 1, accept: survives})
	add(abuse{name: "Content-Length and Transfer-Encoding together, a request behind",
		sends: []string{"/instant", "/resources/data2.json"},
		send:  raw("POST /instant HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 6\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" + smuggled), accept: notSmuggled})
	add(abuse{name: "two different Content-Lengths, a request behind",
		sends: []string{"/instant", "/resources/data2.json"},
		send:  raw(fmt.Sprintf("POST /instant HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\nContent-Length: %d\r\n\r\n%s", len(smuggled), smuggled)), accept: notSmuggled})
	add(abuse{name: "an unknown method", send: raw("BREW /instant HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), want: 1, accept: survives})
	add(abuse{name: "bytes that are no HTTP", send: raw("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 not a request\r\n\r\n"), accept: unreadable})
	add(abuse{name: "a request cut short, then the client's FIN", send: halfClose("GET /instant HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Cut: "), accept: unreadable})
	add(abuse{name: "a whole request, then the client's FIN", send: halfClose(get("/instant")), accept: survives})
	// With a Host header, as HTTP/1.0 clients send it (ab does).
	add(abuse{name: "an HTTP/1.0 request is answered, then closed", send: raw("GET /instant HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"), accept: http10})
	add(abuse{name: "three pipelined requests are answered in order",
		sends: []string{"/instant", "/resources/data1.json", "/delayed?ms=0"},
		send:  raw(get("/instant") + get("/resources/data1.json") + get("/delayed?ms=0")), want: 3,
		accept: answers("INSTANT", compactData1, "DELAYED")})
	for _, p := range []string{
		"/resources/..%2f..%2f..%2f..%2fetc%2fpasswd",
		"/resources/%2e%2e/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
		"/resources/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
		"/resources/../../../../etc/passwd",
		"/resources/..%5c..%5c..%5cetc%5cpasswd",
		"/resources//etc/passwd",
		"/resources/%2fetc%2fpasswd",
	} {
		add(abuse{name: p + " → 404, never a file", sends: []string{p}, send: raw(get(p)), want: 1, accept: traversal})
	}
	add(abuse{name: "/data/-1 → 400 or 404", sends: []string{"/data/-1"}, send: raw(get("/data/-1")), want: 1, accept: jsonError(400, 404)})
	add(abuse{name: "/data/99999999999999999999 → 400 or 404", sends: []string{"/data/99999999999999999999"}, send: raw(get("/data/99999999999999999999")), want: 1, accept: jsonError(400, 404)})
	add(abuse{name: "/delayed?ms=1e3 → 400", sends: []string{"/delayed?ms=1e3"}, send: raw(get("/delayed?ms=1e3")), want: 1, accept: jsonError(400)})
	add(abuse{name: "/delayed?ms=0x10 → 400", sends: []string{"/delayed?ms=0x10"}, send: raw(get("/delayed?ms=0x10")), want: 1, accept: jsonError(400)})
	add(abuse{name: "/delayed?ms=%205 → 400", sends: []string{"/delayed?ms=%205"}, send: raw(get("/delayed?ms=%205")), want: 1, accept: jsonError(400)})
	add(abuse{name: "/delayed?ms=+5 → DELAYED or 400", sends: []string{"/delayed?ms=+5"}, send: raw(get("/delayed?ms=+5")), want: 1, accept: okOrJSONError("DELAYED", 400)})
	add(abuse{name: "/delayed?ms=5&ms=7 → DELAYED or 400", sends: []string{"/delayed?ms=5&ms=7"}, send: raw(get("/delayed?ms=5&ms=7")), want: 1, accept: okOrJSONError("DELAYED", 400)})
	add(abuse{name: "/delayed?ms=5&ms=abc → DELAYED or 400", sends: []string{"/delayed?ms=5&ms=abc"}, send: raw(get("/delayed?ms=5&ms=abc")), want: 1, accept: okOrJSONError("DELAYED", 400)})
	return list
}

// http10 accepts INSTANT, then the connection closed: HTTP/1.0 without keep-alive asked for;
// or 505, a server that does not speak HTTP/1.0 saying so (RFC 9110 15.6.6).
func http10(ex exchange) error {
	if len(ex.answers) > 0 && ex.answers[0].status == http.StatusHTTPVersionNotSupported {
		return nil
	}
	if err := answers("INSTANT")(ex); err != nil {
		return err
	}
	if !ex.closed {
		return errors.New("INSTANT, but the connection stayed open: an HTTP/1.0 client that asked for no keep-alive waits for the close")
	}
	return nil
}

// traversal accepts the contract's 404 with a JSON error; a 400 is a refusal just as safe,
// with whatever body, as a stack may refuse the path before any route of the application
// sees it (Tomcat documents a 400 for an encoded "/" and for a path above the root); so is a
// redirect to the path made clean, with no ".." left, which Go's ServeMux documents for every
// path holding "." or ".." segments or repeated slashes.
func traversal(ex exchange) error {
	if len(ex.answers) == 0 {
		return jsonError(404, 400)(ex)
	}
	a := ex.answers[0]
	if bytes.Contains(a.body, []byte("root:")) {
		return fmt.Errorf("served a file: %q", clip(a.body))
	}
	switch loc := a.header.Get("Location"); {
	case a.status == 400:
		return nil
	case a.status != 301 && a.status != 307 && a.status != 308:
		return jsonError(404)(ex)
	case loc == "" || strings.Contains(loc, "..") || strings.Contains(strings.ToLower(loc), "%2e"):
		return fmt.Errorf("status %d to %q: a redirect is accepted only to the path made clean", a.status, loc)
	}
	return nil
}

// targets are the request targets the abuse sends.
func (a abuse) targets() []string {
	if len(a.sends) == 0 {
		return []string{"/instant"}
	}
	return a.sends
}

func (a abuse) run(ctx context.Context, s *Server) Check {
	start := time.Now()
	wait := a.wait
	if wait == 0 {
		wait = abuseWait
	}
	c := Check{Group: GroupHTTP, Name: a.name}
	ex, err := roundTrip(ctx, s.Addr, a.send, a.want, wait)
	c.Took = time.Since(start)
	if err == nil {
		err = a.accept(ex)
	}
	var tol tolerated
	c.OK = err == nil || errors.As(err, &tol)
	if err != nil {
		c.Detail = err.Error()
	}
	return c
}

// AbuseChecks sends every abuse, then holds slow and half-open clients, each followed by the
// readiness and the process tree.
func AbuseChecks(ctx context.Context, s *Server) []Check {
	var out []Check
	for _, a := range abuses() {
		if ctx.Err() != nil {
			return out
		}
		if !s.needed(a.name, a.targets()...) {
			continue
		}
		out = append(out, a.run(ctx, s), s.after(ctx, GroupHTTP, a.name))
	}
	for _, h := range holds() {
		if ctx.Err() != nil {
			return out
		}
		if !s.needed(h.name, "/instant") { // its clients hold /instant requests
			continue
		}
		c := h.run(ctx, s)
		out = append(out, c, s.after(ctx, GroupHTTP, c.Name))
	}
	return out
}
