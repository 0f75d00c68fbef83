package stream

import "github.com/arena-lab/arena/internal/verify"

// Needs are what the stream study sends a server and relies on: a target is verified for these alone.
func (Scenario) Needs() verify.Needs {
	return verify.Needs{Sockets: []string{"/stream"}, Groups: []string{verify.GroupStream}}
}
