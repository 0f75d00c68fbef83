package downstream

import (
	"fmt"

	"github.com/arena-lab/arena/internal/compare"
	"github.com/arena-lab/arena/internal/results"
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
			studyRPS("a", "vertx", "Vert.x", "6,654.65", 6654.65, 228),
			studyRPS("a", "spring-webflux", "WebFlux, annotated", "2,624.96", 2624.96, 102),
			{Claim: "a", What: "Vert.x over WebFlux annotated, throughput", Theirs: "2.54×", Value: 2.54, Source: "seeds/002 lines 228 and 102 (6,654.65 / 2,624.96)",
				Ours: rpsOf("vertx"), Per: ptr(rpsOf("spring-webflux"))},
			studyRPS("b", "spring-webflux-fn", "WebFlux, functional", "2,695.02", 2695.02, 165),
			{Claim: "b", What: "WebFlux functional over annotated, throughput", Theirs: "1.03×", Value: 1.03, Source: "seeds/002 lines 165 and 102 (2,695.02 / 2,624.96)",
				Ours: rpsOf("spring-webflux-fn"), Per: ptr(rpsOf("spring-webflux"))},
			studyLatency("vertx", "Vert.x", "mean", "15.027 ms", 15.027, 229),
			studyLatency("spring-webflux", "WebFlux, annotated", "mean", "38.096 ms", 38.096, 103),
			studyLatency("vertx", "Vert.x", "p99", "24 ms", 24, 248),
			studyLatency("spring-webflux", "WebFlux, annotated", "p99", "69 ms", 69, 122),
		},
	}
}

// studyRPS is one of the study's throughputs (ab's Requests per second) and ours at level self.
func studyRPS(claim, contender, what, theirs string, value float64, line int) scenario.Published {
	return scenario.Published{Claim: claim, What: what + ", requests/s", Theirs: theirs + " requests/s", Value: value,
		Source: fmt.Sprintf("seeds/002 line %d (ab, Requests per second)", line), Ours: rpsOf(contender), Differs: fewerCores(contender, value)}
}

// studyLatency is one of the study's latencies (ab's mean Time per request, or its 99 %
// line) and ours at level self, for claim (c).
func studyLatency(contender, what, figure, theirs string, value float64, line int) scenario.Published {
	return scenario.Published{Claim: "c", What: what + ", " + figure, Theirs: theirs, Value: value,
		Source: fmt.Sprintf("seeds/002 line %d (ab)", line), Ours: scenario.Read{Contender: contender, Level: LevelSelf, Figure: figure, Tag: tag, Unit: "ms"}}
}

// studyVCPUs is the study's machine: "a GCE 4 vCPUs, 3,6 GB instance" (seeds/002 line 61).
const studyVCPUs = 4

// fewerCores says why ours is below the study's throughput when the run gave the server fewer
// cores than the study's 4 vCPUs: a core's CPU is at most 100 %, so a server that spends
// ours' CPU per request serves at most its rate per core-second times its cores. Where ours is
// the higher, or the run gave as many cores, the cores explain nothing: "".
func fewerCores(contender string, theirs float64) func(*results.Run, float64) string {
	return func(run *results.Run, ours float64) string {
		cores := scenario.CountCPUs(run.Env.ServerCPUs)
		if cores == 0 || cores >= studyVCPUs || ours >= theirs {
			return ""
		}
		why := fmt.Sprintf("the server had %d core(s) (--server-cpus %s), the study's %d vCPUs (seeds/002 line 61), and at level self each /data request is a second request to the same server, its own downstream", cores, run.Env.ServerCPUs, studyVCPUs)
		if cpu := compare.Median(scenario.Samples(run, contender, LevelSelf, tag, "cpu_pct")); cpu > 0 {
			perCore := ours / (cpu / 100)
			why += fmt.Sprintf(": ours %.0f requests/s at %.0f %% CPU is %.0f per core-second, so %d cores would serve at most ≈ %.0f (a core's CPU is at most 100 %%; the study's shared theirs with ab)",
				ours, cpu, perCore, studyVCPUs, perCore*studyVCPUs)
		}
		return why
	}
}

func rpsOf(contender string) scenario.Read {
	return scenario.Read{Contender: contender, Level: LevelSelf, Figure: "rps", Tag: tag, Unit: "requests/s"}
}

func ptr[T any](v T) *T { return &v }
