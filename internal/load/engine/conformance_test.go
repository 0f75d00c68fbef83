package engine

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/downstream"
	"github.com/arena-lab/arena/internal/load"
)

// The engine is held to the reference driver (load.DoerDriver over fasthttp): the same
// loads on the same servers must give the same counts and error kinds. The engine runs
// with one loop and with two, so that the split of counts, connections and schedules
// among loops is exercised too.

type driverUnderTest struct {
	name   string
	engine bool
	// make returns a driver for addr whose client opens at most conns connections (0: no
	// bound); what it holds is released when the test ends.
	make func(t *testing.T, addr string, conns int) load.Driver
}

func newEngine(t *testing.T, addr string, loops int) *Engine {
	t.Helper()
	e, err := New(addr, Options{Loops: loops})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	return e
}

var driversUnderTest = []driverUnderTest{
	{name: "reference", make: func(t *testing.T, addr string, conns int) load.Driver {
		d := load.NewHTTPDoer(addr, conns)
		t.Cleanup(d.CloseIdle)
		return load.DoerDriver{Doer: d}
	}},
	{name: "engine, 1 loop", engine: true, make: func(t *testing.T, addr string, _ int) load.Driver { return newEngine(t, addr, 1) }},
	{name: "engine, 2 loops", engine: true, make: func(t *testing.T, addr string, _ int) load.Driver { return newEngine(t, addr, 2) }},
}

// runBound is how long one run may take before the test calls it hung.
const runBound = 4 * time.Second

func runClosed(t *testing.T, d load.Driver, c load.ClosedLoop) load.TagResult {
	t.Helper()
	c.Tag = "t"
	if c.Duration == 0 {
		c.Duration = runBound
	}
	if c.Timeout == 0 {
		c.Timeout = 2 * time.Second
	}
	return run(t, d, c)
}

func runOpen(t *testing.T, d load.Driver, s load.Stream, dur, timeout time.Duration) load.TagResult {
	t.Helper()
	s.Tag = "t"
	if timeout == 0 {
		timeout = 2 * time.Second
	}
	return run(t, d, load.OpenLoop{Streams: []load.Stream{s}, Duration: dur, Timeout: timeout})
}

func run(t *testing.T, d load.Driver, l load.Load) load.TagResult {
	t.Helper()
	rs := runTags(t, d, l)
	if len(rs) != 1 {
		t.Fatalf("%d tags recorded; want 1", len(rs))
	}
	return rs[0]
}

func runTags(t *testing.T, d load.Driver, l load.Load) []load.TagResult {
	t.Helper()
	return runTarget(t, load.Target{Driver: d}, l)
}

// runTarget runs l on target: with its Addr, the load learns the answers of the
// contract's JSON paths from it.
func runTarget(t *testing.T, target load.Target, l load.Load) []load.TagResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runBound+time.Second)
	defer cancel()
	rec := load.NewRecorder(time.Now(), nil)
	if _, err := l.Run(ctx, target, rec); err != nil {
		t.Fatal(err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the load did not end within %s", runBound+time.Second)
	}
	return rec.Results()
}

type counts map[string]int64

// wantCounts checks what a run sent, completed, and counted by status class and error kind:
// every answer under its status, the wrong ones among the errors too (status, body), the
// right ones completed.
func wantCounts(t *testing.T, r load.TagResult, sent int64, status, errs counts) {
	t.Helper()
	nonzero := func(m map[string]int64) counts {
		out := counts{}
		for k, v := range m {
			if v != 0 {
				out[k] = v
			}
		}
		return out
	}
	completed := -errs["status"] - errs["body"]
	for _, n := range status {
		completed += n
	}
	if r.Sent != sent || r.Completed != completed || !maps.Equal(nonzero(r.Status), nonzero(status)) || !maps.Equal(nonzero(r.Errors), nonzero(errs)) {
		t.Errorf("sent %d completed %d status %v errors %v; want sent %d completed %d status %v errors %v",
			r.Sent, r.Completed, r.Status, r.Errors, sent, completed, status, errs)
	}
}

// statusErrors are n status errors when class is not 2xx: a path outside the contract wants
// any 2xx.
func statusErrors(class string, n int64) counts {
	if class == "2xx" {
		return nil
	}
	return counts{"status": n}
}

// healthy is a net/http server with the bodies the engine must frame.
func healthy(t *testing.T) string {
	mux := http.NewServeMux()
	large := strings.Repeat("x", 200_000) // bigger than the engine's 64 KiB read buffer
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("/large", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(large)))
		io.WriteString(w, large)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		// No length and a flush between writes: net/http sends chunks, the last one
		// longer than the engine's read buffer.
		for _, n := range []int{1000, 2000, 70_000} {
			io.WriteString(w, strings.Repeat("c", n))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/close", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		io.WriteString(w, "bye")
	})
	mux.HandleFunc("/status/{code}", func(w http.ResponseWriter, r *http.Request) {
		code, _ := strconv.Atoi(r.PathValue("code"))
		w.WriteHeader(code)
		io.WriteString(w, "status")
	})
	mux.HandleFunc("/head", func(w http.ResponseWriter, r *http.Request) {
		// A HEAD answer announces the body it does not send.
		w.Header().Set("Content-Length", "5000")
		if r.Method != http.MethodHead {
			io.WriteString(w, strings.Repeat("h", 5000))
		}
	})
	mux.HandleFunc("/post", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		io.WriteString(w, "posted")
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(20 * time.Millisecond)
		io.WriteString(w, "slow")
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// agreeOnHealthyPath runs a closed loop of n requests over 8 connections and an open loop
// at rate for dur on path, through every driver: each completes exactly what it sends,
// all 2xx, and the medians are of the same order.
func agreeOnHealthyPath(t *testing.T, path string, n int64, rate int, dur time.Duration, openConns int) {
	addr := healthy(t)
	const conns = 8
	hits := load.HitsWithin(load.PerSecond(rate), dur)
	medians := map[string][2]time.Duration{}
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			r := runClosed(t, d.make(t, addr, conns), load.ClosedLoop{Request: load.Request{Path: path}, Connections: conns, Requests: n})
			wantCounts(t, r, n, counts{"2xx": n}, nil)
			o := runOpen(t, d.make(t, addr, openConns), load.Stream{Request: load.Request{Path: path}, Pacer: load.PerSecond(rate), Connections: openConns}, dur, 0)
			if o.Scheduled != hits {
				t.Fatalf("scheduled %d; want %d", o.Scheduled, hits)
			}
			wantCounts(t, o, hits, counts{"2xx": hits}, nil)
			medians[d.name] = [2]time.Duration{time.Duration(r.Response.ValueAtQuantile(50)), time.Duration(o.Response.ValueAtQuantile(50))}
		})
	}
	if len(medians) != len(driversUnderTest) {
		return // a driver failed: its counts said why
	}
	// Timing on a shared machine is loose: an order of magnitude, with 5 ms of slack. A
	// response finished by a timer rather than by its bytes would be seconds off.
	ref := medians["reference"]
	for name, m := range medians {
		for i, loop := range []string{"closed", "open"} {
			if a, b := m[i], ref[i]; a > 10*b+5*time.Millisecond || b > 10*a+5*time.Millisecond {
				t.Errorf("%s: %s-loop median %v; the reference's %v", name, loop, a, b)
			}
		}
		t.Logf("%s: medians closed %v open %v", name, m[0], m[1])
	}
}

// Odd counts (1999 requests; 1001 hits at 2001/s in 500 ms), so that two loops' shares
// differ by one.
func TestEngineCompletesSmallResponsesAsTheReferenceDoes(t *testing.T) {
	agreeOnHealthyPath(t, "/small", 1999, 2001, 500*time.Millisecond, 0)
}

func TestEngineCompletesBodiesLargerThanItsBufferAsTheReferenceDoes(t *testing.T) {
	agreeOnHealthyPath(t, "/large", 300, 200, 500*time.Millisecond, 4)
}

func TestEngineCompletesChunkedResponsesAsTheReferenceDoes(t *testing.T) {
	agreeOnHealthyPath(t, "/chunked", 1000, 500, 500*time.Millisecond, 4)
}

func TestEngineReconnectsAfterConnectionCloseAsTheReferenceDoes(t *testing.T) {
	agreeOnHealthyPath(t, "/close", 1000, 1000, 500*time.Millisecond, 0)
}

// Framings net/http does not send, from a raw server, one answer per request on a
// connection kept open unless the answer closes it.
func TestEngineFramesRawAnswersAsTheReferenceDoes(t *testing.T) {
	for _, c := range []struct {
		name, answer string
		closes       bool
		class        string
	}{
		{"interim 100 and the answer in one write", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false, "2xx"},
		{"chunks with extensions and a trailer", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=b\r\nhello\r\nA\r\n0123456789\r\n0\r\nX-Trailer: yes\r\n\r\n", false, "2xx"},
		{"204", "HTTP/1.1 204 No Content\r\n\r\n", false, "2xx"},
		{"304 with the representation's length", "HTTP/1.1 304 Not Modified\r\nContent-Length: 1000\r\n\r\n", false, "3xx"}, // not 2xx: a status error
		{"http/1.0 keep-alive", "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", false, "2xx"},
		{"http/1.0, then close", "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", true, "2xx"},
		{"body until close", "HTTP/1.1 200 OK\r\n\r\n" + strings.Repeat("u", 100_000), true, "2xx"},
	} {
		addr := rawServer(t, func(conn *net.TCPConn, br *bufio.Reader) {
			for readRequest(br) == nil {
				if _, err := io.WriteString(conn, c.answer); err != nil || c.closes {
					return
				}
			}
		})
		for _, d := range driversUnderTest {
			t.Run(d.name+"/"+c.name, func(t *testing.T) {
				r := runClosed(t, d.make(t, addr, 4), load.ClosedLoop{Connections: 4, Requests: 101, Request: load.Request{Path: "/"}, Timeout: 500 * time.Millisecond})
				wantCounts(t, r, 101, counts{c.class: 101}, statusErrors(c.class, 101))
				o := runOpen(t, d.make(t, addr, 2), load.Stream{Request: load.Request{Path: "/"}, Pacer: load.PerSecond(500), Connections: 2}, 100*time.Millisecond, 500*time.Millisecond)
				wantCounts(t, o, 50, counts{c.class: 50}, statusErrors(c.class, 50))
			})
		}
	}
}

// A closed loop bounded by time alone stops sending at its deadline and waits for the
// answers still out; everything it sent is answered.
func TestEngineEndsAClosedLoopAtItsDeadlineAsTheReferenceDoes(t *testing.T) {
	addr := healthy(t)
	const dur = 300 * time.Millisecond
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			start := time.Now()
			r := runClosed(t, d.make(t, addr, 4), load.ClosedLoop{Connections: 4, Duration: dur, Request: load.Request{Path: "/slow"}})
			el := time.Since(start)
			// 4 connections, 20 ms answers: about 60 in 300 ms.
			if r.Sent < 20 || r.Sent > 80 {
				t.Errorf("%d sent in %v over 4 connections of 20 ms answers", r.Sent, dur)
			}
			wantCounts(t, r, r.Sent, counts{"2xx": r.Sent}, nil)
			if el < dur || el > dur+500*time.Millisecond {
				t.Errorf("took %v; want its %v and the last answers", el, dur)
			}
		})
	}
}

// An open loop of several streams: each tag gets its own schedule and counts.
func TestEngineCarriesSeveralStreamsAsTheReferenceDoes(t *testing.T) {
	addr := healthy(t)
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			rs := runTags(t, d.make(t, addr, 0), load.OpenLoop{Duration: 300 * time.Millisecond, Timeout: 2 * time.Second, Streams: []load.Stream{
				{Tag: "small", Request: load.Request{Path: "/small"}, Pacer: load.PerSecond(301)},
				{Tag: "missing", Request: load.Request{Path: "/status/404"}, Pacer: load.PerSecond(100), Connections: 3},
				{Tag: "large", Request: load.Request{Path: "/large"}, Pacer: load.PerSecond(50), Connections: 1},
			}})
			want := map[string]struct {
				hits  int64
				class string
			}{"small": {91, "2xx"}, "missing": {30, "4xx"}, "large": {15, "2xx"}}
			if len(rs) != len(want) {
				t.Fatalf("%d tags; want %d", len(rs), len(want))
			}
			for _, r := range rs {
				w := want[r.Tag]
				if r.Scheduled != w.hits {
					t.Errorf("%s: scheduled %d; want %d", r.Tag, r.Scheduled, w.hits)
				}
				wantCounts(t, r, w.hits, counts{w.class: w.hits}, statusErrors(w.class, w.hits))
			}
		})
	}
}

// Methods other than GET: a HEAD answer's Content-Length announces a body that never
// comes, and a POST carries an empty body.
func TestEngineSendsHeadAndPostAsTheReferenceDoes(t *testing.T) {
	addr := healthy(t)
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			for _, req := range []load.Request{{Method: "HEAD", Path: "/head"}, {Method: "POST", Path: "/post"}} {
				r := runClosed(t, d.make(t, addr, 2), load.ClosedLoop{Request: req, Connections: 2, Requests: 20, Timeout: 300 * time.Millisecond})
				wantCounts(t, r, 20, counts{"2xx": 20}, nil)
				o := runOpen(t, d.make(t, addr, 2), load.Stream{Request: req, Pacer: load.PerSecond(200), Connections: 2}, 50*time.Millisecond, 300*time.Millisecond)
				wantCounts(t, o, 10, counts{"2xx": 10}, nil)
			}
		})
	}
}

func TestEngineCountsStatusClassesAsTheReferenceDoes(t *testing.T) {
	addr := healthy(t)
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			for _, c := range []struct {
				path  string
				class string
			}{{"/status/404", "4xx"}, {"/status/500", "5xx"}, {"/status/302", "3xx"}} {
				r := runClosed(t, d.make(t, addr, 4), load.ClosedLoop{Request: load.Request{Path: c.path}, Connections: 4, Requests: 200})
				wantCounts(t, r, 200, counts{c.class: 200}, counts{"status": 200})
				if r.Response.TotalCount() != 0 {
					t.Errorf("%d %s answers in the latency histogram", r.Response.TotalCount(), c.class)
				}
				o := runOpen(t, d.make(t, addr, 0), load.Stream{Request: load.Request{Path: c.path}, Pacer: load.PerSecond(200)}, 150*time.Millisecond, 0)
				wantCounts(t, o, 30, counts{c.class: 30}, counts{"status": 30})
			}
		})
	}
}

// deadAddr is an address nothing listens on.
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestEngineCountsARefusalAsTheReferenceDoes(t *testing.T) {
	addr := deadAddr(t)
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			start := time.Now()
			r := runClosed(t, d.make(t, addr, 2), load.ClosedLoop{Connections: 2, Requests: 20, Request: load.Request{Path: "/"}})
			wantCounts(t, r, 20, nil, counts{"refused": 20})
			// Each connection waits 10 ms after a refusal before it tries again: 10 tries
			// each take at least 90 ms, rather than spinning on a dead server.
			if el := time.Since(start); el < 90*time.Millisecond {
				t.Errorf("20 refusals over 2 connections in %v: no back-off", el)
			}
			if r.Response.TotalCount() != 0 {
				t.Errorf("%d refusals in the latency histogram", r.Response.TotalCount())
			}
			o := runOpen(t, d.make(t, addr, 0), load.Stream{Request: load.Request{Path: "/"}, Pacer: load.PerSecond(100)}, 200*time.Millisecond, 0)
			wantCounts(t, o, 20, nil, counts{"refused": 20})
		})
	}
}

// rawServer serves each connection on 127.0.0.1 with handle, given a reader over it; the
// listener and every connection are closed when the test ends.
func rawServer(t *testing.T, handle func(c *net.TCPConn, br *bufio.Reader)) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		conns  = map[net.Conn]bool{}
		closed bool
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				c.Close()
				return
			}
			conns[c] = true
			wg.Add(1)
			mu.Unlock()
			go func() {
				defer wg.Done()
				defer c.Close()
				handle(c.(*net.TCPConn), bufio.NewReader(c))
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		closed = true
		for c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// readRequest reads one whole request, so that closing afterwards leaves nothing unread
// (a close with unread bytes would send a reset instead of a FIN).
func readRequest(br *bufio.Reader) error {
	req, err := http.ReadRequest(br)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, req.Body)
	return err
}

// waitForClose holds a connection until the client closes it (or the test ends).
func waitForClose(br *bufio.Reader) { _, _ = io.Copy(io.Discard, br) }

// A reset after part of the answer: both drivers count "reset". A reset before any byte
// of the answer is where the two differ, and not by a race (300 of 300 "closed" in a
// trial): fasthttp's ResponseHeader.tryRead treats any error on a response's first byte
// as io.EOF ("treat all other errors on the first byte read as EOF"), which HostClient.Do
// turns into ErrConnectionClosed, so the reference counts that reset "closed" every time,
// while the engine reads ECONNRESET and counts "reset", the kind the counts mean (a server
// that gave up on a connection). The test pins both, so that a change to either shows.
func TestEngineCountsAResetAsTheReferenceDoes(t *testing.T) {
	midBody := rawServer(t, func(c *net.TCPConn, br *bufio.Reader) {
		if readRequest(br) != nil {
			return
		}
		// Linux keeps the bytes received before a reset readable: the client reads the
		// part, then ECONNRESET, however late it reads.
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part of it")
		_ = c.SetLinger(0)
		c.Close()
	})
	beforeAnswer := rawServer(t, func(c *net.TCPConn, br *bufio.Reader) {
		if readRequest(br) != nil {
			return
		}
		_ = c.SetLinger(0)
		c.Close()
	})
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			r := runClosed(t, d.make(t, midBody, 2), load.ClosedLoop{Connections: 2, Requests: 20, Request: load.Request{Path: "/"}})
			wantCounts(t, r, 20, nil, counts{"reset": 20})
			o := runOpen(t, d.make(t, midBody, 0), load.Stream{Request: load.Request{Path: "/"}, Pacer: load.PerSecond(100)}, 200*time.Millisecond, 0)
			wantCounts(t, o, 20, nil, counts{"reset": 20})

			kind := "reset"
			if !d.engine {
				kind = "closed"
			}
			r = runClosed(t, d.make(t, beforeAnswer, 2), load.ClosedLoop{Connections: 2, Requests: 20, Request: load.Request{Path: "/"}})
			wantCounts(t, r, 20, nil, counts{kind: 20})
		})
	}
}

func TestEngineCountsAConnectionClosedWithoutAnswerAsTheReferenceDoes(t *testing.T) {
	addr := rawServer(t, func(c *net.TCPConn, br *bufio.Reader) {
		_ = readRequest(br) // then the deferred close: a FIN, no answer
	})
	// A close in the middle of a body announced by its length is "closed" too.
	short := rawServer(t, func(c *net.TCPConn, br *bufio.Reader) {
		if readRequest(br) == nil {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nshort")
		}
	})
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			r := runClosed(t, d.make(t, addr, 2), load.ClosedLoop{Connections: 2, Requests: 20, Request: load.Request{Path: "/"}})
			wantCounts(t, r, 20, nil, counts{"closed": 20})
			o := runOpen(t, d.make(t, addr, 2), load.Stream{Request: load.Request{Path: "/"}, Pacer: load.PerSecond(100), Connections: 2}, 200*time.Millisecond, 0)
			wantCounts(t, o, 20, nil, counts{"closed": 20})
			r = runClosed(t, d.make(t, short, 2), load.ClosedLoop{Connections: 2, Requests: 20, Request: load.Request{Path: "/"}})
			wantCounts(t, r, 20, nil, counts{"closed": 20})
		})
	}
}

func TestEngineCountsATimeoutAsTheReferenceDoes(t *testing.T) {
	addr := rawServer(t, func(c *net.TCPConn, br *bufio.Reader) {
		if readRequest(br) == nil {
			waitForClose(br) // never answers
		}
	})
	const timeout = 200 * time.Millisecond
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			r := runClosed(t, d.make(t, addr, 2), load.ClosedLoop{Connections: 2, Requests: 4, Request: load.Request{Path: "/"}, Timeout: timeout})
			wantCounts(t, r, 4, nil, counts{"timeout": 4})
			// One connection for hits 50 ms apart: the second waits for the first to time
			// out on a connection that is then closed, and goes out on a new one.
			o := runOpen(t, d.make(t, addr, 1), load.Stream{Request: load.Request{Path: "/"}, Pacer: load.PerSecond(20), Connections: 1}, 100*time.Millisecond, timeout)
			wantCounts(t, o, 2, nil, counts{"timeout": 2})
			// A timeout enters the histograms at the time it waited: its service time not
			// less than the timeout (less the histogram's rounding) and not much more; its
			// response time the same when nothing queued, and with the wait in it when it
			// queued (the open loop's second hit: 2·200 − 50 ms).
			type hist interface {
				TotalCount() int64
				Min() int64
				Max() int64
			}
			check := func(what string, h hist, n int64, lo, hi time.Duration) {
				t.Helper()
				least, most := time.Duration(h.Min()), time.Duration(h.Max())
				if h.TotalCount() != n || least < lo || most >= hi {
					t.Errorf("%s: %d values in [%v, %v]; want %d in [%v, %v)", what, h.TotalCount(), least, most, n, lo, hi)
				}
			}
			lo := timeout - time.Millisecond
			check("closed loop's response times", r.Response, 4, lo, time.Second)
			check("closed loop's service times", r.Service, 4, lo, time.Second)
			check("open loop's service times", o.Service, 2, lo, time.Second)
			if least, most := time.Duration(o.Response.Min()), time.Duration(o.Response.Max()); least < lo || most < 2*timeout-50*time.Millisecond-time.Millisecond || most >= time.Second {
				t.Errorf("open loop's response times in [%v, %v]; want the first ≈ %v, the second ≈ %v", least, most, timeout, 2*timeout-50*time.Millisecond)
			}
		})
	}
}

func TestEngineCountsAnAnswerThatIsNotHTTPAsTheReferenceDoes(t *testing.T) {
	garbage := func(answer string) string {
		return rawServer(t, func(c *net.TCPConn, br *bufio.Reader) {
			if readRequest(br) == nil {
				io.WriteString(c, answer)
				waitForClose(br)
			}
		})
	}
	for _, answer := range []string{
		"NOT HTTP AT ALL\r\n\r\n",
		"HTTP/1.1 2000 OK\r\nContent-Length: 0\r\n\r\n", // a status of four digits
		"HTTP/1.1 200 OK\r\nContent-Length: many\r\n\r\n",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nnot-hex\r\n",
	} {
		addr := garbage(answer)
		for _, d := range driversUnderTest {
			t.Run(fmt.Sprintf("%s/%.20q", d.name, answer), func(t *testing.T) {
				r := runClosed(t, d.make(t, addr, 2), load.ClosedLoop{Connections: 2, Requests: 10, Request: load.Request{Path: "/"}, Timeout: 500 * time.Millisecond})
				wantCounts(t, r, 10, nil, counts{"other": 10})
			})
		}
	}
}

// The engine keeps a load's idle connections for the next one. A server that closes an
// idle connection meanwhile must not cost the next load an error: the engine checks a
// kept connection before it uses it.
func TestEngineDoesNotReuseAConnectionTheServerClosedBetweenLoads(t *testing.T) {
	var mu sync.Mutex
	accepted := 0
	addr := rawServer(t, func(c *net.TCPConn, br *bufio.Reader) {
		mu.Lock()
		accepted++
		mu.Unlock()
		if readRequest(br) != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		time.Sleep(50 * time.Millisecond) // then closes the idle keep-alive connection
	})
	for _, loops := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d loops", loops), func(t *testing.T) {
			e := newEngine(t, addr, loops)
			c := load.ClosedLoop{Connections: 1, Requests: 1, Request: load.Request{Path: "/"}}
			mu.Lock()
			accepted = 0
			mu.Unlock()
			for i := 0; i < 3; i++ {
				if i > 0 {
					time.Sleep(200 * time.Millisecond)
				}
				wantCounts(t, runClosed(t, e, c), 1, counts{"2xx": 1}, nil)
			}
			mu.Lock()
			defer mu.Unlock()
			if accepted != 3 {
				t.Errorf("%d connections for 3 loads; want a new one each time", accepted)
			}
		})
	}
}

// Within a load too: a server that closes a connection left idle between two hits of an
// open loop costs no error, the next hit goes out on a new connection. (The reference
// counts such hits "closed": fasthttp sends on its pooled connection without checking it.)
func TestEngineDropsAnIdleConnectionTheServerClosesDuringALoad(t *testing.T) {
	addr := rawServer(t, func(c *net.TCPConn, br *bufio.Reader) {
		if readRequest(br) == nil {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
			time.Sleep(20 * time.Millisecond) // then closes, 80 ms before the next hit
		}
	})
	for _, loops := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d loops", loops), func(t *testing.T) {
			r := runOpen(t, newEngine(t, addr, loops), load.Stream{Request: load.Request{Path: "/"}, Pacer: load.PerSecond(10), Connections: 2}, 500*time.Millisecond, 0)
			wantCounts(t, r, 5, counts{"2xx": 5}, nil)
		})
	}
}

// And a connection still open is reused by the next load, not dialled again.
func TestEngineReusesAKeptConnectionInTheNextLoad(t *testing.T) {
	var mu sync.Mutex
	accepted := 0
	addr := rawServer(t, func(c *net.TCPConn, br *bufio.Reader) {
		mu.Lock()
		accepted++
		mu.Unlock()
		for readRequest(br) == nil {
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	e := newEngine(t, addr, 2)
	for i := 0; i < 3; i++ {
		wantCounts(t, runClosed(t, e, load.ClosedLoop{Connections: 2, Requests: 10, Request: load.Request{Path: "/"}}), 10, counts{"2xx": 10}, nil)
		wantCounts(t, runOpen(t, e, load.Stream{Request: load.Request{Path: "/"}, Pacer: load.PerSecond(100), Connections: 2}, 100*time.Millisecond, 0), 10, counts{"2xx": 10}, nil)
	}
	mu.Lock()
	defer mu.Unlock()
	if accepted != 2 {
		t.Errorf("%d connections over 6 loads of 2 connections; want the 2 kept ones reused", accepted)
	}
}

// loopsRunning counts the engine's event loops still running in this process.
func loopsRunning() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "engine.(*loop).run(")
}

// Cancelling a load ends it promptly, with nothing left running, and the engine carries
// the next load as if nothing happened.
func TestEngineStopsPromptlyWhenCancelledAndRunsAgain(t *testing.T) {
	addr := healthy(t)
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			drv := d.make(t, addr, 4)
			for _, l := range []load.Load{
				load.ClosedLoop{Tag: "t", Connections: 4, Duration: time.Minute, Timeout: time.Minute, Request: load.Request{Path: "/slow"}},
				load.OpenLoop{Streams: []load.Stream{{Tag: "t", Request: load.Request{Path: "/slow"}, Pacer: load.PerSecond(200), Connections: 4}}, Duration: time.Minute, Timeout: time.Minute},
			} {
				ctx, cancel := context.WithCancel(context.Background())
				time.AfterFunc(150*time.Millisecond, cancel)
				start := time.Now()
				rec := load.NewRecorder(start, nil)
				if _, err := l.Run(ctx, load.Target{Driver: drv}, rec); err != nil {
					t.Fatalf("%s: %v", l.Describe().Text, err)
				}
				if el := time.Since(start); el > time.Second {
					t.Fatalf("%s: returned %v after its start, %v after the cancel", l.Describe().Text, el, el-150*time.Millisecond)
				}
				if rec.Results()[0].Completed == 0 {
					t.Errorf("%s: nothing completed before the cancel", l.Describe().Text)
				}
				if d.engine {
					if n := loopsRunning(); n != 0 {
						t.Fatalf("%d event loops still running after the load returned", n)
					}
				}
			}
			if !d.engine {
				// The reference returns at the cancel without waiting for the requests it
				// abandoned: they hold its 4 connections until their 20 ms answers, and a
				// load started before then finds none free (fasthttp's ErrNoFreeConns,
				// "other"). The engine's loops have closed theirs by the time it returns.
				time.Sleep(100 * time.Millisecond)
			}
			r := runClosed(t, drv, load.ClosedLoop{Connections: 4, Requests: 40, Request: load.Request{Path: "/small"}})
			wantCounts(t, r, 40, counts{"2xx": 40}, nil)
		})
	}
}

// An open loop whose connections cannot keep up: with 2 connections and 20 ms answers the
// server carries 100/s, the schedule asks 200/s. The hits queue; their wait counts in
// their response time (from the intended send) and not in their service time, so the
// response-time tail is far above the service time's (coordinated omission corrected),
// and the hits that queued count late.
func TestEngineMeasuresABacklogFromIntendedTimesAsTheReferenceDoes(t *testing.T) {
	addr := healthy(t)
	const dur = 400 * time.Millisecond
	hits := load.HitsWithin(load.PerSecond(200), dur)
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			r := runOpen(t, d.make(t, addr, 2), load.Stream{Request: load.Request{Path: "/slow"}, Pacer: load.PerSecond(200), Connections: 2}, dur, 0)
			wantCounts(t, r, hits, counts{"2xx": hits}, nil)
			resp, svc := time.Duration(r.Response.ValueAtQuantile(99)), time.Duration(r.Service.ValueAtQuantile(99))
			// The last hits wait for about half the schedule's length: (80 − 2·20)·10 ms.
			if resp < 150*time.Millisecond || resp < 4*svc {
				t.Errorf("response p99 %v, service p99 %v: the backlog's wait is not in the response time", resp, svc)
			}
			if svc < 20*time.Millisecond || svc > 150*time.Millisecond {
				t.Errorf("service p99 %v; want about the server's 20 ms", svc)
			}
			if r.Late < hits/4 {
				t.Errorf("%d of %d hits late; the queued ones should be", r.Late, hits)
			}
			// The lateness is the server's backlog, not the client's: at 200/s both drivers
			// take every hit up on time, and say so apart from Late.
			if r.ClientLate > r.Late/4 {
				t.Errorf("%d of %d late hits counted as the client's own; they waited for a connection", r.ClientLate, r.Late)
			}
			t.Logf("late %d/%d, response p99 %v, service p99 %v", r.Late, hits, resp, svc)
		})
	}
}

// rawAnswers serves every request with answer (HTTP/1.1 framing as given), closing the
// connection after each when closes.
func rawAnswers(t *testing.T, answer string, closes bool) string {
	return rawServer(t, func(c *net.TCPConn, br *bufio.Reader) {
		for readRequest(br) == nil {
			if _, err := io.WriteString(c, answer); err != nil || closes {
				return
			}
		}
	})
}

// A path of the contract wants its answer: 200 and the body's length. The right answer,
// whatever its framing, completes; a fast 503, an empty 200, a short body, chunks or a body
// until close of the wrong length are each counted under their status and as the error
// they are, and none is in the latency.
func TestEngineClassifiesTheContractsAnswersAsTheReferenceDoes(t *testing.T) {
	ok := "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	for _, c := range []struct {
		name, path, answer string
		closes             bool
		class, err         string
	}{
		{"INSTANT", "/instant", ok + "Content-Length: 7\r\n\r\nINSTANT", false, "2xx", ""},
		{"INSTANT in chunks", "/instant", ok + "Transfer-Encoding: chunked\r\n\r\n3\r\nINS\r\n4\r\nTANT\r\n0\r\n\r\n", false, "2xx", ""},
		{"INSTANT until close", "/instant", ok + "\r\nINSTANT", true, "2xx", ""},
		{"SLEPT, a query on the path", "/sleep?ms=1", ok + "Content-Length: 5\r\n\r\nSLEPT", false, "2xx", ""},
		{"a fast 503", "/instant", "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 7\r\n\r\nINSTANT", false, "5xx", "status"},
		{"201, not the contract's 200", "/instant", "HTTP/1.1 201 Created\r\nContent-Length: 7\r\n\r\nINSTANT", false, "2xx", "status"},
		{"an empty 200", "/instant", ok + "Content-Length: 0\r\n\r\n", false, "2xx", "body"},
		{"a short body", "/delayed?ms=0", ok + "Content-Length: 3\r\n\r\nDEL", false, "2xx", "body"},
		{"chunks of the wrong length", "/instant", ok + "Transfer-Encoding: chunked\r\n\r\n3\r\nINS\r\n3\r\nTAN\r\n0\r\n\r\n", false, "2xx", "body"},
		{"a body until close of the wrong length", "/instant", ok + "\r\nINSTANT!", true, "2xx", "body"},
		{"another path's answer", "/sleep", ok + "Content-Length: 7\r\n\r\nINSTANT", false, "2xx", "body"},
	} {
		addr := rawAnswers(t, c.answer, c.closes)
		errs := counts{}
		if c.err != "" {
			errs[c.err] = 1
		}
		times := func(n int64) counts {
			out := counts{}
			for k, v := range errs {
				out[k] = v * n
			}
			return out
		}
		for _, d := range driversUnderTest {
			t.Run(d.name+"/"+c.name, func(t *testing.T) {
				req := load.Request{Path: c.path}
				r := runClosed(t, d.make(t, addr, 4), load.ClosedLoop{Connections: 4, Requests: 101, Request: req, Timeout: 500 * time.Millisecond})
				wantCounts(t, r, 101, counts{c.class: 101}, times(101))
				o := runOpen(t, d.make(t, addr, 2), load.Stream{Request: req, Pacer: load.PerSecond(500), Connections: 2}, 100*time.Millisecond, 500*time.Millisecond)
				wantCounts(t, o, 50, counts{c.class: 50}, times(50))
				for _, x := range []load.TagResult{r, o} {
					if got, want := x.Response.TotalCount(), x.Completed; got != want || x.Service.TotalCount() != want {
						t.Errorf("%d response and %d service times for %d correct answers: a wrong answer has no latency", got, x.Service.TotalCount(), want)
					}
				}
			})
		}
	}
}

// A JSON path's bytes are each contender's: the load learns their length from one answer
// that means the contract's document, on the target itself. Two servers that space the
// same record differently both pass; one whose learning answer is empty fails every
// answer, and one that answers right once and empty after fails every answer after.
func TestEngineHoldsEachContenderToTheJSONLengthItLearned(t *testing.T) {
	compact := string(downstream.Data1)
	spaced := "{\n  \"id\": 1, \"value\": \"one\", \"active\": true,\n  \"props\": [\"yxc\", \"xcv\", \"xcv\"]\n}\n"
	jsonOK := "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
	sized := func(body string) string {
		return jsonOK + "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	empty := jsonOK + "Content-Length: 0\r\n\r\n"
	for _, d := range driversUnderTest {
		t.Run(d.name, func(t *testing.T) {
			// Right once (the learning answer), then empty.
			var mu sync.Mutex
			served := 0
			turns := rawServer(t, func(c *net.TCPConn, br *bufio.Reader) {
				for readRequest(br) == nil {
					mu.Lock()
					served++
					answer := empty
					if served == 1 {
						answer = sized(compact)
					}
					mu.Unlock()
					if _, err := io.WriteString(c, answer); err != nil {
						return
					}
				}
			})
			for _, c := range []struct {
				name, addr string
				wantErr    string
			}{
				{"compact, by its length", rawAnswers(t, sized(compact), false), ""},
				{"spaced, a trailing newline, in chunks", rawAnswers(t, jsonOK+"Transfer-Encoding: chunked\r\n\r\n"+strconv.FormatInt(int64(len(spaced)), 16)+"\r\n"+spaced+"\r\n0\r\n\r\n", false), ""},
				{"empty from the first", rawAnswers(t, empty, false), "body"},
				{"a 502 from the first", rawAnswers(t, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n", false), "status"},
				{"right once, then empty", turns, "body"},
			} {
				class := "2xx"
				if c.wantErr == "status" {
					class = "5xx"
				}
				rs := runTarget(t, load.Target{Addr: c.addr, Driver: d.make(t, c.addr, 2)},
					load.ClosedLoop{Tag: "t", Connections: 2, Requests: 40, Request: load.Request{Path: "/data/1"}, Duration: runBound, Timeout: time.Second})
				errs := counts{}
				if c.wantErr != "" {
					errs[c.wantErr] = 40
				}
				t.Run(c.name, func(t *testing.T) { wantCounts(t, rs[0], 40, counts{class: 40}, errs) })
			}
		})
	}
}
