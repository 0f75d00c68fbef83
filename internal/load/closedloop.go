package load

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

var _ Load = ClosedLoop{}

// ClosedLoop keeps Connections requests outstanding: each connection sends its next
// request when the last one ends, as ab, wrk and the studies' own tools do. Latency here
// is service time only: a closed loop has no schedule to be late against.
type ClosedLoop struct {
	Tag         string
	Request     Request
	Connections int
	Requests    int64         // stop after this many sends (0: no count bound)
	Duration    time.Duration // and after this long, whichever comes first
	Timeout     time.Duration // per request
	// Expect is how long it should take, for the ETA (0: Duration).
	Expect time.Duration
}

// Describe: its connections and bounds. A count-bounded loop has no planned length: its
// Duration is a bound, not the load.
func (c ClosedLoop) Describe() Description {
	d := Description{Timeout: c.Timeout, Expected: c.Expect,
		Streams: []results.StreamPlan{{Tag: c.Tag, Path: c.Request.Path, Mode: "closed", Connections: c.Connections, Requests: c.Requests}}}
	if c.Requests > 0 {
		d.Text = fmt.Sprintf("closed loop, %d connections, %d requests (at most %s), request timeout %s", c.Connections, c.Requests, c.Duration, c.Timeout)
	} else {
		d.Duration = c.Duration
		d.Text = fmt.Sprintf("closed loop, %d connections for %s, request timeout %s", c.Connections, c.Duration, c.Timeout)
	}
	if d.Expected == 0 {
		d.Expected = c.Duration
	}
	return d
}

// backoffAfterFailure keeps a connection whose server is gone from spinning on errors.
const backoffAfterFailure = 10 * time.Millisecond

// Run sends over target.HTTP until the count or the duration is reached, or ctx ends.
func (c ClosedLoop) Run(ctx context.Context, target Target, rec *Recorder) (results.Figures, error) {
	doer := target.HTTP
	if c.Duration <= 0 {
		c.Duration = time.Hour // bounded even when the caller gives only a count
	}
	deadline := rec.Start().Add(c.Duration)
	var issued atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < c.Connections; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if c.Requests > 0 && issued.Add(1) > c.Requests {
					return
				}
				sent := time.Now()
				if !sent.Before(deadline) {
					return
				}
				out := doer.Do(ctx, c.Request, c.Timeout)
				rec.Record(c.Tag, sent, sent, time.Now(), out, time.Duration(1<<62))
				if out.ErrKind != "" && out.ErrKind != ErrTimeout {
					time.Sleep(backoffAfterFailure)
				}
			}
		}()
	}
	waitOrDone(ctx, &wg)
	return nil, nil
}
