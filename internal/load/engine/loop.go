package engine

import (
	"math"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arena-lab/arena/internal/load"
)

// A conn is one keep-alive connection, carrying one request at a time (no pipelining).
type conn struct {
	fd       int // -1 once closed
	s        *stream
	dialing  bool   // connect in progress
	inflight bool   // a request is out, or waits for the dial
	wantOut  bool   // EPOLLOUT is registered
	req      []byte // the request out: its stream's next, taken at send
	wrote    int
	intended int64 // ns since the loop's base
	takenUp  int64 // how late past intended the loop took the hit up
	sent     int64
	deadline int64 // when the request out times out
	// prev and next link the loop's requests out, oldest first.
	prev, next *conn
	p          parser
}

// A stream is one tagged request of the load as one loop carries it.
type stream struct {
	tag       *load.CoreTag
	reqs      [][]byte // the request, or one per path, sent in turn from next
	next      int
	want      load.Answer // what an answer must be to count as correct
	head      bool        // a HEAD request: its answers have no body, whatever their headers say
	lateAfter time.Duration
	// Open loop: this loop's share of the schedule from start to end (since the loop's
	// base), the next hit and its intended time (noHit once the schedule is done), the
	// connections it may open (0: no bound) and has open, the idle ones, and the hits
	// waiting for one of them.
	pacer      load.Pacer
	start, end int64
	n          int64
	due        int64
	limit      int
	open       int
	idle       []*conn
	backlog    ring[hit]
	// Closed loop: requests left to send (-1: no count bound).
	budget int64
}

// A hit is an open loop's request waiting for a free connection.
type hit struct{ intended, takenUp int64 }

// noHit is a stream's next intended time once its schedule is done: never.
const noHit = math.MaxInt64

type backoff struct {
	c  *conn
	at int64
}

// loop is one client core's event loop: its own epoll, connections, timers and recorder.
// Everything in it belongs to the one goroutine that runs it, locked to its thread.
type loop struct {
	e        *Engine
	sa       unix.Sockaddr // the engine's address, this loop's own copy: Connect writes into it
	ep, wake int
	conns    []*conn // by fd
	events   []unix.EpollEvent
	buf      []byte
	base     time.Time
	stop     *atomic.Bool
	timeout  int64
	// oldest and newest end the list of requests out in the order they were sent: every
	// request of a load has the same timeout, so the oldest is always the next to expire.
	// A list rather than a queue of deadlines: answered requests leave it at once, so it
	// holds what is out, not every request of the last timeout's length.
	oldest, newest *conn
	backoffs       ring[backoff]
	streams        []*stream
	// closed is the closed loop's mode: send again as soon as an answer is in, until
	// deadline; the open loop's hits follow each stream's schedule.
	closed   bool
	deadline int64
}

func (l *loop) now() int64 { return int64(time.Since(l.base)) }

func newLoop(e *Engine, base time.Time, stop *atomic.Bool, timeout time.Duration) (*loop, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, err
	}
	wake, err := unix.Eventfd(0, unix.EFD_NONBLOCK|unix.EFD_CLOEXEC)
	if err != nil {
		unix.Close(ep)
		return nil, err
	}
	if err := unix.EpollCtl(ep, unix.EPOLL_CTL_ADD, wake, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(wake)}); err != nil {
		unix.Close(ep)
		unix.Close(wake)
		return nil, err
	}
	if timeout <= 0 {
		timeout = time.Hour
	}
	// unix.Connect encodes the address into the Sockaddr it is given: loops connecting at
	// once through one shared Sockaddr would race on it.
	var sa unix.Sockaddr
	switch a := e.sockaddr.(type) {
	case *unix.SockaddrInet4:
		c := *a
		sa = &c
	case *unix.SockaddrInet6:
		c := *a
		sa = &c
	}
	return &loop{e: e, sa: sa, ep: ep, wake: wake, events: make([]unix.EpollEvent, 256), buf: make([]byte, 64<<10),
		base: base, stop: stop, timeout: int64(timeout)}, nil
}

// interrupt wakes the loop from its wait (to notice stop).
func (l *loop) interrupt() {
	var one = [8]byte{1}
	_, _ = unix.Write(l.wake, one[:])
}

// run carries the load until it is done or stopped, then keeps its idle connections in
// the engine's pool for the next load and closes the rest.
func (l *loop) run() {
	if l.closed {
		now := l.now()
		for _, s := range l.streams {
			for _, c := range s.idle {
				if l.mayResend(s, now) {
					l.send(c, now)
				}
			}
			s.idle = s.idle[:0]
		}
	}
	for !l.stop.Load() {
		now := l.now()
		l.expire(now)
		if !l.closed {
			l.dispatch(now)
		}
		if l.finished(now) {
			break
		}
		n := pollNow(l.ep, l.events)
		if n == 0 {
			d := l.sleep(l.now())
			if d >= 0 && d < minSleep {
				d = minSleep
			}
			n = waitFor(l.ep, l.events, d)
		}
		for _, ev := range l.events[:n] {
			fd := int(ev.Fd)
			if fd == l.wake {
				var b [8]byte
				_, _ = unix.Read(l.wake, b[:])
				continue
			}
			if fd < len(l.conns) && l.conns[fd] != nil {
				l.handle(l.conns[fd], ev.Events)
			}
		}
	}
	l.release()
}

// minSleep is the shortest the loop sleeps: when hits fall due closer together than this
// (over 40,000 a second on one loop), it sends those due by the time it wakes together. It
// spends at most this much of the 1 ms in which a hit counts as on time, and saves a wake-up
// a hit: at 100,000 hits a second one core went from 99 % to 88 % busy, with no more late
// hits (docs/performance.md). Service time, from the actual send, is untouched.
const minSleep = 25 * time.Microsecond

// sleep is how long the loop may wait for events before a timer of its own is due
// (< 0: none).
func (l *loop) sleep(now int64) time.Duration {
	next := int64(-1)
	earlier := func(t int64) {
		if next < 0 || t < next {
			next = t
		}
	}
	if !l.closed {
		for _, s := range l.streams {
			if s.due != noHit {
				earlier(s.due) // even behind a backlog: the hit's taking up is timed
			}
		}
	}
	if l.oldest != nil {
		earlier(l.oldest.deadline)
	}
	if b, ok := l.backoffs.peek(); ok {
		earlier(b.at)
	}
	if next < 0 {
		return -1
	}
	return time.Duration(max(next-now, 0))
}

func (l *loop) finished(now int64) bool {
	if l.oldest != nil || l.backoffs.len() > 0 { // requests out, or connections to retry
		return false
	}
	if l.closed {
		return true // every connection answered and none was sent again: the bounds are reached
	}
	for _, s := range l.streams {
		if s.due != noHit || s.backlog.len() > 0 {
			return false
		}
	}
	return true
}

// dispatch sends the open loop's hits that are due: on an idle connection, on a new one
// within the stream's bound, or into the backlog that the next free connection takes in
// schedule order (its wait counts in its response time). Hits of the backlog go first, on
// new connections while the bound allows (after a connection failed).
func (l *loop) dispatch(now int64) {
	for _, s := range l.streams {
		for s.backlog.len() > 0 && (s.limit == 0 || s.open < s.limit) {
			h, _ := s.backlog.pop()
			l.dialAndSend(s, h)
		}
		for s.due <= now {
			intended := s.due
			s.n++
			if d, ok := s.pacer.Due(s.n); ok && s.start+int64(d) < s.end {
				s.due = s.start + int64(d)
			} else {
				s.due = noHit
			}
			h := hit{intended: intended, takenUp: now - intended}
			if s.backlog.len() > 0 {
				s.backlog.push(h)
				continue
			}
			if c := s.popIdle(); c != nil {
				c.intended, c.takenUp = h.intended, h.takenUp
				l.send(c, l.now())
				continue
			}
			if s.limit > 0 && s.open >= s.limit {
				s.backlog.push(h)
				continue
			}
			l.dialAndSend(s, h)
		}
	}
}

func (s *stream) popIdle() *conn {
	for len(s.idle) > 0 {
		c := s.idle[len(s.idle)-1]
		s.idle = s.idle[:len(s.idle)-1]
		if c.fd >= 0 {
			return c
		}
	}
	return nil
}

// dialAndSend opens a connection for a hit and sends it once connected. The dial counts
// in the hit's service time, as it does for a client whose pool is empty.
func (l *loop) dialAndSend(s *stream, h hit) {
	s.open++
	l.send(&conn{fd: -1, s: s, intended: h.intended, takenUp: h.takenUp}, l.now())
}

// dial connects c: a pooled connection if one is still open, else a new non-blocking one.
func (l *loop) dial(c *conn) unix.Errno {
	if fd, ok := l.e.takePooled(); ok {
		c.fd, c.dialing = fd, false
		return l.register(c, unix.EPOLLIN|unix.EPOLLRDHUP)
	}
	fd, err := unix.Socket(l.e.family, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return errnoOf(err)
	}
	_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	c.fd = fd
	err = unix.Connect(fd, l.sa)
	switch err {
	case nil:
		c.dialing = false
		return l.register(c, unix.EPOLLIN|unix.EPOLLRDHUP)
	case unix.EINPROGRESS:
		c.dialing = true
		return l.register(c, unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLOUT)
	}
	return errnoOf(err)
}

func (l *loop) register(c *conn, events uint32) unix.Errno {
	c.wantOut = events&unix.EPOLLOUT != 0
	if err := unix.EpollCtl(l.ep, unix.EPOLL_CTL_ADD, c.fd, &unix.EpollEvent{Events: events, Fd: int32(c.fd)}); err != nil {
		return errnoOf(err)
	}
	for len(l.conns) <= c.fd {
		l.conns = append(l.conns, nil)
	}
	l.conns[c.fd] = c
	return 0
}

func (l *loop) watchOut(c *conn, on bool) {
	if c.wantOut == on {
		return
	}
	ev := uint32(unix.EPOLLIN | unix.EPOLLRDHUP)
	if on {
		ev |= unix.EPOLLOUT
	}
	c.wantOut = on
	_ = unix.EpollCtl(l.ep, unix.EPOLL_CTL_MOD, c.fd, &unix.EpollEvent{Events: ev, Fd: int32(c.fd)})
}

// send puts c's request out (c.intended set by the caller: the hit's, or now in a closed
// loop), from now: its timeout starts here.
func (l *loop) send(c *conn, now int64) {
	if l.closed {
		c.intended = now
	}
	c.sent = now
	c.wrote = 0
	c.req = c.s.reqs[c.s.next]
	if c.s.next++; c.s.next == len(c.s.reqs) {
		c.s.next = 0
	}
	c.p.reset(c.s.head)
	l.out(c, now)
	if c.fd < 0 {
		if errno := l.dial(c); errno != 0 {
			l.fail(c, load.ErrKindOf(errno))
			return
		}
	}
	if !c.dialing {
		l.write(c)
	}
}

func (l *loop) write(c *conn) {
	req := c.req
	n, errno := rawWrite(c.fd, req[c.wrote:])
	switch {
	case errno == unix.EAGAIN:
		l.watchOut(c, true)
	case errno != 0:
		l.fail(c, load.ErrKindOf(errno))
	default:
		c.wrote += n
		l.watchOut(c, c.wrote < len(req))
	}
}

// handle is one connection's readiness.
func (l *loop) handle(c *conn, ev uint32) {
	if c.dialing {
		if ev&(unix.EPOLLOUT|unix.EPOLLERR|unix.EPOLLHUP) == 0 {
			return
		}
		if errno := socketError(c.fd); errno != 0 {
			l.fail(c, load.ErrKindOf(errno))
			return
		}
		c.dialing = false
		if c.inflight {
			l.write(c)
		} else {
			l.watchOut(c, false)
		}
		return
	}
	if ev&unix.EPOLLOUT != 0 && c.inflight && c.wrote < len(c.req) {
		l.write(c)
		if c.fd < 0 {
			return
		}
	}
	if ev&(unix.EPOLLIN|unix.EPOLLRDHUP|unix.EPOLLHUP|unix.EPOLLERR) != 0 {
		l.read(c)
	}
}

// read takes what the server sent: one read a readiness, as wrk does; a response longer
// than the buffer is finished on the next readiness (epoll is level-triggered).
func (l *loop) read(c *conn) {
	n, errno := rawRead(c.fd, l.buf)
	switch {
	case errno == unix.EAGAIN:
		return
	case errno != 0:
		if c.inflight {
			l.fail(c, load.ErrKindOf(errno))
		} else {
			l.drop(c)
		}
		return
	case n == 0:
		switch {
		case !c.inflight:
			l.drop(c)
		case c.p.eof():
			l.complete(c, true)
		default:
			l.fail(c, load.ErrClosed)
		}
		return
	}
	if !c.inflight {
		l.drop(c) // bytes nobody asked for: the connection is not usable
		return
	}
	used, done, err := c.p.feed(l.buf[:n])
	switch {
	case err != nil:
		l.fail(c, load.ErrOther)
	case done:
		l.complete(c, c.p.close || used < n)
	}
}

// out puts c's request on the list of requests out, as the newest.
func (l *loop) out(c *conn, now int64) {
	c.inflight = true
	c.deadline = now + l.timeout
	c.prev, c.next = l.newest, nil
	if l.newest != nil {
		l.newest.next = c
	} else {
		l.oldest = c
	}
	l.newest = c
}

// in takes c's request off the list: answered, failed or timed out.
func (l *loop) in(c *conn) {
	c.inflight = false
	if c.prev != nil {
		c.prev.next = c.next
	} else {
		l.oldest = c.next
	}
	if c.next != nil {
		c.next.prev = c.prev
	} else {
		l.newest = c.prev
	}
	c.prev, c.next = nil, nil
}

// attempt is c's request as it ended at now.
func (c *conn) attempt(now int64, out load.Outcome) load.Attempt {
	return load.Attempt{Lateness: time.Duration(c.sent - c.intended), Response: time.Duration(now - c.intended),
		Service: time.Duration(now - c.sent), TakenUp: time.Duration(c.takenUp), Out: out}
}

// complete records an answer and puts the connection to its next use.
func (l *loop) complete(c *conn, closing bool) {
	now := l.now()
	l.in(c)
	s := c.s
	status := c.p.status
	s.tag.Record(c.attempt(now, load.Outcome{Status: status, ErrKind: s.want.Check(status, c.p.length)}), s.lateAfter)
	if closing {
		l.closeConn(c)
	}
	l.next(c, now)
}

// fail records a request that got no answer and closes its connection (a timed-out one
// may still answer: it must not answer the next request).
func (l *loop) fail(c *conn, kind string) {
	now := l.now()
	if c.inflight {
		l.in(c)
		c.s.tag.Record(c.attempt(now, load.Outcome{ErrKind: kind}), c.s.lateAfter)
	}
	l.closeConn(c)
	if l.closed && kind != load.ErrTimeout {
		// A refused or reset connection waits before its next attempt, so that a dead
		// server is not hammered at the loop's full speed.
		l.backoffs.push(backoff{c: c, at: now + int64(backoffAfterFailure)})
		return
	}
	l.next(c, now)
}

const backoffAfterFailure = 10 * time.Millisecond

// next gives a connection (open or closed) its next request, or leaves it idle.
func (l *loop) next(c *conn, now int64) {
	s := c.s
	if l.closed {
		if l.mayResend(s, now) {
			l.send(c, now)
		}
		return
	}
	if c.fd < 0 {
		s.open--
		return // the backlog's next hit gets a new connection in dispatch
	}
	if h, ok := s.backlog.pop(); ok {
		c.intended, c.takenUp = h.intended, h.takenUp
		l.send(c, now)
		return
	}
	s.idle = append(s.idle, c)
}

// mayResend: the closed loop's bounds, a count and a deadline.
func (l *loop) mayResend(s *stream, now int64) bool {
	if l.stop.Load() || now >= l.deadline || s.budget == 0 {
		return false
	}
	if s.budget > 0 {
		s.budget--
	}
	return true
}

// expire fails the requests past their timeout and retries the connections whose backoff
// is over.
func (l *loop) expire(now int64) {
	for l.oldest != nil && l.oldest.deadline <= now {
		l.fail(l.oldest, load.ErrTimeout)
	}
	for {
		b, ok := l.backoffs.peek()
		if !ok || b.at > now {
			break
		}
		l.backoffs.pop()
		if l.mayResend(b.c.s, now) {
			l.send(b.c, now)
		}
	}
}

// drop closes a connection that is not carrying a request (the server closed it while
// idle, or sent what nobody asked for).
func (l *loop) drop(c *conn) {
	l.closeConn(c)
	if !l.closed {
		c.s.open--
	}
}

func (l *loop) closeConn(c *conn) {
	if c.fd < 0 {
		return
	}
	if c.fd < len(l.conns) && l.conns[c.fd] == c {
		l.conns[c.fd] = nil
	}
	_ = unix.Close(c.fd) // closing also takes it out of the epoll set
	c.fd = -1
	c.dialing = false
}

// release keeps the idle, reusable connections for the engine's next load and closes
// everything else.
func (l *loop) release() {
	stopped := l.stop.Load()
	for _, c := range l.conns {
		if c == nil {
			continue
		}
		if !stopped && !c.inflight && !c.dialing && !c.p.close {
			l.conns[c.fd] = nil
			_ = unix.EpollCtl(l.ep, unix.EPOLL_CTL_DEL, c.fd, nil)
			l.e.pool(c.fd)
			c.fd = -1
			continue
		}
		l.closeConn(c)
	}
}

// closeFds closes the loop's epoll set and wake-up descriptor, once nothing can wake it.
func (l *loop) closeFds() {
	unix.Close(l.ep)
	unix.Close(l.wake)
}

func errnoOf(err error) unix.Errno {
	if e, ok := err.(unix.Errno); ok {
		return e
	}
	return unix.EIO
}
