package sleep

import "github.com/arena-lab/arena/internal/verify"

// Needs are what the sleep study sends a server and relies on: a target is verified for these alone.
func (Scenario) Needs() verify.Needs {
	return verify.Needs{Routes: []string{"/sleep", "/data/1"}}
}
