package isolation

import "github.com/arena-lab/arena/internal/verify"

// Needs are what the isolation study sends a server and relies on: a target is verified for these alone.
func (Scenario) Needs() verify.Needs {
	return verify.Needs{Routes: []string{"/instant", "/delayed", "/actuator/health/liveness", "/actuator/health/readiness"}}
}
