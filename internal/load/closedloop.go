package load

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

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
}

// backoffAfterFailure keeps a connection whose server is gone from spinning on errors.
const backoffAfterFailure = 10 * time.Millisecond

// Run sends until the count or the duration is reached, or ctx ends.
func (c ClosedLoop) Run(ctx context.Context, doer Doer, rec *Recorder, interval time.Duration) {
	if c.Duration <= 0 {
		c.Duration = time.Hour // bounded even when the caller gives only a count
	}
	deadline := rec.Start().Add(c.Duration)
	var issued atomic.Int64
	stopRotate := RotateEvery(rec, interval)
	defer stopRotate()
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
}
