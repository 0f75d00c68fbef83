package stream

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

// Load is study 003's procedure: Clients clients open /stream at Rate and Size and read for
// Duration; the first Slow of them wait ReadDelay after every message (the study's 200 ms
// slow clients), the rest read as fast as they can. Each delivery's latency, from the ts the
// server put in it, goes into the recorder; /stream/stats is polled every second.
type Load struct {
	Tag       string
	Clients   int
	Slow      int
	ReadDelay time.Duration
	Rate      int
	Size      int
	Duration  time.Duration
}

// Feature is the contract part it needs.
func (l Load) Feature() string { return "stream" }

// Describe says what the load does.
func (l Load) Describe() string {
	rate := "as fast as the server can"
	if l.Rate > 0 {
		rate = fmt.Sprintf("%d/s each", l.Rate)
	}
	readers := fmt.Sprintf("%d fast readers", l.Clients)
	if l.Slow > 0 {
		readers = fmt.Sprintf("%d of %d clients reading one message every %s", l.Slow, l.Clients, l.ReadDelay)
	}
	return fmt.Sprintf("/stream push, %s, %d-byte messages %s, for %s", readers, l.Size, rate, l.Duration)
}

// Expected is the ETA's guess: the duration and the connecting.
func (l Load) Expected() time.Duration { return l.Duration + time.Duration(l.Clients)*time.Millisecond }

// Stream is its tag, for the results' plan.
func (l Load) Stream() results.StreamPlan {
	return results.StreamPlan{Tag: l.Tag, Path: Path(l.Rate, l.Size), Mode: "push", Connections: l.Clients}
}

// Run drives the load, keeping only the recorder's part (the Driver interface).
func (l Load) Run(ctx context.Context, addr string, rec *load.Recorder) error {
	_, err := l.Measure(ctx, addr, rec)
	return err
}

// Measure drives the load and returns what the clients and the server's stats saw. It fails
// only when no client could connect.
func (l Load) Measure(ctx context.Context, addr string, rec *load.Recorder) (*results.Stream, error) {
	out := &results.Stream{Clients: l.Clients, SlowClients: l.Slow, Rate: l.Rate, Size: l.Size,
		ReadDelayMs: float64(l.ReadDelay) / float64(time.Millisecond)}
	readers := make([]*reader, l.Clients)
	var wg sync.WaitGroup
	gate := make(chan struct{}, 32) // connect at a pace accept queues take
	var firstErr error
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
	for _, r := range readers {
		if r != nil {
			out.Connected++
		}
	}
	if out.Connected == 0 {
		return out, fmt.Errorf("no /stream client could connect to %s: %v", addr, firstErr)
	}
	rec.Update(l.Tag, func(st *load.TagStats) {
		if n := int64(l.Clients - out.Connected); n > 0 {
			st.Errors["connect"] += n
		}
	})

	start := time.Now()
	deadline := start.Add(l.Duration)
	stopPoll := make(chan struct{})
	pollDone := make(chan struct{})
	go func() { defer close(pollDone); l.poll(addr, start, stopPoll, out) }()
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
	elapsed := time.Since(start)
	close(stopPoll)
	<-pollDone

	var rates []float64
	for _, r := range readers {
		if r == nil {
			continue
		}
		out.Delivered += r.got
		out.Gaps += r.gaps
		out.Malformed += r.malformed
		out.OutOfOrder += r.reordered
		if r.closedEarly {
			out.ClosedEarly++
		}
		rates = append(rates, float64(r.got)/elapsed.Seconds())
	}
	out.PerSecond = float64(out.Delivered) / elapsed.Seconds()
	slices.Sort(rates)
	out.PerClient = results.Spread{Min: rates[0], Median: rates[len(rates)/2], Max: rates[len(rates)-1]}
	rec.Update(l.Tag, func(st *load.TagStats) {
		for kind, n := range map[string]int64{"malformed": out.Malformed, "out-of-order": out.OutOfOrder, "closed": int64(out.ClosedEarly)} {
			if n > 0 {
				st.Errors[kind] += n
			}
		}
	})
	// The final counters, once the clients are gone; a server that cannot answer them
	// within 2 s is recorded as unresponsive at the end.
	if s, err := FetchStats(addr, 2*time.Second); err == nil {
		out.Server, out.Responsive = &s, true
	}
	return out, nil
}

// poll samples /stream/stats every second until stop.
func (l Load) poll(addr string, start time.Time, stop <-chan struct{}, out *results.Stream) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		s, err := FetchStats(addr, 2*time.Second)
		sample := results.StatsSample{T: time.Since(start).Seconds(), OK: err == nil, StreamStats: s}
		if err != nil {
			out.StatsFailed++
		}
		out.StatsTimeline = append(out.StatsTimeline, sample)
	}
}

var statsClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}

// FetchStats asks the server at addr for /stream/stats.
func FetchStats(addr string, timeout time.Duration) (results.StreamStats, error) {
	var s results.StreamStats
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
	reordered            int64
	next                 int64
	closedEarly          bool
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
		case seq < r.next:
			r.reordered++
		}
		r.next = seq + 1
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
