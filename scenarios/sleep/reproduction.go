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
		Notes: []string{"The study's table gives 200 and 800 connections; its text says it ran up to 2600. The other contenders run the ends of that range only, to fit the time.",
			fmt.Sprintf("The seed states no Tomcat pool size; spring-mvc runs Tomcat's default of %d threads (arena's choice), which bounds it at %d requests/s with 100 ms waits: the study's 111 ms at 800 connections needs about 720 threads by that bound.", tomcatDefaultThreads, tomcatDefaultThreads*10),
			"Not judged: \"Netty is more suitable if the Rest server need to handle requests that need lot of backend communications\" (line 49) is advice, not a measurement; \"The performance gap ... can be less if the load is cpu bound\" (line 50) needs a CPU-bound load, which this scenario does not run; \"Tomcat spends lot of cpu cycles in context switches\" (lines 4, 48) is a cause the study did not measure (its own table gives both stacks the same CPU at 800 connections, line 38–39): our CPU figures stand beside its table instead."},
		Setup: scenario.Setup{
			Machine:  "32 cores (seeds/001 line 17)",
			Software: "a Tomcat (Spring Boot) and a Netty jar; versions not stated",
			Method:   "ab -n 90000 -c 200…2600 (seeds/001 line 12), latency the mean",
		},
		Published: []scenario.Published{
			studyMean("a", "spring-mvc", 200, "Tomcat, 200 connections", 101, 32),
			studyMean("a", "netty", 200, "Netty, 200 connections", 101, 33),
			studyMean("b", "spring-mvc", 800, "Tomcat, 800 connections", 111, 38),
			studyMean("b", "netty", 800, "Netty, 800 connections", 103, 39),
			studyCPU("spring-mvc", 200, "Tomcat, 200 connections", 90, 101, 32),
			studyCPU("netty", 200, "Netty, 200 connections", 100, 101, 33),
			studyCPU("spring-mvc", 800, "Tomcat, 800 connections", 350, 111, 38),
			studyCPU("netty", 800, "Netty, 800 connections", 350, 103, 39),
		},
	}
}

// studyMean is one of the study's latencies (ab's mean) at the 100 ms sleep, and ours there,
// with why ours is where it is: Tomcat's by the bound of its pool, Netty's by the wait.
func studyMean(claim, contender string, conns int, what string, theirsMs float64, line int) scenario.Published {
	differs := nettyDiffers(conns)
	if contender == "spring-mvc" {
		differs = tomcatDiffers(conns, theirsMs)
	}
	return scenario.Published{Claim: claim, What: what + ", mean latency", Theirs: fmt.Sprintf("%.0f ms", theirsMs), Source: fmt.Sprintf("seeds/001 line %d (its table)", line),
		Ours:  scenario.Read{Contender: contender, Level: levelName(tests[0], conns), Figure: "mean", Tag: tests[0].tag, Unit: "ms"},
		Value: theirsMs, Differs: differs}
}

// studyCPU is one of the study's CPU figures (cpu=N/3200: N % of one of its 32 cores) at the
// 100 ms sleep, and ours there in % of one core.
func studyCPU(contender string, conns int, what string, pct, theirsMs float64, line int) scenario.Published {
	claim := map[int]string{200: "a", 800: "b"}[conns]
	return scenario.Published{Claim: claim, What: what + ", server CPU (% of one core)", Theirs: fmt.Sprintf("%.0f %% (cpu=%.0f/3200, on 32 cores)", pct, pct), Source: fmt.Sprintf("seeds/001 line %d (its table)", line),
		Ours:  scenario.Read{Contender: contender, Level: levelName(tests[0], conns), Figure: "cpu_pct", Unit: "%"},
		Value: pct, Differs: cpuDiffers(contender, conns, pct, theirsMs)}
}
