package reproduce

import (
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// A warm-up is of a count of requests, whose length the plan cannot know. Starting and
// stopping a server is its runtime's (contender.StartStopOf).
const warmupEst = 5 * time.Second

// Before its first cell a contender is built and verified, once per build: at most this long
// (verify took about 50 s a contender before it was made faster; a Maven build about 15 s).
const prepareEst = 65 * time.Second

// Estimate is how long step takes at repeat: each cell's planned load, its warm-ups and its
// start and stop, for every level, repeat and contender. runtimes names each contender's.
func Estimate(step results.Step, sc scenario.Scenario, runtimes map[string]string, repeat int) (time.Duration, error) {
	plan, err := sc.Plan(lab.Options(step.RunSpec))
	if err != nil {
		return 0, err
	}
	if plan, err = plan.Filter(step.Levels); err != nil {
		return 0, err
	}
	var per time.Duration // one repeat of every level, for one contender, without start and stop
	for _, l := range plan.Levels {
		per += l.Expected() + time.Duration(len(l.Warmup))*warmupEst
	}
	var total time.Duration
	for _, c := range step.Contenders {
		rt := contender.StartStopOf(runtimes[c])
		total += time.Duration(repeat) * (per + time.Duration(len(plan.Levels))*rt)
	}
	return total, nil
}

// PrepareAtMost is the most the builds and verifies of n contenders take, when none is cached.
func PrepareAtMost(n int) time.Duration { return time.Duration(n) * prepareEst }
