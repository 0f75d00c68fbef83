package chat

import (
	"fmt"
	"time"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

var _ scenario.Reproducible = Scenario{}

// Reproduction: the study's seven applications on its ladders; every other contender on the
// quick ladders (a few users per room, 200 messages).
func (Scenario) Reproduction() scenario.Reproduction {
	return scenario.Reproduction{
		Stacks: studyStacks,
		Study: []scenario.Form{{Preset: "seed", Levels: studyLevels(),
			Why: "the study's one-room ladder (10–60 users) and the top of its two- and four-room ladders (35 and 17 users a room), 500 messages each"}},
		Matrix: scenario.Form{Preset: "seed", Quick: true, Why: "a few users per room, 200 messages each"},
		Notes: []string{
			"The study repeated each user count up to 10 times; the reproduction runs each 3 times (--repeat sets it).",
			"Its two- and four-room ladders run at their top only, where claims (b) and (c) are judged and the memory of (d) rises: the whole ladders, another six levels of seven stacks, are left to `arena run chat`, to keep the studies' part within its ETA.",
		},
		Setup: scenario.Setup{
			Machine:  "Linux Mint 17.3, 8 CPU cores (seeds/000 line 72)",
			Software: "Akka 2.4 on Play, Vert.x 3.3.3, Node.js 5.6.0 with Express and ws, Spring Boot 1.4.3 on Tomcat and Jetty (seeds/000 lines 19, 27, 36, 44)",
			Method:   "a Java client: users send 500 messages each, latency the mean over messages, up to 10 iterations a user count (seeds/000 lines 72–76); memory as % of the machine's",
		},
		// The study gives memory as % of a machine whose memory it does not state (line 72):
		// its figures are set beside ours as ratios, which need no machine.
		Published: []scenario.Published{
			{Claim: "d", What: "Spring on Tomcat against Akka at low load, memory", Theirs: "both within 9–12 % of the machine's memory: about 1× (0.75–1.33×)", Source: "seeds/000 line 194",
				Ours: scenario.Read{Contender: "spring-mvc", Level: lowWorkload, Figure: "rss_mb", Unit: "MB"},
				Per:  &scenario.Read{Contender: "play-akka", Level: lowWorkload, Figure: "rss_mb", Unit: "MB"}, Value: 1},
			{Claim: "d", What: "Vert.x with EventBus above 40 users against 10, memory", Theirs: "25 % of the machine's memory against 9–12 % at low load: 2.1–2.8×", Source: "seeds/000 line 194",
				Ours: scenario.Read{Contender: "vertx-eventbus", Level: "r1-u60", Figure: "rss_mb", Unit: "MB"},
				Per:  &scenario.Read{Contender: "vertx-eventbus", Level: lowWorkload, Figure: "rss_mb", Unit: "MB"}, Value: 25 / 10.5,
				Differs: memoryDiffers("vertx-eventbus", "r1-u60")},
			{Claim: "d", What: "Akka above 40 users against 10, memory", Theirs: "15 % of the machine's memory against 9–12 % at low load: 1.25–1.67×", Source: "seeds/000 line 194",
				Ours: scenario.Read{Contender: "play-akka", Level: "r1-u60", Figure: "rss_mb", Unit: "MB"},
				Per:  &scenario.Read{Contender: "play-akka", Level: lowWorkload, Figure: "rss_mb", Unit: "MB"}, Value: 15 / 10.5,
				Differs: memoryDiffers("play-akka", "r1-u60")},
			{Claim: "f", What: "single Node.js at 60 users, CPU", Theirs: "almost 100 % (one of its 8 cores)", Source: "seeds/000 line 190 (one of 8 cores: line 111)",
				Ours: scenario.Read{Contender: "node-express", Level: "r1-u60", Figure: "cpu_pct", Unit: "%"}, Value: 100,
				Differs: nodeCPUDiffers("r1-u60")},
		},
	}
}

// studyLevels are the seed's one-room ladder and each other ladder's top level.
func studyLevels() []string {
	var out []string
	for _, ld := range seedLadders {
		if ld.rooms == 1 {
			for _, u := range ld.users {
				out = append(out, levelName(ld.rooms, u))
			}
			continue
		}
		out = append(out, levelName(ld.rooms, ld.users[len(ld.users)-1]))
	}
	return out
}

// deliveryRate is the deliveries a second a level of run asked of the server: in each room,
// every user sends a message each period to every member, itself included.
func deliveryRate(run *results.Run, level string) (float64, bool) {
	for _, l := range run.Scenario.Levels {
		if l.Name == level && l.X > 0 {
			users := l.X
			rooms := float64(usersOf(l)) / users
			return rooms * users * users * float64(time.Second/period), true
		}
	}
	return 0, false
}

// rateNote is how our load was paced beside the study's, whose pace its text does not give.
func rateNote(run *results.Run, level string) string {
	rate, ok := deliveryRate(run, level)
	if !ok {
		return ""
	}
	return fmt.Sprintf("our users each send a message every %s (arena's choice: the study says only \"periodically\", seeds/000 line 72), %.0f deliveries a second at %s; the study's load is not stated, so its figure comes from a load of unknown size", period, rate, level)
}

// memoryDiffers is why a JVM's rise in memory here is far from the study's: where its peak
// reached the heap every JVM is capped at here (the run's heap_mb), the cap bounds the rise
// (the study's JVMs ran on their default heap, sized by a machine whose memory it does not
// state); else the loads differ by an unknown factor.
func memoryDiffers(contender, level string) func(*results.Run, float64) string {
	return func(run *results.Run, ours float64) string {
		peak := scenario.Index(run)[contender][level].RSSMB.Median
		if heap := float64(run.Env.HeapMB); heap > 0 && peak >= heap {
			return fmt.Sprintf("%s's peak RSS at %s, %.0f MB, is past the %.0f MB heap every JVM is capped at here (the run's heap_mb): its heap may grow no further, which bounds the rise here; the study's JVMs ran on their default heap, a share of a machine whose memory it does not state (seeds/000 line 72)", contender, level, peak, heap)
		}
		return rateNote(run, level)
	}
}

// nodeCPUDiffers is why single Node's CPU here is far from the study's "almost 100 %": a
// single thread is at most one core (100 %), so ours far below it is a load that does not
// keep the thread busy: the pace, not the cores.
func nodeCPUDiffers(level string) func(*results.Run, float64) string {
	return func(run *results.Run, ours float64) string {
		if ours > 100 {
			return ""
		}
		return fmt.Sprintf("one Node thread is at most one core (100 %%), and it used %.0f %%: it was idle part of the time at this load; %s", ours, rateNote(run, level))
	}
}
