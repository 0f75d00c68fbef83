package verify

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"time"

	"github.com/arena-lab/arena/internal/stream"
)

// StreamChecks checks /stream and /stream/stats (contenders/README.md) against s as the lab
// starts it by default (back-pressure on), then the WebSocket protocol's abuse.
func StreamChecks(ctx context.Context, s *Server) []Check {
	var out []Check
	addr := s.Addr
	add := func(name string, started time.Time, err error) {
		c := Check{Group: GroupStream, Name: "stream: " + name, OK: err == nil, Took: time.Since(started)}
		if err != nil {
			c.Detail = err.Error()
		}
		out = append(out, c)
	}
	run := func(name string, f func() error) {
		if ctx.Err() == nil {
			start := time.Now()
			add(name, start, f())
		}
	}
	before, err := stream.FetchStats(addr, 2*time.Second)
	run("/stream/stats answers JSON counters", func() error { return err })
	if err != nil {
		return out
	}
	run("seq counts from 0 at the rate asked (rate=200, size=100)", func() error { return paced(ctx, addr) })
	run("default size is 250 bytes", func() error {
		return readChecked(ctx, addr, "/stream?rate=50", stream.DefaultSize, 5, false)
	})
	run("size 16: the message with an empty pad", func() error {
		return readChecked(ctx, addr, "/stream?rate=50&size=16", 16, 5, false)
	})
	run("size 65536 is honoured", func() error {
		return readChecked(ctx, addr, "/stream?rate=20&size=65536", 65536, 3, false)
	})
	run("rate 0 streams as fast as it can, seq rising", func() error {
		return readChecked(ctx, addr, "/stream", stream.DefaultSize, 3000, true)
	})
	run("what the client sends is ignored", func() error { return ignoresInput(ctx, addr) })
	run("stats count a client while it is open, and generated ≥ sent + dropped", func() error { return counting(ctx, addr, before) })
	run("a client that does not read: the oldest messages are dropped and counted", func() error { return drops(ctx, addr) })
	run("close ends the client's generator", func() error { _, err := closes(ctx, addr); return err })
	for _, bad := range []string{"rate=-1", "rate=abc", "rate=1000001", "size=15", "size=65537", "size=x"} {
		path := "/stream?" + bad
		run(path+" is refused with 400 and a JSON error", func() error { return refused(ctx, addr, path) })
		out = append(out, s.after(ctx, GroupStream, "stream: "+path))
	}
	side, err := streamSide(ctx, addr)
	return append(out, protocolChecks(ctx, s, side, err)...)
}

func dial(ctx context.Context, addr, path string) (*stream.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := stream.Dial(dctx, addr, path, 64<<10)
	if err != nil {
		return nil, fmt.Errorf("opening %s: %w", path, err)
	}
	return c, nil
}

// readChecked reads n messages strictly: well formed, size bytes, seq rising (from 0 and
// without gaps unless gaps are allowed: with back-pressure a fast generator may drop).
func readChecked(ctx context.Context, addr, path string, size, n int, gapsAllowed bool) error {
	c, err := dial(ctx, addr, path)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	next := int64(0)
	for i := 0; i < n; i++ {
		msg, err := c.ReadMessage()
		if err != nil {
			return fmt.Errorf("message %d of %d: %w", i, n, err)
		}
		m, err := stream.Check(msg, size)
		if err != nil {
			return fmt.Errorf("message %d: %w", i, err)
		}
		if skew := time.Since(time.UnixMicro(m.TS)); skew < -time.Second || skew > 30*time.Second {
			return fmt.Errorf("message %d: ts %d is %s from this machine's clock: not µs since the epoch at generation", i, m.TS, skew.Round(time.Millisecond))
		}
		switch {
		case m.Seq < next:
			return fmt.Errorf("message %d: seq %d after %d: not rising", i, m.Seq, next-1)
		case m.Seq > next && !gapsAllowed:
			return fmt.Errorf("message %d: seq %d, want %d (from 0, one per message)", i, m.Seq, next)
		}
		next = m.Seq + 1
	}
	return nil
}

// paced reads 200 messages of a 200/s stream: seq 0…199, in about a second.
func paced(ctx context.Context, addr string) error {
	start := time.Now()
	if err := readChecked(ctx, addr, "/stream?rate=200&size=100", 100, 200, false); err != nil {
		return err
	}
	if took := time.Since(start); took < 700*time.Millisecond || took > 2*time.Second {
		return fmt.Errorf("200 messages at rate=200 took %s, want about 1 s", took.Round(time.Millisecond))
	}
	return nil
}

func ignoresInput(ctx context.Context, addr string) error {
	c, err := dial(ctx, addr, "/stream?rate=100")
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.ReadMessage(); err != nil {
		return err
	}
	if err := c.WriteText(`{"hello":"server"}`); err != nil {
		return fmt.Errorf("sending a frame: %w", err)
	}
	for i := 0; i < 50; i++ {
		msg, err := c.ReadMessage()
		if err != nil {
			return fmt.Errorf("after the client sent a frame: %w", err)
		}
		if _, err := stream.Check(msg, stream.DefaultSize); err != nil {
			return fmt.Errorf("after the client sent a frame: %w", err)
		}
	}
	return nil
}

// counting opens one client at 100/s for about a second and checks the counters move.
func counting(ctx context.Context, addr string, before stream.Stats) error {
	c, err := dial(ctx, addr, "/stream?rate=100")
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := 0; i < 100; i++ {
		if _, err := c.ReadMessage(); err != nil {
			return err
		}
	}
	during, err := stream.FetchStats(addr, 2*time.Second)
	if err != nil {
		return err
	}
	switch {
	case during.Clients < 1:
		return fmt.Errorf("clients %d with one open", during.Clients)
	case during.Generated-before.Generated < 100 || during.Sent-before.Sent < 100:
		return fmt.Errorf("100 messages read, but generated went %d→%d and sent %d→%d", before.Generated, during.Generated, before.Sent, during.Sent)
	case during.Generated < during.Sent+during.Dropped:
		return fmt.Errorf("generated %d < sent %d + dropped %d", during.Generated, during.Sent, during.Dropped)
	}
	return nil
}

// drops holds a rate-0 client unread: with back-pressure on the server's queue for it fills
// and it drops, and its memory stays its own business.
func drops(ctx context.Context, addr string) error {
	before, err := stream.FetchStats(addr, 2*time.Second)
	if err != nil {
		return err
	}
	c, err := stream.Dial(ctx, addr, "/stream?rate=0", 4096)
	if err != nil {
		return err
	}
	defer c.Close()
	after, err := waitStats(ctx, addr, streamWait, func(s stream.Stats) bool { return s.Dropped > before.Dropped })
	if err != nil {
		return fmt.Errorf("dropped stayed %d while a client read nothing of a rate-0 stream for %s (generated %d→%d): %w", after.Dropped, streamWait, before.Generated, after.Generated, err)
	}
	// It still streams well-formed messages after the wait. (Its first need not be seq 0: a
	// generator may fill the queue before the first send is taken, and the contract lets the
	// oldest go then too.)
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	msg, err := c.ReadMessage()
	if err != nil {
		return err
	}
	if _, err := stream.Check(msg, stream.DefaultSize); err != nil {
		return fmt.Errorf("the first message after the wait: %w", err)
	}
	return nil
}

// streamWait bounds every wait for a counter: generous, for a loaded machine.
const streamWait = 10 * time.Second

// closes checks that when every client is gone, clients returns to none and the generators
// stop: generated no longer moves. It returns the counters then.
func closes(ctx context.Context, addr string) (stream.Stats, error) {
	// Every earlier check's client has closed: the count must come back to none.
	if _, err := waitClients(addr, 0, streamWait); err != nil {
		return stream.Stats{}, fmt.Errorf("before: %w", err)
	}
	c, err := dial(ctx, addr, "/stream?rate=0")
	if err != nil {
		return stream.Stats{}, err
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := 0; i < 100; i++ {
		if _, err := c.ReadMessage(); err != nil {
			c.Close()
			return stream.Stats{}, err
		}
	}
	c.Close()
	if _, err := waitClients(addr, 0, streamWait); err != nil {
		return stream.Stats{}, err
	}
	return settled(ctx, addr)
}

// settled waits until generated holds still for stillFor: a generator told to stop may finish
// its batch, later on a loaded machine, but then it must stop.
func settled(ctx context.Context, addr string) (stream.Stats, error) {
	const stillFor = 300 * time.Millisecond
	last, err := stream.FetchStats(addr, 2*time.Second)
	if err != nil {
		return last, err
	}
	first := last
	for deadline := time.Now().Add(streamWait); ; {
		select {
		case <-ctx.Done():
			return last, ctx.Err()
		case <-time.After(stillFor):
		}
		now, err := stream.FetchStats(addr, 2*time.Second)
		if err != nil {
			return now, err
		}
		if now.Generated == last.Generated {
			return now, nil
		}
		if time.Now().After(deadline) {
			return now, fmt.Errorf("generated still moving %s after every client closed: %d → %d", streamWait, first.Generated, now.Generated)
		}
		last = now
	}
}

// waitStats polls /stream/stats until done holds or within passes.
func waitStats(ctx context.Context, addr string, within time.Duration, done func(stream.Stats) bool) (stream.Stats, error) {
	for deadline := time.Now().Add(within); ; {
		// 5 s an answer: a server busy buffering for a client that does not read answers late.
		s, err := stream.FetchStats(addr, 5*time.Second)
		if err != nil || done(s) {
			return s, err
		}
		if time.Now().After(deadline) {
			return s, errors.New("not within " + within.String())
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// StreamChecksUnbounded checks /stream as the lab starts it with BACKPRESSURE=off, which the
// stream scenario measures: nothing is ever dropped, every generated message is sent.
func StreamChecksUnbounded(ctx context.Context, s *Server) []Check {
	var out []Check
	run := func(name string, f func() error) {
		if ctx.Err() == nil {
			start := time.Now()
			c := Check{Group: GroupStream, Name: "stream, BACKPRESSURE=off: " + name, Took: time.Since(start)}
			err := f()
			c.OK, c.Took = err == nil, time.Since(start)
			if err != nil {
				c.Detail = err.Error()
			}
			out = append(out, c)
		}
	}
	run("rate 0 streams every message, seq from 0 without a gap", func() error {
		return readChecked(ctx, s.Addr, "/stream", stream.DefaultSize, 3000, false)
	})
	run("a client that does not read: nothing is dropped", func() error { return neverDrops(ctx, s.Addr, unreadHold) })
	run("close ends the client's generator, and every generated message was sent", func() error {
		// Every generated message is handed on at once and counted sent; only those still on
		// their way to the connection as it closed (across an event bus) are freed uncounted,
		// never as many as a back-pressured queue would hold.
		st, err := closes(ctx, s.Addr)
		if missing := st.Generated - st.Sent - st.Dropped; err == nil && (missing < 0 || missing > stream.MaxQueue) {
			err = fmt.Errorf("generated %d, sent %d, dropped %d: with no queue every generated message is sent", st.Generated, st.Sent, st.Dropped)
		}
		return err
	})
	return out
}

// unreadHold is how many messages neverDrops waits for: past a back-pressured queue, and
// within what Undertow's generator, slowed by its own unbounded sends, makes in 10 s.
const unreadHold = 15000

// neverDrops holds a client of 20,000 messages a second unread, its receive buffer small, until
// more are generated for it (unreadHold: more than a back-pressured queue holds): with
// back-pressure off the server buffers them all and drops none. Paced, not rate 0: a rate-0
// generator without back-pressure fills the heap in seconds (Undertow's did, at 512 MiB), which
// the stream scenario measures and verify must not provoke. A server busy buffering may leave
// /stream/stats unanswered meanwhile (Undertow's IO threads do): the counts are judged once
// the client has gone.
func neverDrops(ctx context.Context, addr string, more int64) error {
	before, err := stream.FetchStats(addr, 5*time.Second)
	if err != nil {
		return err
	}
	c, err := stream.Dial(ctx, addr, "/stream?rate=20000", 4096)
	if err != nil {
		return err
	}
	if err := c.LimitReceiveBuffer(4096); err != nil {
		c.Close()
		return err
	}
	for deadline := time.Now().Add(streamWait); time.Now().Before(deadline) && ctx.Err() == nil; time.Sleep(50 * time.Millisecond) {
		if s, err := stream.FetchStats(addr, 5*time.Second); err == nil && s.Generated >= before.Generated+more {
			break
		}
	}
	c.Close()
	if _, err := waitClients(addr, 0, streamWait); err != nil {
		return err
	}
	after, err := settled(ctx, addr)
	switch {
	case err != nil:
		return err
	case after.Generated < before.Generated+more:
		return fmt.Errorf("generated %d→%d in %s for a client of 20,000 a second", before.Generated, after.Generated, streamWait)
	case after.Dropped != before.Dropped:
		return fmt.Errorf("dropped %d→%d with back-pressure off", before.Dropped, after.Dropped)
	}
	return nil
}

func refused(ctx context.Context, addr, path string) error {
	c, err := dial(ctx, addr, path)
	if err == nil {
		c.Close()
		return errors.New("upgraded")
	}
	var he *stream.HandshakeError
	if !errors.As(err, &he) {
		return err
	}
	if he.Status != 400 {
		return fmt.Errorf("HTTP %d, want 400", he.Status)
	}
	if mt, _, _ := mime.ParseMediaType(he.ContentType); mt != appJSON {
		return fmt.Errorf("Content-Type %q, want %s", he.ContentType, appJSON)
	}
	return errorBody(he.Body)
}

// waitClients waits until /stream/stats counts at most n clients.
func waitClients(addr string, n int64, within time.Duration) (stream.Stats, error) {
	for deadline := time.Now().Add(within); ; time.Sleep(100 * time.Millisecond) {
		s, err := stream.FetchStats(addr, 2*time.Second)
		if err != nil {
			return s, err
		}
		if s.Clients <= n {
			return s, nil
		}
		if time.Now().After(deadline) {
			return s, fmt.Errorf("clients %d %s after the clients closed, want %d", s.Clients, within, n)
		}
	}
}
