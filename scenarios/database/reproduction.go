package database

import "github.com/arena-lab/arena/internal/scenario"

var _ scenario.Reproducible = Scenario{}

// Reproduction: arena's own study has no published form to reproduce. Its claims' stacks
// (one per model the claims compare) run the quick form's levels, where every claim is
// judged, with the studies' repeats; every other contender with the db feature runs the
// quick form beside them.
func (Scenario) Reproduction() scenario.Reproduction {
	return scenario.Reproduction{
		Stacks: []string{"spring-mvc", "spring-mvc-virtual", "spring-webflux", "vertx"},
		Study: []scenario.Form{
			{Preset: "default", Quick: true, Why: "arena's own study: reads at 64 connections, then the pool idle and held by slow queries, each contender's pool DB_POOL=16"},
		},
		Matrix: scenario.Form{Preset: "default", Quick: true, Why: "the same quick form"},
		Notes: []string{
			"arena's own study, beyond the seeds: no study ran it, so there is no setup or figure of theirs to set ours beside; its claims cite where each comes from.",
			"The full preset's read and pool ladders (`arena run database`) are left out of the reproduction for time; its claims are judged at 64 connections and DB_POOL=16, which the quick form runs.",
		},
		Setup: scenario.Setup{
			Machine:  "this machine: the lab's PostgreSQL on the client's CPUs, the contender on the server's",
			Software: "each contender's own driver and pool (its README), PostgreSQL from Debian",
			Method:   "arena's own load: a closed loop on /db/{id} over 9,000 rows; an open loop of /db/slow, /db/{id}, /instant and the probes",
		},
	}
}
