package agent

import (
	"fmt"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/scenario"
)

// PlanResolver resolves a job the way the coordinator planned it: the scenario find names,
// planned with the job's options; the level; its load or the warm-up the job asks for.
func PlanResolver(find func(name string) (scenario.Scenario, error)) Resolver {
	return func(job Job) (load.Load, error) {
		if job.Closed != nil {
			return job.Closed.Load(), nil
		}
		sc, err := find(job.Scenario)
		if err != nil {
			return nil, err
		}
		plan, err := sc.Plan(job.Options)
		if err != nil {
			return nil, err
		}
		for _, lv := range plan.Levels {
			if lv.Name != job.Level {
				continue
			}
			switch {
			case job.Warmup < 0:
				return lv.Load, nil
			case job.Warmup < len(lv.Warmup):
				return lv.Warmup[job.Warmup], nil
			}
			return nil, fmt.Errorf("level %s of %s has %d warm-up loads, no %d", job.Level, job.Scenario, len(lv.Warmup), job.Warmup)
		}
		return nil, fmt.Errorf("%s has no level %q under preset %q", job.Scenario, job.Level, plan.Preset)
	}
}
