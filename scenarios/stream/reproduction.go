package stream

import (
	"fmt"

	"github.com/arena-lab/arena/internal/scenario"
	streamload "github.com/arena-lab/arena/internal/stream"
)

var _ scenario.Reproducible = Scenario{}

// Reproduction: the study's one server (Undertow) in the largest form that fits one server
// core and the lab's heap, since the study's own cannot; every other contender in the quick
// form.
func (Scenario) Reproduction() scenario.Reproduction {
	return scenario.Reproduction{
		Stacks: []string{"undertow"},
		Study:  []scenario.Form{{Preset: "default", Why: "the largest form that fits: 100 clients reading as fast as the server can"}},
		Matrix: scenario.Form{Preset: "default", Quick: true, Levels: []string{SlowOn, SlowOff},
			Why: "50 clients reading slowly for 15 s, with back-pressure and without: whether memory stays bounded (what back-pressure costs is measured on the study's stack only, to fit the time)"},
		Notes: []string{fmt.Sprintf("The study's own preset (%d clients, each generator at %d messages/s: %.1f M messages/s, on 4 cores) cannot run on one server core under the lab's 512 MiB heap: with back-pressure its bounded queues alone hold %d × 5100 × %d B = %.1f GB. The reproduction runs preset default, %d clients at rate 0 (as fast as the server can), the largest form whose queues fit the heap; `arena run stream --preset seed --heap 4096` runs the study's on a larger machine.",
			seedShape.clients, seedShape.rate, float64(seedShape.clients*seedShape.rate)/1e6, seedShape.clients, size, float64(seedShape.clients)*5100*size/1e9, defaultShape.clients)},
		Setup: scenario.Setup{
			Machine:  "Intel i7-4770, 4 physical cores (seeds/003 line 71)",
			Software: "Undertow with a sender actor per client, JDK 12.0.2 (seeds/003 line 73)",
			Method:   "1000 clients, 100,000,000 messages of about 250 B; slow clients sleep 200 ms after each message (seeds/003 lines 23–26, 65–67)",
		},
		Published: []scenario.Published{
			{Claim: "b", What: "Undertow with back-pressure, messages/s delivered", Theirs: "1,351,598 messages/s (1000 clients, 4 cores)", Source: "seeds/003 line 92",
				Ours: scenario.Read{Contender: "undertow", Level: ThroughputOn, Figure: streamload.NumberDelivered, Unit: "messages/s"}},
			{Claim: "b", What: "what back-pressure costs in throughput", Theirs: "up to 20 %", Source: "seeds/003 line 59",
				Ours: scenario.Read{Contender: "undertow", Level: ThroughputOn, Figure: streamload.NumberDelivered, Unit: "×"},
				Per:  &scenario.Read{Contender: "undertow", Level: ThroughputOff, Figure: streamload.NumberDelivered}},
			{Claim: "a", What: "Undertow without back-pressure, slow clients", Theirs: "unresponsive, then out of memory", Source: "seeds/003 line 28",
				Ours: scenario.Read{Contender: "undertow", Level: SlowOff, Figure: "rss_mb", Unit: "MB"}},
		},
	}
}
