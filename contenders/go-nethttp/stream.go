package main

// /stream (study 003) on github.com/coder/websocket: per client, a generator goroutine makes
// the messages and a sender goroutine writes them, with a queue between them; the handler's
// goroutine reads (and ignores) what the client sends until it closes (see README.md).
//
// BACKPRESSURE=on: the queue is a buffered channel of 5000 messages. When it is full the
// generator receives one (the oldest) and drops it before sending the new one. The sender
// takes one message at a time and writes it with Conn.Write, which blocks until the frame is
// in the kernel's socket buffer: that one message is the send in flight (≤ 100).
// BACKPRESSURE=off: the queue is a slice that grows without bound; the sender takes all of it
// at once and writes it out while the generator appends a new one.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
)

const (
	streamMaxRate     = 1_000_000
	streamMinSize     = 16
	streamMaxSize     = 65536
	streamDefaultSize = 250
	streamWaiting     = 5000                  // generated messages a client's queue holds (on)
	streamBatch       = 100                   // rate 0: messages per batch, then runtime.Gosched
	streamTick        = 10 * time.Millisecond // rate > 0: the generator's tick
	maxStreamFrame    = 64 * 1024             // what a client sends is ignored; bigger: close 1009
)

var streamPad = bytes.Repeat([]byte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"), streamMaxSize/52+1)

// streamFrame builds {"seq":seq,"ts":<µs now>,"pad":"…"}, exactly size bytes (or its head
// alone when that is longer).
func streamFrame(seq int64, size int) []byte {
	b := make([]byte, 0, max(size, 64))
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"ts":`...)
	b = strconv.AppendInt(b, time.Now().UnixMicro(), 10)
	b = append(b, `,"pad":"`...)
	if n := size - len(b) - 2; n > 0 {
		b = append(b, streamPad[:n]...)
	}
	return append(b, `"}`...)
}

// streamParams reads ?rate=R&size=B; a non-empty problem means 400.
func streamParams(r *http.Request) (rate, size int, problem string) {
	q := r.URL.Query()
	get := func(name string, dflt, lo, hi int) (int, string) {
		if !q.Has(name) {
			return dflt, ""
		}
		n, err := strconv.Atoi(q.Get(name))
		if err != nil || n < lo || n > hi {
			return 0, fmt.Sprintf("%s must be an integer in %d..%d, got %q", name, lo, hi, q.Get(name))
		}
		return n, ""
	}
	if rate, problem = get("rate", 0, 0, streamMaxRate); problem != "" {
		return
	}
	size, problem = get("size", streamDefaultSize, streamMinSize, streamMaxSize)
	return
}

// streamHub counts for /stream/stats and knows the open connections, for the shutdown.
type streamHub struct {
	backpressure       bool
	clients, generated atomic.Int64
	sent, dropped      atomic.Int64
	mu                 sync.Mutex
	conns              map[*websocket.Conn]struct{} // nil once shutting down
}

func newStreamHub(backpressure bool) *streamHub {
	return &streamHub{backpressure: backpressure, conns: map[*websocket.Conn]struct{}{}}
}

// stats answers GET /stream/stats.
func (h *streamHub) stats(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, struct {
		Clients   int64 `json:"clients"`
		Generated int64 `json:"generated"`
		Sent      int64 `json:"sent"`
		Dropped   int64 `json:"dropped"`
	}{h.clients.Load(), h.generated.Load(), h.sent.Load(), h.dropped.Load()})
}

// serve runs one /stream connection until the client closes it or it fails.
func (h *streamHub) serve(w http.ResponseWriter, r *http.Request) {
	rate, size, problem := streamParams(r)
	if problem != "" {
		writeError(w, http.StatusBadRequest, problem) // before Accept: no upgrade
		return
	}
	conn, err := websocket.Accept(w, r, nil) // compression stays off (the library's default)
	if err != nil {
		return // Accept has answered the request already
	}
	conn.SetReadLimit(maxStreamFrame)
	// The connection outlives the request (it is hijacked): a context of its own, cancelled
	// when either side ends; the generator and the sender stop on it.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if !h.track(conn) {
		conn.Close(websocket.StatusGoingAway, "server stopping")
		return
	}
	defer h.untrack(conn)
	h.clients.Add(1)
	defer h.clients.Add(-1)

	var wg sync.WaitGroup
	wg.Add(2)
	if h.backpressure {
		q := make(chan []byte, streamWaiting)
		go func() { defer wg.Done(); h.generate(ctx, rate, size, h.dropOldest(q)) }()
		go func() { defer wg.Done(); defer cancel(); h.sendBounded(ctx, conn, q) }()
	} else {
		q := &growingQueue{ready: make(chan struct{}, 1)}
		put := func(batch [][]byte) {
			q.put(batch)
			h.sent.Add(int64(len(batch))) // off: every generated message counts as sent
		}
		go func() { defer wg.Done(); h.generate(ctx, rate, size, put) }()
		go func() { defer wg.Done(); defer cancel(); sendAll(ctx, conn, q) }()
	}

	// What the client sends is read and thrown away (text that is not UTF-8 fails the
	// connection, see validText); a close or an error ends the stream.
	for {
		typ, msg, err := conn.Read(ctx)
		if err != nil || !validText(conn, typ, msg) {
			break
		}
	}
	cancel()
	conn.CloseNow()
	wg.Wait() // both goroutines are gone, and with them every message of this client
}

// generate makes this client's messages and hands each batch to put: at rate 0 batches of
// 100 with runtime.Gosched between them, else on a 10-ms tick what the clock says is due.
func (h *streamHub) generate(ctx context.Context, rate, size int, put func([][]byte)) {
	batch := make([][]byte, 0, streamBatch)
	var seq int64
	emit := func(n int64) {
		for n > 0 {
			k := min(n, streamBatch)
			batch = batch[:0]
			for range k {
				batch = append(batch, streamFrame(seq, size))
				seq++
			}
			h.generated.Add(k)
			put(batch)
			n -= k
		}
	}
	if rate == 0 {
		for ctx.Err() == nil {
			emit(streamBatch)
			runtime.Gosched() // let the sender and the other clients run
		}
		return
	}
	tick := time.NewTicker(streamTick)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-tick.C:
			emit(now.Sub(start).Microseconds()*int64(rate)/1_000_000 - seq)
		}
	}
}

// dropOldest puts a batch into the bounded channel q; when q is full, the oldest waiting
// message is received and dropped first. Only the generator sends on q, so after a drop
// there is room and the send cannot block.
func (h *streamHub) dropOldest(q chan []byte) func([][]byte) {
	return func(batch [][]byte) {
		var dropped int64
		for _, m := range batch {
			select {
			case q <- m:
			default:
				select {
				case <-q:
					dropped++
				default: // the sender took one meanwhile
				}
				q <- m
			}
		}
		if dropped > 0 {
			h.dropped.Add(dropped)
		}
	}
}

// noCancel is the writes' context: a context that can be cancelled costs the library a
// context.AfterFunc per Write; a Write blocked on a client that reads nothing ends when the
// handler closes the connection (CloseNow) instead.
var noCancel = context.Background()

// sendBounded writes the waiting messages one at a time; Write returns once the frame is in
// the kernel's socket buffer.
func (h *streamHub) sendBounded(ctx context.Context, conn *websocket.Conn, q chan []byte) {
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-q:
			h.sent.Add(1)
			if conn.Write(noCancel, websocket.MessageText, m) != nil {
				return
			}
		}
	}
}

// growingQueue is BACKPRESSURE=off's queue: a slice with no bound.
type growingQueue struct {
	mu    sync.Mutex
	msgs  [][]byte
	ready chan struct{} // a token when msgs went from empty to not empty
}

func (q *growingQueue) put(batch [][]byte) {
	q.mu.Lock()
	wake := len(q.msgs) == 0
	q.msgs = append(q.msgs, batch...)
	q.mu.Unlock()
	if wake {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
}

func (q *growingQueue) takeAll() [][]byte {
	q.mu.Lock()
	defer q.mu.Unlock()
	msgs := q.msgs
	q.msgs = nil
	return msgs
}

// sendAll writes everything the generator queued, a slice at a time.
func sendAll(ctx context.Context, conn *websocket.Conn, q *growingQueue) {
	for {
		msgs := q.takeAll()
		if len(msgs) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-q.ready:
				continue
			}
		}
		for i, m := range msgs {
			if ctx.Err() != nil || conn.Write(noCancel, websocket.MessageText, m) != nil {
				return
			}
			msgs[i] = nil // written: garbage now
		}
	}
}

func (h *streamHub) track(c *websocket.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.conns == nil {
		return false
	}
	h.conns[c] = struct{}{}
	return true
}

func (h *streamHub) untrack(c *websocket.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.conns, c)
}

// shutdown closes every /stream connection with 1001 and waits up to grace for the
// handshakes; each handler then stops its generator and sender. (A sender blocked in Write
// on a client that reads nothing holds the connection's write lock: that client gets no
// close frame before the process exits.)
func (h *streamHub) shutdown(grace time.Duration) {
	h.mu.Lock()
	conns := h.conns
	h.conns = nil
	h.mu.Unlock()
	closeAll(conns, grace)
}
