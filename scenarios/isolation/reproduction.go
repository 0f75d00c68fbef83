package isolation

import (
	"fmt"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/results"
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
			studyMedian("a", "spring-mvc", TagInstant, "sync servlet, /instant", "56.06 s", 56060, 25),
			studyMedian("a", "spring-mvc", TagLiveness, "sync servlet, liveness", "47.97 s", 47970, 26),
			studyMedian("c", "spring-mvc", TagDelayed, "sync servlet, /delayed", "59.99 s", 59990, 24),
			studyMedian("b", "spring-mvc-async", TagInstant, "async servlet, /instant", "3.69 ms", 3.69, 38),
			studyMedian("b", "spring-mvc-async", TagLiveness, "async servlet, liveness", "6.05 ms", 6.05, 39),
			studyMedian("d", "spring-mvc-async", TagDelayed, "async servlet, /delayed", "10 s", 10000, 37),
			studyMedian("b", "spring-mvc-async-all", TagInstant, "async-all servlet, /instant", "3.67 ms", 3.67, 50),
			studyMedian("b", "spring-webflux", TagInstant, "WebFlux, /instant", "4.7 ms", 4.7, 62),
			studyMedian("b", "spring-webflux", TagLiveness, "WebFlux, liveness", "7.08 ms", 7.08, 63),
		},
	}
}

// studyMedian is one of the study's k6 medians ("med=", valueMs in ms) and ours, the merged
// p50 at the seed level. A starved server's median differs for the load's length and timeout
// (starvedDiffers); a served one's for the machine, which the study does not state
// (servedDiffers).
func studyMedian(claim, contender, tag, what, theirs string, valueMs float64, line int) scenario.Published {
	p := scenario.Published{Claim: claim, What: what + ", median", Theirs: theirs, Value: valueMs, Source: fmt.Sprintf("seeds/004 line %d (k6, med=)", line),
		Ours: scenario.Read{Contender: contender, Level: "seed", Figure: "p50", Tag: tag, Unit: "ms"}}
	p.Differs = servedDiffers(valueMs)
	if contender == "spring-mvc" {
		p.Differs = starvedDiffers
	}
	return p
}

// servedDiffers: at the study's 10 requests/s a served fast request does not queue, so its
// median is the machine's own cost of one request (server, network stack and client), and the
// study states no machine (seeds/004): no model carries its milliseconds to ours. The claim
// is decided at IsolatedBelow, and both sides far under it agree on it. "" when either side
// is not a served request's.
func servedDiffers(theirsMs float64) func(*results.Run, float64) string {
	return func(_ *results.Run, ours float64) string {
		if ours >= ms(IsolatedBelow)/10 || theirsMs >= ms(IsolatedBelow)/10 {
			return ""
		}
		return fmt.Sprintf("ours %s, the study's %s: at 10 requests/s a served request does not queue, so its median is the machine's own cost of one request, and the study states no machine (seeds/004), so no model carries its milliseconds to ours; both are under a tenth of the %s that decides the claim",
			results.FormatMs(ours), results.FormatMs(theirsMs), IsolatedBelow)
	}
}

// starvedDiffers: a starved server's queue grows for as long as the load lasts, so its
// median wait is set by the load's length, the request timeout that cuts it, and the
// threads that drain it, each as this run recorded it against the study's (60 s of k6 with
// its 60 s timeout, seeds/004 lines 22-27; 11 threads, the study's published code).
func starvedDiffers(run *results.Run, ours float64) string {
	var why []string
	if d := run.Scenario.Duration; d > 0 && d < 60 {
		why = append(why, fmt.Sprintf("this run's load lasted %g s (the study's 60 s): a starved queue's wait grows with the load's length", d))
	}
	if t := run.Scenario.Timeout; t > 0 && t < 60 {
		why = append(why, fmt.Sprintf("its requests timed out at %g s (the study's 60 s), so no wait can pass %s", t, results.FormatMs(t*1000)))
	}
	for _, lv := range run.Scenario.Levels {
		if lv.Name == "seed" && lv.Env["WORKER_THREADS"] != fmt.Sprint(seedThreads) {
			why = append(why, fmt.Sprintf("it ran with WORKER_THREADS=%q, not the study's %d", lv.Env["WORKER_THREADS"], seedThreads))
		}
	}
	if len(why) == 0 {
		return ""
	}
	return fmt.Sprintf("ours %s: ", results.FormatMs(ours)) + strings.Join(why, "; ")
}
