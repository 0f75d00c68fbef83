package load

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// A Driver carries the requests of open and closed loops to a target: the engine
// (internal/load/engine: one epoll loop per client core, wrk's way) in every scenario, or
// DoerDriver, the goroutine-per-connection reference over a Doer that the engine is tested
// against and that unit tests feed with fakes. Each implementation says so with a
// `var _ Driver = …` line.
type Driver interface {
	// Closed keeps c.Connections requests outstanding, recording each into rec, until
	// c.Requests have been sent or deadline has passed (then the answers still out are
	// awaited), or ctx ends.
	Closed(ctx context.Context, c ClosedLoop, deadline time.Time, rec *Recorder)
	// Open sends every stream of o on its schedule from start, recording each hit from its
	// intended time (late past lateAfter), until every hit has been answered or has timed
	// out, or ctx ends.
	Open(ctx context.Context, o OpenLoop, start time.Time, lateAfter time.Duration, rec *Recorder)
}

var errNoDriver = errors.New("the target has no driver for HTTP loads")

// DoerDriver runs a goroutine per connection, each calling the Doer: the reference the
// engine is held against (same counts, same error kinds), and the seam for fake servers.
type DoerDriver struct{ Doer Doer }

var _ Driver = DoerDriver{}

// backoffAfterFailure keeps a connection whose server is gone from spinning on errors.
const backoffAfterFailure = 10 * time.Millisecond

// Closed: one goroutine per connection, each sending its next request when the last ends.
func (d DoerDriver) Closed(ctx context.Context, c ClosedLoop, deadline time.Time, rec *Recorder) {
	var issued atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < c.Connections; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				n := issued.Add(1)
				if c.Requests > 0 && n > c.Requests {
					return
				}
				sent := time.Now()
				if !sent.Before(deadline) {
					return
				}
				req := c.Request
				req.Path = req.PathAt(n - 1)
				out := d.Doer.Do(ctx, req, c.Timeout)
				rec.Record(c.Tag, sent, sent, time.Now(), out, time.Duration(1<<62))
				if out.Status == 0 && out.ErrKind != "" && out.ErrKind != ErrTimeout {
					// No answer at all: a wrong answer is a live server's, sent again at once.
					time.Sleep(backoffAfterFailure)
				}
			}
		}()
	}
	waitOrDone(ctx, &wg)
}

// Open: a pacer goroutine per stream; each hit on a goroutine of its own (unbounded) or
// taken in schedule order by a fixed set of workers (Connections).
func (d DoerDriver) Open(ctx context.Context, o OpenLoop, start time.Time, lateAfter time.Duration, rec *Recorder) {
	var inflight sync.WaitGroup
	var pacers sync.WaitGroup
	for _, s := range o.Streams {
		pacers.Add(1)
		go func(s Stream) {
			defer pacers.Done()
			var fired atomic.Int64
			fire := func(intended time.Time) {
				sent := time.Now()
				req := s.Request
				req.Path = req.PathAt(fired.Add(1) - 1)
				out := d.Doer.Do(ctx, req, o.Timeout)
				rec.Record(s.Tag, intended, sent, time.Now(), out, lateAfter)
			}
			if s.Connections <= 0 {
				schedule(ctx, s.Pacer, start, o.Duration, func(intended time.Time) {
					rec.TakenUp(s.Tag, intended, lateAfter)
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
				rec.TakenUp(s.Tag, intended, lateAfter)
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

// waitOrDone waits for wg, or for ctx to end (requests still out are abandoned).
func waitOrDone(ctx context.Context, wg *sync.WaitGroup) {
	all := make(chan struct{})
	go func() { wg.Wait(); close(all) }()
	select {
	case <-all:
	case <-ctx.Done():
	}
}
