package chat

import (
	"fmt"
	"strings"
	"testing"
	"time"

	chatload "github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// rung is one level as study 000 has it: users per room in a number of rooms.
type rung struct{ rooms, users int }

func (r rung) name() string { return fmt.Sprintf("r%d-u%d", r.rooms, r.users) }

func (r rung) group() string {
	if r.rooms == 1 {
		return "1 room"
	}
	return fmt.Sprintf("%d rooms", r.rooms)
}

// seedRungs are the study's 14 levels, in ladder order.
func seedRungs() []rung {
	var out []rung
	for _, u := range []int{10, 20, 30, 40, 50, 60} {
		out = append(out, rung{1, u})
	}
	for _, u := range []int{20, 25, 30, 35} {
		out = append(out, rung{2, u})
	}
	for _, u := range []int{10, 12, 15, 17} {
		out = append(out, rung{4, u})
	}
	return out
}

func scaleRungs() []rung {
	var out []rung
	for _, u := range []int{50, 100, 200, 400, 800, 1600} {
		out = append(out, rung{1, u})
	}
	return out
}

func planOf(t *testing.T, o scenario.Options) scenario.Plan {
	t.Helper()
	plan, err := Scenario{}.Plan(o)
	if err != nil {
		t.Fatalf("Plan(%+v): %v", o, err)
	}
	return plan
}

// driverOf is a level's chat load; it fails the test when the level has another kind of load.
func driverOf(t *testing.T, lv scenario.Level) chatload.Load {
	t.Helper()
	l, ok := lv.Load.(chatload.Load)
	if !ok {
		t.Fatalf("%s: load is %T, want chat.Load", lv.Name, lv.Load)
	}
	return l
}

// checkLevel checks a level's place on the curves and its load.
func checkLevel(t *testing.T, lv scenario.Level, w rung, msgs int, linger time.Duration) {
	t.Helper()
	if lv.Name != w.name() || lv.Group != w.group() || lv.X != float64(w.users) || lv.XName != "users per room" {
		t.Errorf("level %q group %q X %v %q; want %q group %q X %d users per room", lv.Name, lv.Group, lv.X, lv.XName, w.name(), w.group(), w.users)
	}
	if lv.Env != nil || lv.Downstream != nil || lv.Warmup != nil {
		t.Errorf("%s: env %v downstream %v warm-up %v; want none", lv.Name, lv.Env, lv.Downstream, lv.Warmup)
	}
	l := driverOf(t, lv)
	want := chatload.Load{Tag: Tag, Rooms: w.rooms, Users: w.users, Messages: msgs, Period: 10 * time.Millisecond, JoinWait: 2 * time.Second, Linger: linger}
	if l != want {
		t.Errorf("%s: load %+v, want %+v", lv.Name, l, want)
	}
	if got, wantN := l.Deliveries(), int64(w.rooms*w.users*w.users*msgs); got != wantN {
		t.Errorf("%s: %d deliveries, want %d", lv.Name, got, wantN)
	}
	if lv.Feature() != "chat" {
		t.Errorf("%s: feature %q, want chat", lv.Name, lv.Feature())
	}
	if got, wantE := lv.Expected(), 2*time.Second+time.Duration(msgs)*10*time.Millisecond+chatload.DefaultGrace+2*time.Second; got != wantE {
		t.Errorf("%s: expected %s, want %s", lv.Name, got, wantE)
	}
	d := scenario.Describe(lv)
	if d.Name != lv.Name || d.Group != lv.Group || d.X != lv.X || d.XName != lv.XName {
		t.Errorf("%s: described as %+v", lv.Name, d)
	}
	wantStream := results.StreamPlan{Tag: Tag, Path: "/chat", Mode: "websocket", Connections: w.rooms * w.users}
	if len(d.Streams) != 1 || d.Streams[0] != wantStream {
		t.Errorf("%s: streams %+v, want [%+v]", lv.Name, d.Streams, wantStream)
	}
	for _, has := range []string{fmt.Sprintf("%d room(s) × %d users", w.rooms, w.users), fmt.Sprintf("%d messages", msgs), "10ms"} {
		if !strings.Contains(d.Load, has) {
			t.Errorf("%s: load %q does not say %q", lv.Name, d.Load, has)
		}
	}
}

func TestPlanSeed(t *testing.T) {
	cases := []struct {
		name   string
		opts   scenario.Options
		linger time.Duration
	}{
		{"seed", scenario.Options{Preset: "seed"}, 30 * time.Second},
		{"empty preset is seed", scenario.Options{}, 30 * time.Second},
		{"timeout sets the linger", scenario.Options{Timeout: 5 * time.Second}, 5 * time.Second},
		{"duration changes nothing", scenario.Options{Duration: time.Minute}, 30 * time.Second},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			plan := planOf(t, tt.opts)
			want := seedRungs()
			if plan.Preset != "seed" || len(plan.Levels) != len(want) {
				t.Fatalf("preset %q, %d levels; want seed and %d", plan.Preset, len(plan.Levels), len(want))
			}
			if plan.Broken != nil {
				t.Errorf("seed has a Broken: its ladders are the study's, run to the end")
			}
			for i, w := range want {
				checkLevel(t, plan.Levels[i], w, 500, tt.linger)
			}
			notes := strings.Join(plan.Notes, "\n")
			for _, has := range []string{"500 messages", tt.linger.String(), "/chat"} {
				if !strings.Contains(notes, has) {
					t.Errorf("notes %q do not say %q", notes, has)
				}
			}
		})
	}
}

func TestPlanQuick(t *testing.T) {
	for _, o := range []scenario.Options{{Quick: true}, {Preset: "seed", Quick: true}, {Quick: true, Timeout: 3 * time.Second}} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			plan := planOf(t, o)
			seed := planOf(t, scenario.Options{})
			if plan.Preset != "seed" || len(plan.Levels) == 0 || len(plan.Levels) >= len(seed.Levels) {
				t.Fatalf("preset %q, %d levels; want seed and fewer than its %d", plan.Preset, len(plan.Levels), len(seed.Levels))
			}
			linger := 30 * time.Second
			if o.Timeout > 0 {
				linger = o.Timeout
			}
			// Per group: the same room counts as the seed, in ladder order, and at most as
			// many users as the seed's smallest level of that group.
			smallest, largest := map[string]int{}, map[string]int{}
			for _, lv := range seed.Levels {
				l := driverOf(t, lv)
				if _, ok := smallest[lv.Group]; !ok {
					smallest[lv.Group] = l.Users
				}
				largest[lv.Group] = l.Users
			}
			groups := map[string]bool{}
			last := map[string]int{}
			for _, lv := range plan.Levels {
				l := driverOf(t, lv)
				checkLevel(t, lv, rung{l.Rooms, l.Users}, 200, linger)
				groups[lv.Group] = true
				if l.Users > smallest[lv.Group] || l.Users >= largest[lv.Group] {
					t.Errorf("%s: %d users; the seed's %s starts at %d", lv.Name, l.Users, lv.Group, smallest[lv.Group])
				}
				if l.Users <= last[lv.Group] {
					t.Errorf("%s: users not rising in %s", lv.Name, lv.Group)
				}
				last[lv.Group] = l.Users
			}
			if len(groups) != 3 || !groups["1 room"] || !groups["2 rooms"] || !groups["4 rooms"] {
				t.Errorf("quick groups %v, want 1, 2 and 4 rooms", groups)
			}
			if plan.Broken != nil {
				t.Errorf("quick has a Broken")
			}
			if notes := strings.Join(plan.Notes, "\n"); !strings.Contains(notes, "200 messages") {
				t.Errorf("notes %q do not say 200 messages", notes)
			}
		})
	}
}

func TestPlanScale(t *testing.T) {
	for _, o := range []scenario.Options{{Preset: "scale"}, {Preset: "scale", Timeout: 10 * time.Second}} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			plan := planOf(t, o)
			want := scaleRungs()
			if plan.Preset != "scale" || len(plan.Levels) != len(want) {
				t.Fatalf("preset %q, %d levels; want scale and %d", plan.Preset, len(plan.Levels), len(want))
			}
			linger := 30 * time.Second
			if o.Timeout > 0 {
				linger = o.Timeout
			}
			for i, w := range want {
				checkLevel(t, plan.Levels[i], w, 500, linger)
			}
			if plan.Broken == nil {
				t.Fatal("scale has no Broken: its ladder would run past a contender's limit")
			}
			if notes := strings.Join(plan.Notes, "\n"); !strings.Contains(notes, "p99 over 1s") {
				t.Errorf("notes %q do not say where a level breaks", notes)
			}
		})
	}
}

func TestPlanScaleBroken(t *testing.T) {
	tag := func(p99 float64, errs map[string]int64) results.Tag {
		tg := results.Tag{Response: results.Latency{Count: 1000, Mean: p99 / 2, P99: p99}}
		tg.Tag, tg.Errors, tg.Status = Tag, errs, map[string]int64{}
		return tg
	}
	ok := results.Outcome{Status: results.OutcomeOK}
	cases := []struct {
		name   string
		cell   results.Cell
		broken bool
	}{
		{"fast and whole", results.Cell{Outcome: ok, Tags: []results.Tag{tag(20, map[string]int64{})}}, false},
		{"errors map nil", results.Cell{Outcome: ok, Tags: []results.Tag{tag(20, nil)}}, false},
		{"p99 exactly 1 s", results.Cell{Outcome: ok, Tags: []results.Tag{tag(1000, nil)}}, false},
		{"p99 just over 1 s", results.Cell{Outcome: ok, Tags: []results.Tag{tag(1000.5, nil)}}, true},
		{"p99 10 s", results.Cell{Outcome: ok, Tags: []results.Tag{tag(10000, nil)}}, true},
		{"one lost", results.Cell{Outcome: ok, Tags: []results.Tag{tag(20, nil)}, Faults: map[string]int64{results.FaultLost: 1}}, true},
		{"duplicated", results.Cell{Outcome: ok, Tags: []results.Tag{tag(20, nil)}, Faults: map[string]int64{results.FaultDuplicated: 3}}, true},
		{"out of order", results.Cell{Outcome: ok, Tags: []results.Tag{tag(20, nil)}, Faults: map[string]int64{results.FaultReordered: 2}}, true},
		{"leaked", results.Cell{Outcome: ok, Tags: []results.Tag{tag(20, nil)}, Faults: map[string]int64{results.FaultLeaked: 1}}, true},
		{"a member closed", results.Cell{Outcome: ok, Tags: []results.Tag{tag(20, map[string]int64{chatload.FaultClosed: 1})}}, true},
		{"a member could not connect", results.Cell{Outcome: ok, Tags: []results.Tag{tag(20, map[string]int64{chatload.FaultConnect: 1})}}, true},
		{"an error in a second tag", results.Cell{Outcome: ok, Tags: []results.Tag{tag(20, nil), tag(20, map[string]int64{chatload.FaultClosed: 1})}}, true},
		{"ok without tags", results.Cell{Outcome: ok}, false},
		{"crashed", results.Cell{Outcome: results.Outcome{Status: results.OutcomeCrashed}, Tags: []results.Tag{tag(20, nil)}}, true},
		{"unready", results.Cell{Outcome: results.Outcome{Status: results.OutcomeUnready}}, true},
		{"error", results.Cell{Outcome: results.Outcome{Status: results.OutcomeError}}, true},
		{"unsupported", results.Cell{Outcome: results.Outcome{Status: results.OutcomeUnsupported}}, true},
		{"interrupted", results.Cell{Outcome: results.Outcome{Status: results.OutcomeInterrupted}}, true},
	}
	broken := planOf(t, scenario.Options{Preset: "scale"}).Broken
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if got := broken(tt.cell); got != tt.broken {
				t.Errorf("Broken = %v, want %v", got, tt.broken)
			}
		})
	}
}

func TestPlanUnknownPreset(t *testing.T) {
	for _, p := range []string{"nosuch", "default", "Seed", "quick", " seed"} {
		for _, quick := range []bool{false, true} {
			_, err := Scenario{}.Plan(scenario.Options{Preset: p, Quick: quick})
			if err == nil {
				t.Errorf("Plan accepted preset %q (quick %v)", p, quick)
				continue
			}
			for _, w := range []string{`"` + p + `"`, "seed", "scale"} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		}
	}
}

func TestScenarioDescription(t *testing.T) {
	s := Scenario{}
	if s.Name() != "chat" || s.Title() == "" || !strings.Contains(s.Study(), "000") {
		t.Errorf("Name %q Title %q Study %q", s.Name(), s.Title(), s.Study())
	}
	if strings.Join(s.Presets(), ",") != "seed,scale" {
		t.Errorf("presets %v, want seed and scale", s.Presets())
	}
	for _, p := range s.Presets() {
		plan, err := s.Plan(scenario.Options{Preset: p})
		if err != nil {
			t.Errorf("listed preset %q does not plan: %v", p, err)
			continue
		}
		if plan.Preset != p || len(plan.Notes) == 0 {
			t.Errorf("preset %q planned as %q with notes %v", p, plan.Preset, plan.Notes)
		}
		seen := map[string]bool{}
		for _, lv := range plan.Levels {
			if seen[lv.Name] {
				t.Errorf("preset %q: level %q twice", p, lv.Name)
			}
			seen[lv.Name] = true
		}
	}
	var _ scenario.Scenario = s
}

// Deliveries is every member getting every message of its room, its own included.
func TestDeliveries(t *testing.T) {
	cases := []struct {
		rooms, users, messages int
		want                   int64
	}{
		{1, 10, 500, 50000},
		{1, 60, 500, 1800000},
		{2, 35, 500, 1225000},
		{4, 17, 500, 578000},
		{4, 3, 200, 7200},
		{1, 1, 1, 1},
		{3, 0, 500, 0},
		{1, 1600, 500, 1280000000},
		{4, 100000, 500, 20000000000000}, // beyond 32 bits
	}
	for _, c := range cases {
		l := chatload.Load{Tag: Tag, Rooms: c.rooms, Users: c.users, Messages: c.messages}
		if got := l.Deliveries(); got != c.want {
			t.Errorf("%d rooms × %d users, %d messages: %d deliveries, want %d", c.rooms, c.users, c.messages, got, c.want)
		}
	}
}
