package load

import (
	"context"
	"fmt"
	"slices"
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
		d.Streams = append(d.Streams, results.StreamPlan{Tag: s.Tag, Path: s.Request.Path, Paths: len(s.Request.Paths), Mode: "open", Rate: s.Pacer.Rate(), Connections: s.Connections})
	}
	return d
}

// Run drives the streams over target.Driver until every scheduled hit has been sent and
// answered or timed out, or ctx ends.
func (o OpenLoop) Run(ctx context.Context, target Target, rec *Recorder) (results.Figures, error) {
	if target.Driver == nil {
		return nil, errNoDriver
	}
	lateAfter := o.LateAfter
	if lateAfter <= 0 {
		lateAfter = time.Millisecond
	}
	// The answers are learned before the schedule starts: ahead of the agreed start where
	// the load runs from an agent (agent.RunJob), else before now is taken as the start.
	answers := target.answers()
	o.Streams = slices.Clone(o.Streams)
	for i, s := range o.Streams {
		o.Streams[i].Request = answers.For(ctx, s.Request, o.Timeout)
	}
	// The schedule begins with the load, not with the recorder's clock: the cell starts that
	// clock before setting up its probes, and a schedule counted from there would send its
	// first hits late (CI saw one late hit per stream, ~10 ms, flag a cell client-bound).
	start := target.StartOf()
	for _, s := range o.Streams {
		rec.Schedule(s.Tag, HitsWithin(s.Pacer, o.Duration))
	}

	target.Driver.Open(ctx, o, start, lateAfter, rec)
	return nil, nil
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
