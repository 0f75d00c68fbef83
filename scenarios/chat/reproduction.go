package chat

import "github.com/arena-lab/arena/internal/scenario"

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
			"The study repeated each user count up to 10 times; the reproduction runs each once unless --repeat says otherwise.",
			"Its two- and four-room ladders run at their top only, where claims (b) and (c) are judged and the memory of (d) rises: the whole ladders, another six levels of seven stacks, do not fit the reproduction's 45 minutes for the studies (`arena run chat` runs them).",
		},
		Setup: scenario.Setup{
			Machine:  "Linux Mint 17.3, 8 CPU cores (seeds/000 line 72)",
			Software: "Akka 2.4 on Play, Vert.x 3.3.3, Node.js 5.6.0 with Express and ws, Spring Boot 1.4.3 on Tomcat and Jetty (seeds/000 lines 19, 27, 36, 44)",
			Method:   "a Java client: users send 500 messages each, latency the mean over messages, up to 10 iterations a user count (seeds/000 lines 72–76); memory as % of the machine's",
		},
		Published: []scenario.Published{
			{Claim: "d", What: "Java stacks at low load, memory", Theirs: "9–12 % of the machine's memory", Source: "seeds/000 line 194",
				Ours: scenario.Read{Contender: "spring-mvc", Level: "r1-u10", Figure: "rss_mb", Unit: "MB"}},
			{Claim: "d", What: "Vert.x with EventBus above 40 users, memory", Theirs: "25 % of the machine's memory", Source: "seeds/000 line 194",
				Ours: scenario.Read{Contender: "vertx-eventbus", Level: "r1-u60", Figure: "rss_mb", Unit: "MB"}},
			{Claim: "d", What: "Akka above 40 users, memory", Theirs: "15 % of the machine's memory", Source: "seeds/000 line 194",
				Ours: scenario.Read{Contender: "play-akka", Level: "r1-u60", Figure: "rss_mb", Unit: "MB"}},
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
