// Package scenarios lists the lab's scenarios: one package each, beside this file.
package scenarios

import (
	"fmt"
	"strings"

	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/scenarios/chat"
	"github.com/arena-lab/arena/scenarios/downstream"
	"github.com/arena-lab/arena/scenarios/isolation"
	"github.com/arena-lab/arena/scenarios/sleep"
	"github.com/arena-lab/arena/scenarios/stream"
)

// All is every scenario, the default first.
func All() []scenario.Scenario {
	return []scenario.Scenario{isolation.Scenario{}, sleep.Scenario{}, downstream.Scenario{}, chat.Scenario{}, stream.Scenario{}}
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
