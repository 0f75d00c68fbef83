package stream

import (
	"bufio"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Server is the lab's reference producer: the contract done plainly in Go, for verify's own
// tests, the load's tests and the client benchmark. It writes frames by hand into one
// buffered writer per client, so that it can outrun the client it is measured against.
type Server struct {
	ln                                net.Listener
	srv                               *http.Server
	backpressure                      bool
	blast                             bool
	clients, generated, sent, dropped atomic.Int64
	wg                                sync.WaitGroup
}

// ServerOptions choose the producer's behaviour.
type ServerOptions struct {
	Backpressure bool
	// Blast makes rate 0 clients bypass generator and queue: the sender formats each message
	// as it writes it, paced by TCP alone. A producer for measuring the client, not a contender.
	Blast bool
}

// StartServer listens on addr (e.g. "127.0.0.1:0").
func StartServer(addr string, o ServerOptions) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	s := &Server{ln: ln, backpressure: o.Backpressure, blast: o.Blast}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /stream", s.serve)
	mux.HandleFunc("GET /stream/stats", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(s.Stats())
	})
	mux.HandleFunc("GET /actuator/health/readiness", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"UP"}`))
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

// Addr is host:port.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Stats are the server's counters, as /stream/stats answers them.
func (s *Server) Stats() Stats {
	return Stats{Clients: s.clients.Load(), Generated: s.generated.Load(), Sent: s.sent.Load(), Dropped: s.dropped.Load()}
}

// Close stops listening and ends every client.
func (s *Server) Close() error {
	err := s.srv.Close() // hijacked connections are ours: each client ends on its write error
	s.wg.Wait()
	return err
}

func badRequest(w http.ResponseWriter, what string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": what})
}

// param reads an integer query parameter in lo..hi, def when absent.
func param(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if !r.URL.Query().Has(name) {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s must be an integer in %d..%d, got %q", name, lo, hi, v)
	}
	return n, nil
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	rate, err := param(r, "rate", 0, 0, MaxRate)
	if err != nil {
		badRequest(w, err.Error())
		return
	}
	size, err := param(r, "size", DefaultSize, MinSize, MaxSize)
	if err != nil {
		badRequest(w, err.Error())
		return
	}
	key := r.Header.Get("Sec-WebSocket-Key")
	if key == "" || r.Header.Get("Upgrade") == "" {
		badRequest(w, "/stream is a WebSocket: upgrade expected")
		return
	}
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	sum := sha1.Sum([]byte(key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
		base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n")
	if brw.Flush() != nil {
		nc.Close()
		return
	}
	s.wg.Add(1)
	s.clients.Add(1)
	defer func() { s.clients.Add(-1); nc.Close(); s.wg.Done() }()
	c := &client{s: s, nc: nc, w: bufio.NewWriterSize(nc, writeBuffer(s.blast)), rate: rate, size: size, done: make(chan struct{}), wake: make(chan struct{}, 1)}
	go c.readUntilClose(brw.Reader)
	if s.blast && rate == 0 {
		c.blast()
		return
	}
	gen := make(chan struct{})
	go func() { defer close(gen); c.generate() }()
	c.send()
	c.stop()
	<-gen // a client counts until its generator has stopped
}

type client struct {
	s          *Server
	nc         net.Conn
	w          *bufio.Writer
	rate, size int
	done       chan struct{}
	closeOnce  sync.Once
	wake       chan struct{}
	wmu        sync.Mutex // one writer at a time on w: the sender, or the reader's control frames
	closed     bool       // a close frame went out: nothing more may follow
	mu         sync.Mutex
	queue      [][]byte // waiting messages, oldest first (a ring would save the copy; this is the reference)
	seq        int64
}

func (c *client) stop() { c.closeOnce.Do(func() { close(c.done) }) }

// readUntilClose reads what the client sends until it goes: data is ignored, as the
// contract says, but the protocol is kept (RFC 6455): a ping gets its pong, a close its close,
// and a frame no client may send fails the connection with 1002 (1007 for text that is not
// UTF-8, 1009 for a frame over MaxSize).
func (c *client) readUntilClose(br *bufio.Reader) {
	defer c.stop()
	var text []byte // the text message being assembled, to check its UTF-8
	inMessage := false
	for {
		h, err := ReadFrameHeader(br)
		if err != nil {
			return
		}
		control := h.Op >= 8
		switch {
		case !h.Masked || h.RSV != 0 || h.Op > 0xa || (h.Op > 2 && h.Op < 8),
			control && (h.Len > 125 || !h.Fin),
			h.Op == 0 && !inMessage, (h.Op == 1 || h.Op == 2) && inMessage:
			c.closeWith(1002)
			return
		case h.Len > MaxSize:
			c.closeWith(1009)
			return
		}
		var key [4]byte
		payload := make([]byte, h.Len)
		if _, err := io.ReadFull(br, key[:]); err != nil {
			return
		}
		if _, err := io.ReadFull(br, payload); err != nil {
			return
		}
		for i := range payload {
			payload[i] ^= key[i%4]
		}
		switch h.Op {
		case 8:
			c.closeWith(closeAnswer(payload))
			return
		case 9:
			c.control(10, payload)
			continue
		case 10:
			continue
		}
		if h.Op == 1 || (h.Op == 0 && text != nil) {
			text = append(text, payload...)
		}
		inMessage = !h.Fin
		if h.Fin {
			if text != nil && !utf8.Valid(text) {
				c.closeWith(1007)
				return
			}
			text = nil
		}
	}
}

// closeAnswer is the code to answer a client's close with: its own when valid (none when it
// gave none), 1002 when it is no code a peer may send (RFC 6455 7.4).
func closeAnswer(payload []byte) int {
	if len(payload) == 0 {
		return 0
	}
	if len(payload) == 1 || !utf8.Valid(payload[2:]) {
		return 1002
	}
	code := int(payload[0])<<8 | int(payload[1])
	switch {
	case code >= 1000 && code <= 1003, code >= 1007 && code <= 1011, code >= 3000 && code <= 4999:
		return code
	}
	return 1002
}

// control sends a control frame between the data frames.
func (c *client) control(op byte, payload []byte) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return
	}
	_, _ = c.w.Write(append([]byte{0x80 | op, byte(len(payload))}, payload...))
	_ = c.w.Flush()
}

// closeWith sends the close frame (code 0: none), after which nothing more is sent.
func (c *client) closeWith(code int) {
	var payload []byte
	if code != 0 {
		payload = []byte{byte(code >> 8), byte(code)}
	}
	c.control(8, payload)
	c.wmu.Lock()
	c.closed = true
	c.wmu.Unlock()
}

func (c *client) make() []byte {
	now := time.Now().UnixMicro()
	m := appendFrame(make([]byte, 0, c.size+10), c.seq, now, c.size)
	c.seq++
	return m
}

// generate makes messages at the client's rate (0: batches as fast as it can) and queues them.
func (c *client) generate() {
	var tick *time.Ticker
	start := time.Now()
	if c.rate > 0 {
		tick = time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
	}
	var made int64
	for {
		n := Batch
		if tick != nil {
			select {
			case <-c.done:
				return
			case now := <-tick.C:
				n = int(int64(now.Sub(start).Seconds()*float64(c.rate)) - made)
			}
		} else {
			select {
			case <-c.done:
				return
			default:
			}
		}
		batch := make([][]byte, 0, n)
		for range n {
			batch = append(batch, c.make())
		}
		made += int64(n)
		c.s.generated.Add(int64(n))
		if !c.s.backpressure { // handed on at once: sent when generated
			c.s.sent.Add(int64(n))
		}
		c.mu.Lock()
		c.queue = append(c.queue, batch...)
		if c.s.backpressure && len(c.queue) > MaxQueue {
			over := len(c.queue) - MaxQueue
			clear(c.queue[:over])
			c.queue = append(c.queue[:0], c.queue[over:]...)
			c.s.dropped.Add(int64(over))
		}
		c.mu.Unlock()
		select {
		case c.wake <- struct{}{}:
		default:
		}
		if tick == nil {
			runtime.Gosched()
		}
	}
}

// send writes what is queued: with back-pressure at most MaxInFlight messages per write,
// done when the write returns; without, all that waits.
func (c *client) send() {
	for {
		select {
		case <-c.done:
			return
		case <-c.wake:
		}
		for {
			c.mu.Lock()
			n := len(c.queue)
			if c.s.backpressure {
				n = min(n, MaxInFlight)
			}
			out := append([][]byte(nil), c.queue[:n]...)
			clear(c.queue[:n])
			c.queue = c.queue[n:]
			c.mu.Unlock()
			if n == 0 {
				break
			}
			if c.s.backpressure {
				c.s.sent.Add(int64(n))
			}
			if !c.write(out) {
				c.stop()
				return
			}
		}
	}
}

// write sends messages and flushes them; false when the connection failed or was closed.
func (c *client) write(msgs [][]byte) bool {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.closed {
		return false
	}
	for _, m := range msgs {
		_, _ = c.w.Write(m)
	}
	return c.w.Flush() == nil
}

// blast formats and writes messages until the client goes, 256 at a time between the
// reader's control frames.
func (c *client) blast() {
	buf := make([]byte, 0, c.size+16)
	for {
		c.wmu.Lock()
		var err error
		for range 256 {
			buf = appendFrame(buf[:0], c.seq, time.Now().UnixMicro(), c.size)
			c.seq++
			if _, err = c.w.Write(buf); err != nil {
				break
			}
		}
		closed := c.closed
		c.wmu.Unlock()
		if err != nil || closed {
			c.stop()
			return
		}
		c.s.generated.Add(256)
		c.s.sent.Add(256)
		select {
		case <-c.done:
			return
		default:
		}
	}
}

// appendFrame appends one unmasked text frame holding the message, with no copy between.
func appendFrame(dst []byte, seq, ts int64, size int) []byte {
	n := max(size, len(headSeq)+decimals(seq)+len(headTS)+decimals(ts)+len(headPad)+len(tail))
	dst = append(dst, 0x81)
	switch {
	case n < 126:
		dst = append(dst, byte(n))
	case n < 1<<16:
		dst = append(dst, 126, byte(n>>8), byte(n))
	default:
		dst = append(dst, 127, 0, 0, 0, 0, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	return AppendMessage(dst, seq, ts, size)
}

func decimals(n int64) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
}

// writeBuffer is a client's send buffer: large for the blast producer, whose cost is mostly
// the syscalls it makes.
func writeBuffer(blast bool) int {
	if blast {
		return 256 << 10
	}
	return 64 << 10
}
