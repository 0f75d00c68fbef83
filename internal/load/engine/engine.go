// Package engine is arena's HTTP/1.1 load engine, built the way wrk is: one event loop per
// client core, each locked to its thread and pinned to its core, over non-blocking sockets
// and its own epoll set; a request serialised once and written with one write; responses
// parsed as they arrive (status, Content-Length, chunked, keep-alive), their bodies skipped,
// never copied, their lengths checked against the answer the request wants (a wrong status
// or length is an error, not a response); one request in flight per connection. Each loop records into its own
// histograms (load.CoreRecorder), added into the shared ones once a window.
//
// It carries the open and closed loops of every scenario (load.Driver); load.DoerDriver over
// fasthttp is the reference it is tested against.
package engine

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arena-lab/arena/internal/load"
)

// Engine drives one target address. It keeps the connections a load leaves idle for the
// next one (a cell's warm-up hands its connections to the load), until Close.
type Engine struct {
	addr     string
	family   int
	sockaddr unix.Sockaddr
	cpus     []int // the CPUs this process may run on: loop i is pinned to cpus[i % len]
	loops    int

	mu     sync.Mutex
	pooled []int
}

var _ load.Driver = (*Engine)(nil)

// Options shape an engine.
type Options struct {
	// Loops is how many event loops carry a load: one per client core. 0: one per CPU this
	// process may run on (the lab pins the client to --client-cpus before it starts).
	Loops int
}

// New returns an engine for addr ("127.0.0.1:8080", "[::1]:8080"); it connects to nothing
// until a load runs.
func New(addr string, o Options) (*Engine, error) {
	ta, err := net.ResolveTCPAddr("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	e := &Engine{addr: addr, loops: o.Loops}
	if ip4 := ta.IP.To4(); ip4 != nil {
		sa := &unix.SockaddrInet4{Port: ta.Port}
		copy(sa.Addr[:], ip4)
		e.family, e.sockaddr = unix.AF_INET, sa
	} else {
		sa := &unix.SockaddrInet6{Port: ta.Port}
		copy(sa.Addr[:], ta.IP.To16())
		e.family, e.sockaddr = unix.AF_INET6, sa
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		for c := 0; c < len(set)*64; c++ {
			if set.IsSet(c) {
				e.cpus = append(e.cpus, c)
			}
		}
	}
	if e.loops <= 0 {
		e.loops = max(len(e.cpus), 1)
	}
	return e, nil
}

// Loops is how many event loops carry each load.
func (e *Engine) Loops() int { return e.loops }

// Close closes the connections kept between loads.
func (e *Engine) Close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, fd := range e.pooled {
		_ = unix.Close(fd)
	}
	e.pooled = nil
}

func (e *Engine) pool(fd int) {
	e.mu.Lock()
	e.pooled = append(e.pooled, fd)
	e.mu.Unlock()
}

// takePooled returns a kept connection the server has not closed meanwhile.
func (e *Engine) takePooled() (int, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for len(e.pooled) > 0 {
		fd := e.pooled[len(e.pooled)-1]
		e.pooled = e.pooled[:len(e.pooled)-1]
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN | unix.POLLRDHUP}}
		if n, err := unix.Poll(fds, 0); err == nil && n == 0 {
			return fd, true
		}
		_ = unix.Close(fd) // closed by the server, or bytes nobody asked for
	}
	return -1, false
}

// requests are r serialised once, as wrk builds its request before the first connection:
// one request, or one per path of r.Paths, sent in turn.
func (e *Engine) requests(r load.Request) [][]byte {
	method := r.Method
	if method == "" {
		method = "GET"
	}
	paths := r.Paths
	if len(paths) == 0 {
		paths = []string{r.Path}
	}
	out := make([][]byte, len(paths))
	for i, path := range paths {
		var b strings.Builder
		b.WriteString(method + " " + path + " HTTP/1.1\r\nHost: " + e.addr + "\r\n")
		if method == "POST" || method == "PUT" || method == "PATCH" {
			b.WriteString("Content-Length: 0\r\n")
		}
		b.WriteString("\r\n")
		out[i] = []byte(b.String())
	}
	return out
}

// Closed deals the connections and the count out among the loops as evenly as they go.
func (e *Engine) Closed(ctx context.Context, c load.ClosedLoop, deadline time.Time, rec *load.Recorder) {
	reqs := e.requests(c.Request)
	e.run(ctx, min(e.loops, c.Connections), c.Timeout, func(j, n int, l *loop) {
		l.closed = true
		l.deadline = int64(deadline.Sub(l.base))
		s := &stream{tag: rec.Core().Tag(c.Tag), reqs: reqs, next: j % len(reqs), want: c.Request.Want, head: c.Request.Method == "HEAD", lateAfter: time.Duration(1 << 62), budget: -1}
		if c.Requests > 0 {
			s.budget = evenPart(c.Requests, int64(j), int64(n))
		}
		for i := int64(0); i < evenPart(int64(c.Connections), int64(j), int64(n)); i++ {
			s.idle = append(s.idle, &conn{fd: -1, s: s})
		}
		l.streams = []*stream{s}
	})
}

// Open deals each stream's schedule out among the loops hit by hit (hits k ≡ j mod m on
// loop j: every hit at its own intended time); a bounded stream's connections go to as
// many loops as split them evenly.
func (e *Engine) Open(ctx context.Context, o load.OpenLoop, start time.Time, lateAfter time.Duration, rec *load.Recorder) {
	e.run(ctx, e.loops, o.Timeout, func(j, n int, l *loop) {
		core := rec.Core()
		begin := int64(start.Sub(l.base))
		for _, st := range o.Streams {
			m := n
			if st.Connections > 0 {
				// Over as many loops as split its connections evenly: the hits are dealt
				// out evenly, and a loop with fewer connections would queue more of them.
				m = min(m, st.Connections)
				for st.Connections%m != 0 {
					m--
				}
			}
			if j >= m {
				continue
			}
			reqs := e.requests(st.Request)
			s := &stream{tag: core.Tag(st.Tag), reqs: reqs, next: j % len(reqs), want: st.Request.Want, head: st.Request.Method == "HEAD", lateAfter: lateAfter,
				pacer: st.Pacer, start: begin, end: begin + int64(o.Duration), due: noHit}
			if m > 1 {
				s.pacer = load.ShardPacer{P: st.Pacer, I: int64(j), N: int64(m)}
			}
			if st.Connections > 0 {
				s.limit = int(evenPart(int64(st.Connections), int64(j), int64(m)))
			}
			if d, ok := s.pacer.Due(0); ok && int64(d) < int64(o.Duration) {
				s.due = begin + int64(d)
			}
			l.streams = append(l.streams, s)
		}
	})
}

// run starts up to n loops, sets loop j of those it could make up with setup(j, made, l),
// and waits until all are done or ctx ends.
func (e *Engine) run(ctx context.Context, n int, timeout time.Duration, setup func(j, n int, l *loop)) {
	base := time.Now()
	var stop atomic.Bool
	loops := make([]*loop, 0, max(n, 0))
	for j := 0; j < n; j++ {
		l, err := newLoop(e, base, &stop, timeout)
		if err != nil {
			break // out of descriptors: the loops that exist share the load out among them
		}
		loops = append(loops, l)
	}
	if len(loops) == 0 {
		return
	}
	for j, l := range loops {
		setup(j, len(loops), l)
	}
	reserve(len(loops))
	defer reserve(-len(loops))
	var wg sync.WaitGroup
	for j, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The thread is the loop's alone, pinned to one client core while it runs. It
			// goes back to the runtime with its mask restored rather than retired: a child
			// started with Pdeathsig from this thread would die with it.
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			if len(e.cpus) > 1 {
				var was, set unix.CPUSet
				if unix.SchedGetaffinity(0, &was) == nil {
					set.Set(e.cpus[j%len(e.cpus)])
					if unix.SchedSetaffinity(0, &set) == nil {
						defer func() { _ = unix.SchedSetaffinity(0, &was) }() // best effort: the loop is over
					}
				}
			}
			// Wake-ups to the microsecond: the kernel's default slack of 50 µs would send
			// every hit of an idle open loop that much late.
			_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
			defer func() { _ = unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0) }() // 0: the thread's default again
			l.run()
		}()
	}
	done, watched := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(watched)
		select {
		case <-ctx.Done():
			stop.Store(true)
			for _, l := range loops {
				l.interrupt()
			}
		case <-done:
		}
	}()
	wg.Wait()
	close(done)
	<-watched
	for _, l := range loops {
		l.closeFds()
	}
}

// running counts the loops of every engine in this process (in-process agents each have
// one).
var running struct {
	sync.Mutex
	loops int
}

// reserve adds n running loops. Each holds a P of the Go scheduler for as long as it runs;
// the rest of the client (the windows' rotation, the probes, the garbage collector) gets one
// more, so that the kernel shares the cores between them by the microsecond, rather than the
// Go scheduler taking turns every 10 ms. GOMAXPROCS is raised, never lowered: the lab set it
// to the client's CPUs, and a P left idle costs nothing.
func reserve(n int) {
	running.Lock()
	defer running.Unlock()
	running.loops += n
	if want := running.loops + 1; n > 0 && runtime.GOMAXPROCS(0) < want {
		runtime.GOMAXPROCS(want)
	}
}

// evenPart is part i of total split n ways, the first total%n parts one larger.
func evenPart(total, i, n int64) int64 {
	p := total / n
	if i < total%n {
		p++
	}
	return p
}
