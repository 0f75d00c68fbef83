package load

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

var _ Load = OpenLoop{}

// Stream is one tagged constant-arrival stream of an open loop.
type Stream struct {
	Tag     string
	Request Request
	Pacer   Pacer
	// Connections bounds the stream's requests in flight, as wrk2's connections do: a hit
	// that finds them all busy waits, and its wait counts in its response time. 0 means
	// unbounded: every hit leaves on time on a goroutine (and connection) of its own.
	Connections int
}

// OpenLoop sends every stream on its own schedule, whatever the server does.
type OpenLoop struct {
	Streams  []Stream
	Duration time.Duration // hits are scheduled in [0, Duration)
	Timeout  time.Duration // per request, from its actual send
	// LateAfter is how far past its intended time a send may leave before it counts late.
	LateAfter time.Duration
	// Drain is how long the last answers should take after the last send, for the ETA.
	Drain time.Duration
}

// Describe: the streams, each at its pacer's rate.
func (o OpenLoop) Describe() Description {
	d := Description{Text: fmt.Sprintf("open loop, %s, request timeout %s", o.Duration, o.Timeout),
		Duration: o.Duration, Timeout: o.Timeout, Expected: o.Duration + o.Drain, Paced: true}
	for _, s := range o.Streams {
		d.Streams = append(d.Streams, results.StreamPlan{Tag: s.Tag, Path: s.Request.Path, Mode: "open", Rate: s.Pacer.Rate(), Connections: s.Connections})
	}
	return d
}

// Run drives the streams over target.HTTP until every scheduled hit has been sent and
// answered or timed out, or ctx ends.
func (o OpenLoop) Run(ctx context.Context, target Target, rec *Recorder) (results.Figures, error) {
	doer := target.HTTP
	lateAfter := o.LateAfter
	if lateAfter <= 0 {
		lateAfter = time.Millisecond
	}
	// The schedule begins with the load, not with the recorder's clock: the cell starts that
	// clock before setting up its probes, and a schedule counted from there would send its
	// first hits late (CI saw one late hit per stream, ~10 ms, flag a cell client-bound).
	start := target.StartOf()
	for _, s := range o.Streams {
		rec.Schedule(s.Tag, HitsWithin(s.Pacer, o.Duration))
	}

	var inflight sync.WaitGroup
	var pacers sync.WaitGroup
	for _, s := range o.Streams {
		pacers.Add(1)
		go func(s Stream) {
			defer pacers.Done()
			fire := func(intended time.Time) {
				sent := time.Now()
				out := doer.Do(ctx, s.Request, o.Timeout)
				rec.Record(s.Tag, intended, sent, time.Now(), out, lateAfter)
			}
			if s.Connections <= 0 {
				schedule(ctx, s.Pacer, start, o.Duration, func(intended time.Time) {
					inflight.Add(1)
					go func() { defer inflight.Done(); fire(intended) }()
				})
				return
			}
			// Bounded: a fixed set of workers takes hits in schedule order; the pacer keeps
			// its schedule even when they fall behind, so the backlog is measured, not hidden.
			due := make(chan time.Time, 4096)
			for i := 0; i < s.Connections; i++ {
				inflight.Add(1)
				go func() {
					defer inflight.Done()
					for intended := range due {
						if ctx.Err() != nil {
							return
						}
						fire(intended)
					}
				}()
			}
			schedule(ctx, s.Pacer, start, o.Duration, func(intended time.Time) {
				select {
				case due <- intended:
				case <-ctx.Done():
				}
			})
			close(due)
		}(s)
	}
	pacers.Wait()
	waitOrDone(ctx, &inflight)
	return nil, nil
}

// schedule calls send at each hit's intended time within [0, d) of start, until ctx ends.
// When it wakes late it sends at once: the hit keeps its intended time.
func schedule(ctx context.Context, p Pacer, start time.Time, d time.Duration, send func(intended time.Time)) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for n := int64(0); ; n++ {
		due, ok := p.Due(n)
		if !ok || due >= d {
			return
		}
		intended := start.Add(due)
		if wait := time.Until(intended); wait > 0 {
			timer.Reset(wait)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		} else if ctx.Err() != nil {
			return
		}
		send(intended)
	}
}

// RotateEvery closes the recorder's windows every interval until stopped, then once more.
func RotateEvery(rec *Recorder, interval time.Duration) (stop func()) {
	if interval <= 0 {
		interval = time.Second
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case now := <-t.C:
				_ = rec.Rotate(now) // a sink error loses a log line, never the run
			case <-done:
				_ = rec.Rotate(time.Now())
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}

// waitOrDone waits for wg, or for ctx to end (requests still out are abandoned).
func waitOrDone(ctx context.Context, wg *sync.WaitGroup) {
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	select {
	case <-all:
	case <-ctx.Done():
	}
}
