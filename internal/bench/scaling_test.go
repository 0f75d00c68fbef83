package bench

import (
	"reflect"
	"strings"
	"testing"
)

func TestCheckLoopCounts(t *testing.T) {
	for _, ok := range [][]int{{1, 2, 3}, {2}, {1, 4}, {64}} {
		if err := CheckLoopCounts(ok); err != nil {
			t.Errorf("CheckLoopCounts(%v): %v", ok, err)
		}
	}
	for _, c := range []struct {
		counts []int
		want   string
	}{
		{nil, "--loops: give the event-loop counts to measure, like 1,2,3"},
		{[]int{0}, "--loops 0: 0 is not a count of 1 to 64 event loops; give counts like 1,2,3"},
		{[]int{1, 65}, "65 is not a count"},
		{[]int{1, 1}, "--loops 1,1: give each count once, in increasing order, like 1,2,3"},
		{[]int{3, 2}, "in increasing order"},
	} {
		if err := CheckLoopCounts(c.counts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("CheckLoopCounts(%v): error %v, want one saying %q", c.counts, err, c.want)
		}
	}
}

func TestLoopCPUs(t *testing.T) {
	cpus := []int{0, 1}
	for n, want := range map[int][]int{1: {0}, 2: {0, 1}, 3: {0, 1}} {
		if got := LoopCPUs(cpus, n); !reflect.DeepEqual(got, want) {
			t.Errorf("LoopCPUs(%v, %d) = %v, want %v", cpus, n, got, want)
		}
	}
	got := LoopCPUs(cpus, 1)
	got[0] = 7
	if cpus[0] != 0 {
		t.Error("LoopCPUs hands out the caller's slice")
	}
	if got := loopPlaces([]int{0, 1}, 3); got != "0,1,0" {
		t.Errorf("3 loops on 0,1 run on %s, want 0,1,0 (the engine's cpus[i %% len])", got)
	}
}

func TestScalingLayout(t *testing.T) {
	layout, warnings := ScalingLayout([]int{1}, []int{0, 1}, []int{1, 2, 3})
	if want := "server on CPU 1; 1 loop on CPU 0; 2 loops on CPU 0,1; 3 loops on CPU 0,1,0"; layout != want {
		t.Errorf("layout %q, want %q", layout, want)
	}
	want := []string{
		"3 loops on 2 CPUs: simulated, loops share cores",
		"the client shares CPU 1 with the server from 2 loops on: they split that core, and the server's figure is not one core's",
	}
	if !reflect.DeepEqual(warnings, want) {
		t.Errorf("warnings\n%q\nwant\n%q", warnings, want)
	}
	// Apart, and as many CPUs as loops: nothing to warn of.
	if _, warnings := ScalingLayout([]int{3}, []int{0, 1, 2}, []int{1, 2, 3}); len(warnings) != 0 {
		t.Errorf("warnings %q for loops on CPUs of their own", warnings)
	}
	// One client CPU for every count, and it is the server's.
	_, warnings = ScalingLayout([]int{0}, []int{0}, []int{1, 2})
	want = []string{
		"2 loops on 1 CPU: simulated, loops share cores",
		"the client shares CPU 0 with the server from 1 loop on: they split that core, and the server's figure is not one core's",
	}
	if !reflect.DeepEqual(warnings, want) {
		t.Errorf("warnings\n%q\nwant\n%q", warnings, want)
	}
}

func TestScalingMeans(t *testing.T) {
	lv := ScalingLevel{Loops: 2, Client: "arena", Rounds: []ScalingRound{
		{RPS: 80000, ClientCPU: 150, ServerCPU: 90, CPUMicros: 18},
		{RPS: 90000, ClientCPU: 160, ServerCPU: 100, CPUMicros: 17},
	}}
	rps, ccpu, scpu, us := lv.Mean()
	if rps != 85000 || ccpu != 155 || scpu != 95 || us != 17.5 {
		t.Errorf("Mean = %v, %v, %v, %v", rps, ccpu, scpu, us)
	}
	if rps, _, _, _ := (ScalingLevel{}).Mean(); rps != 0 {
		t.Errorf("Mean of no round = %v", rps)
	}
	s := Scaling{Levels: []ScalingLevel{{Loops: 1, Client: "arena"}, lv, {Loops: 2, Client: "wrk"}}}
	if got := s.Of(2, "wrk"); got == nil || got.Client != "wrk" || got.Loops != 2 {
		t.Errorf("Of(2, wrk) = %+v", got)
	}
	if got := s.Of(3, "arena"); got != nil {
		t.Errorf("Of(3, arena) = %+v, want nil", got)
	}
}
