// Package scenarios lists the lab's scenarios: one package each, beside this file.
package scenarios

import (
	"fmt"
	"strings"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/scenarios/chat"
	"github.com/arena-lab/arena/scenarios/database"
	"github.com/arena-lab/arena/scenarios/downstream"
	"github.com/arena-lab/arena/scenarios/isolation"
	"github.com/arena-lab/arena/scenarios/sleep"
	"github.com/arena-lab/arena/scenarios/stream"
)

// All is every scenario, the default first.
func All() []scenario.Scenario {
	return []scenario.Scenario{isolation.Scenario{}, sleep.Scenario{}, downstream.Scenario{}, chat.Scenario{}, stream.Scenario{}, database.Scenario{}}
}

// Find returns the scenario called name.
func Find(name string) (scenario.Scenario, error) {
	var names []string
	for _, s := range All() {
		if s.Name() == name {
			return s, nil
		}
		names = append(names, s.Name())
	}
	return nil, fmt.Errorf("no scenario %q (scenarios: %s)", name, strings.Join(names, ", "))
}

// Rejudge summarises a run's cells again and judges them with this arena's rules, as a
// re-rendered report does; the measurements are never changed. A run of a scenario this
// arena does not know keeps what it was saved with.
func Rejudge(run *results.Run) error {
	sc, err := Find(run.Scenario.Name)
	if err != nil {
		return nil
	}
	summary, err := results.Summarise(run.Cells)
	if err != nil {
		return err
	}
	run.Summary = summary
	run.Verdicts, run.Claims = sc.Judge(run)
	return nil
}

// ClaimsOf judges a run's claims with this arena's rules, from the summary it has: for a run
// merged from several (the matrix's column, a reproduction's runs of one scenario). None for
// a scenario this arena does not know.
func ClaimsOf(run *results.Run) []results.Claim {
	sc, err := Find(run.Scenario.Name)
	if err != nil {
		return nil
	}
	_, claims := sc.Judge(run)
	return claims
}
