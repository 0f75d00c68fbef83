package load

import (
	"context"
	"fmt"
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
		Streams: []results.StreamPlan{{Tag: c.Tag, Path: c.Request.Path, Paths: len(c.Request.Paths), Mode: "closed", Connections: c.Connections, Requests: c.Requests}}}
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

// Run sends over target.Driver until the count or the duration is reached, or ctx ends.
func (c ClosedLoop) Run(ctx context.Context, target Target, rec *Recorder) (results.Figures, error) {
	if c.Duration <= 0 {
		c.Duration = time.Hour // bounded even when the caller gives only a count
	}
	if target.Driver == nil {
		return nil, errNoDriver
	}
	// A closed loop has no schedule to keep: what was not learned ahead is learned here.
	c.Request = target.answers().For(ctx, c.Request, c.Timeout)
	target.Driver.Closed(ctx, c, rec.Start().Add(c.Duration), rec)
	return nil, nil
}
