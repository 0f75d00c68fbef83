package chat

import (
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// Every figure the study published has a number in our unit beside it.
func TestPublishedFiguresHaveValues(t *testing.T) {
	for _, p := range (Scenario{}).Reproduction().Published {
		if p.Value <= 0 {
			t.Errorf("%s: no value", p.What)
		}
	}
}

// published is the study's figure for what.
func published(t *testing.T, what string) func(*results.Run, float64) string {
	t.Helper()
	for _, p := range (Scenario{}).Reproduction().Published {
		if strings.HasPrefix(p.What, what) {
			return p.Differs
		}
	}
	t.Fatalf("no published figure %q", what)
	return nil
}

// Why ours differs is derived from what the run recorded: the heap cap where the peak
// reached it, else the load our pace gave (60 users a room, a message each 10 ms to 60
// members: 360,000 deliveries a second); for single Node, a thread at most one core.
func TestWhyOursDiffers(t *testing.T) {
	run := studyRun(nil)
	run.Env.HeapMB = 1024
	bus := published(t, "Vert.x with EventBus")
	if why := bus(run, 2.25); !strings.Contains(why, "360000 deliveries a second at r1-u60") || strings.Contains(why, "heap") {
		t.Errorf("below the cap: %q", why)
	}
	run.Env.HeapMB = 400 // the bus's peak at r1-u60 is 450 MB
	if why := bus(run, 2.25); !strings.Contains(why, "450 MB, is past the 400 MB heap every JVM is capped at here") {
		t.Errorf("at the cap: %q", why)
	}
	node := published(t, "single Node.js")
	if why := node(run, 30); !strings.Contains(why, "at most one core (100 %), and it used 30 %") || !strings.Contains(why, "360000 deliveries") {
		t.Errorf("node at 30 %%: %q", why)
	}
	if why := node(run, 150); why != "" {
		t.Errorf("node over a core has no reason of this model: %q", why)
	}
	if p := published(t, "Spring on Tomcat against Akka"); p != nil {
		t.Error("no reason derives why two JVMs' footprints differ: Differs should be nil")
	}
}

// The rise of (d) has one baseline, the study's low workload (10 users, seeds/000 line 194),
// in its figure rows and its verdict alike: the rows divide by it, the verdict names it.
func TestTheRiseHasOneBaseline(t *testing.T) {
	if lowWorkload != "r1-u10" {
		t.Fatalf("the low workload is %q, want the study's 10 users in one room", lowWorkload)
	}
	rows := 0
	for _, p := range (Scenario{}).Reproduction().Published {
		if p.Claim == "d" && p.Per != nil {
			rows++
			if p.Per.Level != lowWorkload {
				t.Errorf("%s: divides by %s, the verdict by %s", p.What, p.Per.Level, lowWorkload)
			}
		}
	}
	if rows == 0 {
		t.Fatal("no memory row of claim d")
	}
	if d := claimsOf(studyRun(nil))["d"]; !strings.Contains(d.Why, "vertx-eventbus 200 MB at "+lowWorkload+" → ") {
		t.Errorf("claim d does not rest on the low workload: %s", d.Why)
	}
}
