package database

import "github.com/arena-lab/arena/internal/verify"

// Needs are what the database study sends a server and relies on: a target is verified for these alone.
func (Scenario) Needs() verify.Needs {
	return verify.Needs{Routes: []string{"/instant", "/actuator/health/liveness", "/actuator/health/readiness"}, Groups: []string{verify.GroupDB}}
}
