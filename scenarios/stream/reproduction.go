package stream

import (
	"fmt"
	"net/url"
	"strconv"

	"github.com/arena-lab/arena/internal/results"

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
			seedShape.clients, seedShape.rate, float64(seedShape.clients*seedShape.rate)/1e6, seedShape.clients, size, float64(seedShape.clients)*5100*size/1e9, defaultShape.clients),
			fmt.Sprintf("What back-pressure costs is measured between %s and %s, fast readers fed %d messages/s in all (arena's choice), not at rate 0: there the server without back-pressure is outrun by its own generator and dies (undertow, 2026-11-24: out of memory 10.4 s in), and a dead baseline gives no cost.", PacedOn, PacedOff, pacedTotal)},
		Setup: scenario.Setup{
			Machine:  "Intel i7-4770, 4 physical cores (seeds/003 line 71)",
			Software: "Undertow with a sender actor per client, JDK 12.0.2 (seeds/003 line 73)",
			Method:   "1000 clients, 100,000,000 messages of about 250 B; slow clients sleep 200 ms after each message (seeds/003 lines 23–26, 65–67)",
		},
		Published: []scenario.Published{
			{Claim: "b", What: "Undertow with back-pressure, messages/s delivered", Theirs: "1,351,598 messages/s (1000 clients, 4 cores)", Source: "seeds/003 line 92",
				Ours:  scenario.Read{Contender: "undertow", Level: ThroughputOn, Figure: streamload.NumberDelivered, Unit: "messages/s"},
				Value: studyRate, Differs: deliveredDiffers},
			{Claim: "b", What: "messages/s with back-pressure over without (what back-pressure costs: at most 20 %)", Theirs: "up to 20 %, a ratio of ≥ 0.8", Source: "seeds/003 line 59",
				Ours:  scenario.Read{Contender: "undertow", Level: PacedOn, Figure: streamload.NumberDelivered, Unit: "×"},
				Per:   &scenario.Read{Contender: "undertow", Level: PacedOff, Figure: streamload.NumberDelivered},
				Value: 1 - maxCost, Differs: costDiffers},
			{Claim: "a", What: "Undertow without back-pressure, slow clients", Theirs: "unresponsive, then out of memory", Source: "seeds/003 line 28",
				Ours: scenario.Read{Contender: "undertow", Level: SlowOff, Figure: "rss_mb", Unit: "MB"}},
		},
	}
}

// The study's setup, as its text gives it: 1000 clients (seeds/003 line 23) fed 1.5 M
// messages/s in all (line 25, the generator of line 85), on 4 physical cores (line 71),
// delivering 1,351,598 messages/s (line 92).
const (
	studyClients   = 1000
	studyGenerated = 1_500_000
	studyCores     = 4
	studyRate      = 1_351_598
)

// loadOf is a level's clients and per-client generator rate as the run recorded its plan
// (the /stream path the clients opened); false when the run does not have it.
func loadOf(run *results.Run, level string) (clients, rate int, ok bool) {
	for _, l := range run.Scenario.Levels {
		if l.Name != level || len(l.Streams) == 0 {
			continue
		}
		st := l.Streams[0]
		u, err := url.Parse(st.Path)
		if err != nil {
			return 0, 0, false
		}
		rate, err := strconv.Atoi(u.Query().Get("rate"))
		return st.Connections, rate, err == nil
	}
	return 0, 0, false
}

// generated says a per-client generator rate for people.
func generated(clients, rate int) string {
	if rate == 0 {
		return "as fast as the server can"
	}
	return fmt.Sprintf("%d messages/s in all", clients*rate)
}

// deliveredDiffers sets our delivered rate beside the study's per server core, from the
// cores and the load the run recorded: a core's CPU is at most 100 %, so four cores carry at
// most four times one.
func deliveredDiffers(run *results.Run, ours float64) string {
	cores := scenario.CountCPUs(run.Env.ServerCPUs)
	clients, rate, ok := loadOf(run, ThroughputOn)
	if cores == 0 || !ok {
		return ""
	}
	theirsPerCore := float64(studyRate) / studyCores
	atTheirPace := theirsPerCore * float64(cores)
	return fmt.Sprintf("the study's %d clients were fed %s on %d cores (seeds/003 lines 23, 25, 71): %.0f messages/s a core. "+
		"Here %d server core(s), %d clients fed %s. A core's CPU is at most 100 %%: at the study's pace a core, %d core(s) deliver %.0f messages/s; ours is %.2f× that, the rest being the machine's pace a core and this stack's cost a message",
		studyClients, generated(studyClients, studyGenerated/studyClients), studyCores, theirsPerCore,
		cores, clients, generated(clients, rate), cores, atTheirPace, ours/atTheirPace)
}

// costDiffers says at what generator rate our ratio was measured, from the run's plan,
// beside the study's.
func costDiffers(run *results.Run, ours float64) string {
	clients, rate, ok := loadOf(run, PacedOn)
	if !ok {
		return ""
	}
	return fmt.Sprintf("ours is with back-pressure over without, %d fast readers fed %s (arena's choice: a rate a server without back-pressure survives); the study's was at its generator's %s on %d cores (seeds/003 lines 25, 59, 71). "+
		"Where both keep up, both deliver what is generated and the ratio is 1; below it, back-pressure delivered %.0f %% of what the server without it did",
		clients, generated(clients, rate), generated(studyClients, studyGenerated/studyClients), studyCores, ours*100)
}
