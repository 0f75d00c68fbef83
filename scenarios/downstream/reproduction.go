package downstream

import (
	"fmt"

	"github.com/arena-lab/arena/internal/scenario"
)

var _ scenario.Reproducible = Scenario{}

// Reproduction: the study's three services at its preset (ab's 30,000 requests of warm-up,
// then 10,000), and in the steady state beside it; every other contender in the quick form.
func (Scenario) Reproduction() scenario.Reproduction {
	return scenario.Reproduction{
		Stacks: []string{"spring-webflux", "spring-webflux-fn", "vertx"},
		Study: []scenario.Form{
			{Preset: "seed", Why: "the study's preset: 100 connections, 30,000 requests of warm-up, 10,000 measured"},
			{Preset: scenario.PresetSteady, Levels: []string{LevelSelf}, Why: "beside it, the steady state: warm-up until throughput settles, then 20 s measured"},
		},
		Matrix: scenario.Form{Preset: "seed", Quick: true, Why: "5,000 requests of warm-up, 5,000 measured"},
		Setup: scenario.Setup{
			Machine:  "a GCE instance, 4 vCPUs, 3.6 GB (seeds/002 line 61)",
			Software: "Spring Boot WebFlux 2.0.0 on Netty 4.1.22, Vert.x 3.5.1 on Netty 4.1.19 (seeds/002 lines 5, 8)",
			Method:   "ab -n 30000 -c 100 to warm up, then ab -n 10000 -c 100 measured, the service its own downstream",
		},
		Published: []scenario.Published{
			studyRPS("a", "vertx", "Vert.x", "6,654.65", 228),
			studyRPS("a", "spring-webflux", "WebFlux, annotated", "2,624.96", 102),
			{Claim: "a", What: "Vert.x over WebFlux annotated, throughput", Theirs: "2.54×", Source: "seeds/002 lines 228 and 102 (6,654.65 / 2,624.96)",
				Ours: rpsOf("vertx"), Per: ptr(rpsOf("spring-webflux"))},
			studyRPS("b", "spring-webflux-fn", "WebFlux, functional", "2,695.02", 165),
			{Claim: "b", What: "WebFlux functional over annotated, throughput", Theirs: "1.03×", Source: "seeds/002 lines 165 and 102 (2,695.02 / 2,624.96)",
				Ours: rpsOf("spring-webflux-fn"), Per: ptr(rpsOf("spring-webflux"))},
		},
	}
}

// studyRPS is one of the study's throughputs (ab's Requests per second) and ours at level self.
func studyRPS(claim, contender, what, theirs string, line int) scenario.Published {
	return scenario.Published{Claim: claim, What: what + ", requests/s", Theirs: theirs + " requests/s", Source: fmt.Sprintf("seeds/002 line %d (ab, Requests per second)", line), Ours: rpsOf(contender)}
}

func rpsOf(contender string) scenario.Read {
	return scenario.Read{Contender: contender, Level: LevelSelf, Figure: "rps", Tag: tag, Unit: "requests/s"}
}

func ptr[T any](v T) *T { return &v }
