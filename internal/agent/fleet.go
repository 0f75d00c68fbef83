package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/arena-lab/arena/internal/load"
)

// Fleet is a run's load agents: it deals a load out among them, from one start agreed in
// advance, and collects their shares.
type Fleet struct {
	Runners []Runner
	// Lead is how far ahead the start is set, for the slowest agent to get its job;
	// Slack how late past it an agent may still begin.
	Lead, Slack time.Duration
}

// Defaults: a job reaches an agent within the lead over any sane network, and a late agent
// is one the schedule could not absorb without shifting.
const (
	DefaultLead  = 500 * time.Millisecond
	DefaultSlack = 50 * time.Millisecond
)

// CanSplit says why ld cannot be dealt out among the fleet, or nil.
func (f *Fleet) CanSplit(ld load.Load) error {
	for i := range f.Runners {
		if _, err := load.ShareOf(ld, i, len(f.Runners)); err != nil {
			return err
		}
	}
	return nil
}

// Run gives agent i share i of the load job names (ld, as the coordinator planned it, whose
// Join combines their figures), all from one start, and waits for every share. Any agent's
// failure (late, unreachable, refused) cancels the others and fails the whole: a level from
// part of its agents is not the level. It returns the start on the coordinator's clock.
func (f *Fleet) Run(ctx context.Context, job Job) ([]*Share, time.Time, error) {
	n := len(f.Runners)
	lead, slack := f.Lead, f.Slack
	if lead <= 0 {
		lead = DefaultLead
	}
	if slack <= 0 {
		slack = DefaultSlack
	}
	var worst time.Duration
	for _, r := range f.Runners {
		_, rtt := r.Clock()
		worst = max(worst, rtt)
	}
	job.Start = time.Now().Add(lead + 2*worst)
	job.Parts, job.Slack = n, slack
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	shares := make([]*Share, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i, r := range f.Runners {
		wg.Add(1)
		go func(i int, r Runner) {
			defer wg.Done()
			j := job
			j.Part = i
			j.Offset, _ = r.Clock()
			shares[i], errs[i] = r.Run(ctx, j)
			if errs[i] != nil {
				cancel() // the others' shares are no level without this one
			}
		}(i, r)
	}
	wg.Wait()
	if i := firstErr(errs); i >= 0 {
		return shares, job.Start, fmt.Errorf("load agent %s: %w", f.Runners[i].Hello().Name, errs[i])
	}
	return shares, job.Start, nil
}

// firstErr is the agent that failed on its own rather than by the cancel another's failure
// caused (or the first failure, when every one is a cancel: the user's Ctrl-C); -1 if none.
func firstErr(errs []error) int {
	first := -1
	for i, err := range errs {
		if err == nil {
			continue
		}
		if first < 0 {
			first = i
		}
		if !errors.Is(err, context.Canceled) {
			return i
		}
	}
	return first
}
