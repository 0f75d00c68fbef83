package verify

import (
	"slices"
	"strings"
)

// Needs are what a scenario sends a server and relies on: the checks a server the lab did
// not start (a target) must pass to be measured on it are those that send to these routes and
// the groups named; the rest of the contract is not needed there. The lab's own contenders
// keep the whole contract.
type Needs struct {
	// Routes are the HTTP requests its loads send: "/instant" is that path with no query,
	// "/sleep?" that path with any query or none.
	Routes []string
	// Sockets are the WebSocket paths it opens ("/chat", "/stream").
	Sockets []string
	// Groups are the groups of checks other than http it relies on whole (chat, stream, db).
	Groups []string
}

// Sends says whether target (a path with its query) is a request the scenario sends.
func (n Needs) Sends(target string) bool {
	path, query, _ := strings.Cut(target, "?")
	for _, r := range n.Routes {
		if r == target || query == "" && r == path || strings.HasSuffix(r, "?") && strings.TrimSuffix(r, "?") == path {
			return true
		}
	}
	return false
}

// SendsAll says whether every one of targets is a request the scenario sends.
func (n Needs) SendsAll(targets ...string) bool {
	return !slices.ContainsFunc(targets, func(t string) bool { return !n.Sends(t) })
}

// needed says whether a check sending targets runs against s: every check for a server of
// the whole contract (no Needs), else only those whose every request the scenario sends; one
// that does not is recorded as not needed here.
func (s *Server) needed(name string, targets ...string) bool {
	if s.Needs == nil || s.Needs.SendsAll(targets...) {
		return true
	}
	s.notNeeded = append(s.notNeeded, name)
	return false
}

// NotNeeded are the checks left out as not needed by the scenario (see Needs), in order.
func (s *Server) NotNeeded() []string { return slices.Clone(s.notNeeded) }
