package profile

import (
	"math"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// A contender beside its minimal example: the event loop and the write are common to both,
// the router is the contender's own. Carried lists the router and its callee, not the common
// frames, whose share of the contender's samples is smaller than of the example's.
func TestCarriedListsWhatTheContenderDoesBeyondTheExample(t *testing.T) {
	contender := results.Stacks{
		"Thread.run;EventLoop.run;Router.handle;Route.match": 20,
		"Thread.run;EventLoop.run;Router.handle;write":       50,
		"Thread.run;EventLoop.run;epoll":                     30,
	}
	example := results.Stacks{
		"Thread.run;EventLoop.run;write": 70,
		"Thread.run;EventLoop.run;epoll": 30,
	}
	got := Carried(contender, example, 10)
	want := []Share{{"Router.handle", 0.70, 0, 0, 0}, {"Route.match", 0.20, 0, 0.20, 0}}
	if len(got) != len(want) {
		t.Fatalf("Carried = %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Name != want[i].Name || math.Abs(got[i].A-want[i].A) > 1e-9 || got[i].B != want[i].B ||
			math.Abs(got[i].SelfA-want[i].SelfA) > 1e-9 || got[i].SelfB != want[i].SelfB {
			t.Errorf("Carried[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := Carried(contender, example, 1); len(got) != 1 || got[0].Name != "Router.handle" {
		t.Errorf("Carried(…, 1) = %+v, want the router alone", got)
	}
}

// A frame recurring in one stack counts once in its total share.
func TestSharesCountARecurringFrameOnce(t *testing.T) {
	s := results.Stacks{"main;f;g;f": 3, "main;h": 1}
	self, tot := s.Shares()
	if tot["f"] != 0.75 || tot["main"] != 1 || tot["h"] != 0.25 || self["f"] != 0.75 || self["g"] != 0 || self["main"] != 0 {
		t.Errorf("Shares = %v, %v", self, tot)
	}
}

// Two JVMs name the same lambda's class at different addresses; folded, they are one frame.
func TestParseFoldedNamesLambdasAlikeInEveryJVM(t *testing.T) {
	s, _, err := parseFolded([]byte("run;StaticHandlerImpl$$Lambda.0x000000001f24c8a0.handle 3\n" +
		"run;StaticHandlerImpl$$Lambda/0x00007f00aa01.handle 2\nrun;Plain.handle 1\n" +
		"run;java.lang.invoke.LambdaForm$MH.0x00000000815fa400.invoke 4\n" +
		"run;java.lang.invoke.LambdaForm$MH.0x0000000036305400.invoke 1\n"))
	if err != nil || len(s) != 3 || s["run;StaticHandlerImpl$$Lambda.handle"] != 5 || s["run;Plain.handle"] != 1 ||
		s["run;java.lang.invoke.LambdaForm$MH.invoke"] != 5 {
		t.Errorf("parseFolded = %v, %v", s, err)
	}
}
