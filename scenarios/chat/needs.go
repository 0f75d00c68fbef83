package chat

import "github.com/arena-lab/arena/internal/verify"

// Needs are what the chat study sends a server and relies on: a target is verified for these alone.
func (Scenario) Needs() verify.Needs {
	return verify.Needs{Sockets: []string{"/chat"}, Groups: []string{verify.GroupChat}}
}
