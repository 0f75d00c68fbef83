package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

// Load is study 003's procedure: Clients clients open /stream at Rate and Size and read for
// Duration; the first Slow of them wait ReadDelay after every message (the study's 200 ms
// slow clients), the rest read as fast as they can. Each delivery's latency, from the ts the
// server put in it, goes into the recorder; /stream/stats is polled every second. Every
// reader checks its messages: a gap the server did not count as dropped, a copy, a message
// out of order or malformed is a fault.
type Load struct {
	Tag       string
	Clients   int
	Slow      int
	ReadDelay time.Duration
	Rate      int
	Size      int
	Duration  time.Duration
	// Lossless: the server was told BACKPRESSURE=off, under which the contract lets it drop
	// nothing: any drop it counts is a fault too.
	Lossless bool
	// Part and Parts: this load is share Part of Parts of one dealt out among load agents
	// (whole clients each); Parts 0 is the whole. Only share 0 polls /stream/stats.
	Part, Parts int
}

var _ load.Divisible = Load{}

// Share deals whole clients out, the slow ones as evenly as the rest; no more shares than
// clients.
func (l Load) Share(i, n int) (load.Load, error) {
	if n > l.Clients {
		return nil, fmt.Errorf("a /stream load of %d clients cannot be split among %d agents", l.Clients, n)
	}
	out := l
	out.Clients = int(part(l.Clients, i, n))
	out.Slow = int(part(l.Slow, i, n))
	out.Part, out.Parts = i, n
	return out, nil
}

// part is share i of total split n ways, the first total%n shares one larger.
func part(total, i, n int) int {
	p := total / n
	if i < total%n {
		p++
	}
	return p
}

// shared says the load is one share of several.
func (l Load) shared() bool { return l.Parts > 1 }

// minRateWindow is the least time a rate is counted over: a server that died sooner has no
// rate, since a few milliseconds of reading what the kernel buffered say nothing of it.
const minRateWindow = time.Second

var _ load.Load = Load{}

// Describe says what the load does: its readers, messages and length.
func (l Load) Describe() load.Description {
	rate := "as fast as the server can"
	if l.Rate > 0 {
		rate = fmt.Sprintf("%d/s each", l.Rate)
	}
	readers := fmt.Sprintf("%d fast readers", l.Clients)
	if l.Slow > 0 {
		readers = fmt.Sprintf("%d of %d clients reading one message every %s", l.Slow, l.Clients, l.ReadDelay)
	}
	return load.Description{
		Text:     fmt.Sprintf("/stream push, %s, %d-byte messages %s, for %s", readers, l.Size, rate, l.Duration),
		Streams:  []results.StreamPlan{{Tag: l.Tag, Path: Path(l.Rate, l.Size), Mode: "push", Connections: l.Clients}},
		Feature:  "stream",
		Duration: l.Duration,
		// the ETA's guess: the duration and the connecting
		Expected: l.Duration + time.Duration(l.Clients)*time.Millisecond,
	}
}

// Run drives the load and returns what the clients and the server's stats saw. It fails
// only when no client could connect.
func (l Load) Run(ctx context.Context, target load.Target, rec *load.Recorder) (results.Figures, error) {
	f, err := l.run(ctx, target.Addr, rec)
	if f == nil {
		return nil, err // a typed nil would read as figures
	}
	return f, err
}

// connect opens the load's clients, the first l.Slow of them slow readers, 32 at a time;
// a client that could not connect is nil, and firstErr says why the first one could not.
func (l Load) connect(ctx context.Context, addr string) (readers []*reader, firstErr error) {
	readers = make([]*reader, l.Clients)
	var wg sync.WaitGroup
	gate := make(chan struct{}, 32) // connect at a pace accept queues take
	var mu sync.Mutex
	for i := range readers {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			gate <- struct{}{}
			defer func() { <-gate }()
			buf := 64 << 10
			if i < l.Slow {
				buf = 4096 // a slow reader must not drain the socket ahead of itself
			}
			dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			c, err := Dial(dctx, addr, Path(l.Rate, l.Size), buf)
			cancel()
			if err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				return
			}
			if i < l.Slow {
				_ = c.LimitReceiveBuffer(slowReceiveBuffer)
			}
			readers[i] = &reader{c: c, slow: i < l.Slow}
		}(i)
	}
	wg.Wait()
	return readers, firstErr
}

// tally adds what the readers got into out, and the rates over window unless the load was
// cut short before a rate means anything.
func (l Load) tally(out *Figures, readers []*reader, window time.Duration) {
	for _, r := range readers {
		if r != nil {
			out.Delivered += r.got
			out.Gaps += r.gaps
			out.Malformed += r.malformed
			out.OutOfOrder += r.reordered
			out.Duplicated += r.dups
			if r.closedEarly {
				out.ClosedEarly++
			}
		}
	}
	if out.CutShort && window < minRateWindow {
		return
	}
	out.Seconds = window.Seconds()
	out.PerSecond = float64(out.Delivered) / out.Seconds
	var rates []float64
	for _, r := range readers {
		if r != nil {
			rates = append(rates, float64(r.got)/out.Seconds)
		}
	}
	out.PerClient = results.SpreadOf(rates)
	if l.shared() {
		out.Rates = rates // for Join: the spread of all clients, not of spreads
	}
}

func (l Load) run(ctx context.Context, addr string, rec *load.Recorder) (*Figures, error) {
	// The load starts with the first connection: from then on the server generates, and
	// what the clients read was made after it.
	began := time.Now()
	out := &Figures{Clients: l.Clients, SlowClients: l.Slow, Rate: l.Rate, Size: l.Size, Lossless: l.Lossless,
		ReadDelayMs: float64(l.ReadDelay) / float64(time.Millisecond)}
	readers, firstErr := l.connect(ctx, addr)
	for _, r := range readers {
		if r != nil {
			out.Connected++
		}
	}
	if out.Connected == 0 {
		return out, fmt.Errorf("no /stream client could connect to %s: %v", addr, firstErr)
	}
	rec.Update(l.Tag, func(st *results.TagStats) {
		if n := int64(l.Clients - out.Connected); n > 0 {
			st.Errors["connect"] += n
		}
	})

	start := time.Now()
	deadline := start.Add(l.Duration)
	stopPoll := make(chan struct{})
	pollDone := make(chan struct{})
	var wg sync.WaitGroup
	go func() {
		defer close(pollDone)
		if !l.shared() || l.Part == 0 { // one poller for all shares: the server's counters are one
			l.poll(addr, start, stopPoll, out)
		}
	}()
	for _, r := range readers {
		if r != nil {
			wg.Add(1)
			go func(r *reader) { defer wg.Done(); r.read(ctx, l, rec, deadline) }(r)
		}
	}
	stop := context.AfterFunc(ctx, func() { // Ctrl-C: end every reader now
		for _, r := range readers {
			if r != nil {
				r.c.nc.Close()
			}
		}
	})
	wg.Wait()
	stop()
	// Ended early: the server died (the lab ends the load then), or Ctrl-C.
	out.CutShort = ctx.Err() != nil
	window := time.Since(began)
	close(stopPoll)
	<-pollDone
	l.tally(out, readers, window)
	rec.Update(l.Tag, func(st *results.TagStats) {
		if out.ClosedEarly > 0 {
			st.Errors["closed"] += int64(out.ClosedEarly)
		}
	})
	// The final counters, once the clients are gone: the last poll of the timeline.
	s, err := FetchStats(addr, 2*time.Second)
	out.StatsTimeline = append(out.StatsTimeline, StatsSample{T: time.Since(start).Seconds(), OK: err == nil, Stats: s})
	if err == nil {
		out.Server, out.Responsive = &s, true
	} else {
		out.StatsFailed++
	}
	return out, nil
}

// poll samples /stream/stats every second until stop.
func (l Load) poll(addr string, start time.Time, stop <-chan struct{}, out *Figures) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		s, err := FetchStats(addr, 2*time.Second)
		sample := StatsSample{T: time.Since(start).Seconds(), OK: err == nil, Stats: s}
		if err != nil {
			out.StatsFailed++
		}
		out.StatsTimeline = append(out.StatsTimeline, sample)
	}
}

var statsClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}

// FetchStats asks the server at addr for /stream/stats.
func FetchStats(addr string, timeout time.Duration) (Stats, error) {
	var s Stats
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/stream/stats", nil)
	resp, err := statsClient.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return s, err
	}
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("/stream/stats answered %d", resp.StatusCode)
	}
	if err := json.Unmarshal(body, &s); err != nil {
		return s, fmt.Errorf("/stream/stats: %v: %s", err, clip(body))
	}
	return s, nil
}

// reader is one client of the load.
type reader struct {
	c                    *Conn
	slow                 bool
	got, gaps, malformed int64
	reordered, dups      int64
	next                 int64 // the seq due next
	missed               gapLog
	closedEarly          bool
}

// gapLog remembers a reader's last gaps, so that a message that comes after a later one can
// be told apart: one that fills a gap is out of order (and was no gap), any other is a copy.
// An honest server sends seqs only upwards, so the log is read only when something is wrong.
type gapLog struct {
	ranges [gapMemory][2]int64 // [from, to) of seqs skipped
	n      int
}

const gapMemory = 64

func (g *gapLog) add(from, to int64) {
	g.ranges[g.n%gapMemory] = [2]int64{from, to}
	g.n++
}

// fill takes seq out of the gap that holds it, if a remembered one does.
func (g *gapLog) fill(seq int64) bool {
	for i := range min(g.n, gapMemory) {
		r := &g.ranges[i]
		if seq >= r[0] && seq < r[1] {
			if seq == r[0] {
				r[0]++
			} else {
				// the rest of the range after seq is lost to the log: a gap seldom fills twice
				r[1] = seq
			}
			return true
		}
	}
	return false
}

// slowReceiveBuffer is a slow reader's socket buffer: what it has not read waits in the
// server, whose memory the study is about, not in this machine's kernel.
const slowReceiveBuffer = 64 << 10

// flushEvery is how many latencies a reader keeps before taking the recorder's lock.
const flushEvery = 512

func (r *reader) read(ctx context.Context, l Load, rec *load.Recorder, deadline time.Time) {
	defer r.c.Close()
	_ = r.c.SetReadDeadline(deadline)
	lats := make([]time.Duration, 0, flushEvery)
	defer func() {
		if len(lats) > 0 {
			rec.RecordLatencies(l.Tag, lats)
		}
	}()
	var pause *time.Timer
	if r.slow {
		pause = time.NewTimer(time.Hour)
		pause.Stop()
	}
	for {
		msg, err := r.c.ReadMessage()
		if err != nil {
			// the deadline or Ctrl-C ends a reader; anything before it is the server's doing
			r.closedEarly = time.Now().Before(deadline) && ctx.Err() == nil
			return
		}
		seq, ts, ok := ParseHead(msg)
		if !ok || len(msg) < l.Size || l.Size >= 64 && len(msg) != l.Size { // below 64 bytes the empty-pad frame may be longer
			r.malformed++
			continue
		}
		switch {
		case seq > r.next:
			r.gaps += seq - r.next
			r.missed.add(r.next, seq)
		case seq < r.next && r.missed.fill(seq):
			r.reordered++
			r.gaps--
		case seq < r.next:
			r.dups++
			continue // a copy is no second delivery
		}
		r.next = max(r.next, seq+1)
		r.got++
		arrived := r.c.Arrived
		if r.slow {
			arrived = time.Now() // it sat in the reader's buffer while the reader slept
		}
		lats = append(lats, arrived.Sub(time.UnixMicro(ts)))
		if len(lats) == flushEvery || r.slow {
			rec.RecordLatencies(l.Tag, lats)
			lats = lats[:0]
		}
		if r.slow {
			pause.Reset(l.ReadDelay)
			select {
			case <-pause.C:
			case <-ctx.Done():
				return
			}
			if time.Now().After(deadline) {
				return
			}
		}
	}
}
