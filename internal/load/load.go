package load

import (
	"context"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// A Load is what one level does to a running server: an open loop, a closed loop, chat
// users, stream readers. Each implementation says so with a `var _ Load = …` line beside
// it; the lab runs any of them the same way, so a new kind of load touches its own package
// and nothing else.
type Load interface {
	// Run drives the target until the load is done or ctx ends, recording into rec. It
	// returns what it measured beyond latency (nil when nothing), and an error only when it
	// could not run at all (nobody could connect, say): what went wrong during the load is
	// counted in rec.
	Run(ctx context.Context, target Target, rec *Recorder) (results.Figures, error)
	// Describe says what the load does and what it expects: its streams, the part of the
	// contract it needs, how long it should take.
	Describe() Description
}

// Target is the server a load drives.
type Target struct {
	Addr string // host:port
	// Driver carries the plain requests of open and closed loops, over connections the lab
	// keeps across a cell's warm-up and load.
	Driver Driver
	// Start is when the load is to begin, agreed among the agents that share it: an open
	// loop's schedule counts from it, a closed loop's time bound too. Zero: at once.
	Start time.Time
	// Answers are what the target's answers must be to count as correct, learned ahead of
	// the load where they can be (agent.RunJob); nil: the load learns them itself.
	Answers *Answers
}

// answers are the target's answers, or new ones to learn when none were given.
func (t Target) answers() *Answers {
	if t.Answers != nil {
		return t.Answers
	}
	return NewAnswers(t.Addr)
}

// StartOf is the target's agreed start, or now when none was agreed.
func (t Target) StartOf() time.Time {
	if t.Start.IsZero() {
		return time.Now()
	}
	return t.Start
}

// Description is a load as the plan and the ETA see it.
type Description struct {
	Text    string // one sentence, e.g. "closed loop, 100 connections, 10000 requests"
	Streams []results.StreamPlan
	// Feature is the part of the contract beyond HTTP a server must have for this load
	// ("chat", "stream"); "" for plain HTTP, which every contender serves.
	Feature string
	// Duration and Timeout are the measured load's planned length and per-request timeout
	// (0 where it has none); Expected is how long it should take in all, for the ETA.
	Duration, Timeout, Expected time.Duration
	// Paced: the load's throughput is counted over Duration (its schedule, or its timed
	// measurement after a warm-up of its own), not over the whole drive; over its figures'
	// Span instead, when they have one.
	Paced bool
}

// Spanned figures know the span their load's throughput counts over, once it ran: a timed
// measurement after a warm-up, from its first request to its last response.
type Spanned interface {
	Span() time.Duration
}
