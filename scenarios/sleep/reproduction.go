package sleep

import (
	"fmt"

	"github.com/arena-lab/arena/internal/scenario"
)

var _ scenario.Reproducible = Scenario{}

// Reproduction: Tomcat and Netty at the study's preset (90,000 requests a level, 200 to 2600
// connections, both waits); every other contender at 200 and 2600 connections of the
// 100 ms sleep, 10,000 requests a level, which is where a pool that runs out shows.
func (Scenario) Reproduction() scenario.Reproduction {
	return scenario.Reproduction{
		Stacks: []string{"spring-mvc", "netty"},
		Study:  []scenario.Form{{Preset: "seed", Why: "the study's preset: ab -n 90000 at 200 to 2600 connections"}},
		Matrix: scenario.Form{Preset: "seed", Quick: true, Levels: []string{"sleep-c200", "sleep-c2600"},
			Why: "the 100 ms sleep at 200 and 2600 connections, 10,000 requests a level: where a pool of threads runs out"},
		Notes: []string{"The study's table gives 200 and 800 connections; its text says it ran up to 2600. The other contenders run the ends of that range only, to fit the time."},
		Setup: scenario.Setup{
			Machine:  "32 cores (seeds/001 line 17)",
			Software: "a Tomcat (Spring Boot) and a Netty jar; versions not stated",
			Method:   "ab -n 90000 -c 200…2600 (seeds/001 line 12), latency the mean",
		},
		Published: []scenario.Published{
			studyMean("a", "spring-mvc", 200, "Tomcat, 200 connections", "101 ms", 32),
			studyMean("a", "netty", 200, "Netty, 200 connections", "101 ms", 33),
			studyMean("b", "spring-mvc", 800, "Tomcat, 800 connections", "111 ms", 38),
			studyMean("b", "netty", 800, "Netty, 800 connections", "103 ms", 39),
		},
	}
}

// studyMean is one of the study's latencies (ab's mean) at the 100 ms sleep, and ours there.
func studyMean(claim, contender string, conns int, what, theirs string, line int) scenario.Published {
	return scenario.Published{Claim: claim, What: what + ", mean latency", Theirs: theirs, Source: fmt.Sprintf("seeds/001 line %d (its table)", line),
		Ours: scenario.Read{Contender: contender, Level: levelName(tests[0], conns), Figure: "mean", Tag: tests[0].tag, Unit: "ms"}}
}
