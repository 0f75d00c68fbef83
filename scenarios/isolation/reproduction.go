package isolation

import (
	"fmt"
	"time"

	"github.com/arena-lab/arena/internal/scenario"
)

var _ scenario.Reproducible = Scenario{}

// Reproduction: the study's four Spring services at its preset (11 request threads, 60 s),
// with Tomcat on virtual threads beside them for the claim beyond the study; every other
// contender in the quick form (20 s).
func (Scenario) Reproduction() scenario.Reproduction {
	return scenario.Reproduction{
		Stacks: []string{"spring-mvc", "spring-mvc-async", "spring-mvc-async-all", "spring-webflux"},
		Beyond: []string{"spring-mvc-virtual"},
		Study:  []scenario.Form{{Preset: "seed", Why: "the study's preset: 11 request threads, 60 s at its rates"}},
		Matrix: scenario.Form{Preset: "seed", Quick: true, Duration: 10 * time.Second,
			Why: "the study's rates for 10 s: 11 request threads are all held by /delayed after 1.1 s, so a server that starves starves within seconds"},
		Setup: scenario.Setup{
			Method:   "k6: /instant and /delayed at a constant 10 requests/s, the probes at 1/s (seeds/004 line 17), for 60 s with k6's 60 s timeout",
			Software: "Spring Boot services, servlet (sync, async, async-all) and WebFlux; versions and machine not stated",
		},
		Published: []scenario.Published{
			studyMedian("a", "spring-mvc", TagInstant, "sync servlet, /instant", "56.06 s", 25),
			studyMedian("a", "spring-mvc", TagLiveness, "sync servlet, liveness", "47.97 s", 26),
			studyMedian("b", "spring-mvc-async", TagInstant, "async servlet, /instant", "3.69 ms", 38),
			studyMedian("b", "spring-mvc-async", TagLiveness, "async servlet, liveness", "6.05 ms", 39),
			studyMedian("b", "spring-mvc-async-all", TagInstant, "async-all servlet, /instant", "3.67 ms", 50),
			studyMedian("b", "spring-webflux", TagInstant, "WebFlux, /instant", "4.7 ms", 62),
			studyMedian("b", "spring-webflux", TagLiveness, "WebFlux, liveness", "7.08 ms", 63),
		},
	}
}

// studyMedian is one of the study's k6 medians ("med=") and ours, the merged p50 at the seed
// level.
func studyMedian(claim, contender, tag, what, theirs string, line int) scenario.Published {
	return scenario.Published{Claim: claim, What: what + ", median", Theirs: theirs, Source: fmt.Sprintf("seeds/004 line %d (k6, med=)", line),
		Ours: scenario.Read{Contender: contender, Level: "seed", Figure: "p50", Tag: tag, Unit: "ms"}}
}
