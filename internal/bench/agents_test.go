package bench

import (
	"reflect"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/lab"
)

func TestAgentsCheckCounts(t *testing.T) {
	for _, ok := range [][]int{{1, 2, 3}, {2}, {1, 4}, {16}} {
		if err := CheckAgentCounts(ok); err != nil {
			t.Errorf("CheckAgentCounts(%v): %v", ok, err)
		}
	}
	for _, c := range []struct {
		counts []int
		want   string
	}{
		{nil, "--agents: give the agent counts to measure, like 1,2,3"},
		{[]int{0}, "--agents 0: 0 is not a count of 1 to 16 agents; give counts like 1,2,3"},
		{[]int{1, 17}, "17 is not a count"},
		{[]int{-1}, "-1 is not a count"},
		{[]int{1, 1}, "--agents 1,1: give each count once, in increasing order, like 1,2,3"},
		{[]int{3, 2, 1}, "in increasing order"},
	} {
		if err := CheckAgentCounts(c.counts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckAgentCounts(%v): error %v, want one saying %q", c.counts, err, c.want)
		}
	}
}

// needCPUs skips a test that pins to CPUs 0 and 1 on a machine that does not let it.
func needCPUs(t *testing.T) {
	t.Helper()
	if _, err := lab.ParseCPUs("0-1"); err != nil {
		t.Skipf("needs CPUs 0 and 1: %v", err)
	}
}

func TestAgentsCPUSets(t *testing.T) {
	needCPUs(t)
	got, err := AgentCPUSets([]int{0, 0, 1}, 3)
	if want := [][]int{{0}, {0}, {1}}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("AgentCPUSets = %v, %v; want %v", got, err, want)
	}
	for _, c := range []struct {
		cpus   []int
		agents int
		want   string
	}{
		{[]int{0, 0}, 3, "--agent-cpus 0,0 has 2 entries for 3 agents: give one CPU per agent, e.g. 0,0,0"},
		{[]int{0, 0, 1}, 2, "has 3 entries for 2 agents"},
		{nil, 1, "has 0 entries for 1 agents"},
		{[]int{0, -1}, 2, "--agent-cpus, agent 2"},
		{[]int{0, 9999}, 2, "--agent-cpus, agent 2: CPU list \"9999\": CPU 9999 is not available here"},
	} {
		if _, err := AgentCPUSets(c.cpus, c.agents); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("AgentCPUSets(%v, %d): error %v, want one saying %q", c.cpus, c.agents, err, c.want)
		}
	}
}

func TestAgentsLayout(t *testing.T) {
	layout, warnings := AgentLayout([]int{1}, [][]int{{0}, {0}, {1}})
	if want := "downstream on CPU 1; agent 1 on CPU 0, agent 2 on CPU 0, agent 3 on CPU 1; coordinator (and the in-process agent) on CPU 0"; layout != want {
		t.Errorf("layout %q, want %q", layout, want)
	}
	want := []string{
		"agents 1 and 2 share CPU 0: from 2 agents on, they split that core, and their sum is not what 2 cores drive",
		"agent 3 shares CPU 1 with the downstream: from 3 agents on, it takes part of the server's core",
	}
	if !reflect.DeepEqual(warnings, want) {
		t.Errorf("warnings\n%q\nwant\n%q", warnings, want)
	}
	if _, w := AgentLayout([]int{3}, [][]int{{0}, {1}, {2}}); len(w) != 0 {
		t.Errorf("agents on cores of their own warned: %q", w)
	}
	if _, w := AgentLayout([]int{2, 3}, [][]int{{0, 1}, {1, 3}}); len(w) != 2 || !strings.Contains(w[0], "share CPU 1") || !strings.Contains(w[1], "agent 2 shares CPU 3") {
		t.Errorf("ranges: warnings %q", w)
	}
}

func TestAgentsMeans(t *testing.T) {
	lv := AgentsLevel{Agents: 2, Via: "http", Rounds: []AgentsRound{{RPS: 100, MergeMs: 1, ShareBytes: 1000}, {RPS: 300, MergeMs: 3, ShareBytes: 3000}}}
	if rps, merge, bytes := lv.Mean(); rps != 200 || merge != 2 || bytes != 2000 {
		t.Errorf("Mean = %v, %v, %v", rps, merge, bytes)
	}
	if rps, _, _ := (AgentsLevel{}).Mean(); rps != 0 {
		t.Errorf("the mean of no round is %v", rps)
	}
	a := Agents{Levels: []AgentsLevel{{Agents: 1, Via: "in-process"}, lv}}
	if a.Of(2, "http") == nil || a.Of(1, "http") != nil || a.Of(1, "in-process") == nil {
		t.Error("Of finds the wrong levels")
	}
}
