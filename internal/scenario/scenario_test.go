package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

func planOf(names ...string) Plan {
	p := Plan{Preset: "seed"}
	for _, n := range names {
		p.Levels = append(p.Levels, Level{Name: n, Load: load.ClosedLoop{Tag: n, Connections: 1, Requests: 1, Duration: time.Second, Timeout: time.Second}})
	}
	return p
}

func levelNames(p Plan) []string {
	var out []string
	for _, l := range p.Levels {
		out = append(out, l.Name)
	}
	return out
}

func TestFilter(t *testing.T) {
	cases := []struct {
		name  string
		names []string
		want  []string
	}{
		{"nil keeps all", nil, []string{"a", "b", "c"}},
		{"empty keeps all", []string{}, []string{"a", "b", "c"}},
		{"one", []string{"b"}, []string{"b"}},
		{"order given, not the plan's", []string{"c", "a"}, []string{"c", "a"}},
		{"all reversed", []string{"c", "b", "a"}, []string{"c", "b", "a"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			orig := planOf("a", "b", "c")
			got, err := orig.Filter(tt.names)
			if err != nil {
				t.Fatalf("Filter(%v): %v", tt.names, err)
			}
			if g := levelNames(got); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("Filter(%v) = %v, want %v", tt.names, g, tt.want)
			}
			if got.Preset != "seed" {
				t.Errorf("preset %q, want seed", got.Preset)
			}
			for _, l := range got.Levels {
				if c, ok := l.Load.(load.ClosedLoop); !ok || c.Tag != l.Name {
					t.Errorf("level %q lost its load", l.Name)
				}
			}
			if g := levelNames(orig); !reflect.DeepEqual(g, []string{"a", "b", "c"}) {
				t.Errorf("Filter changed the original plan: %v", g)
			}
		})
	}
}

func TestFilterUnknown(t *testing.T) {
	cases := []struct {
		names []string
		bad   string
	}{
		{[]string{"zzz"}, "zzz"},
		{[]string{"a", "zzz"}, "zzz"},
		{[]string{"zzz", "a"}, "zzz"},
		{[]string{"A"}, "A"}, // names are exact
	}
	for _, tt := range cases {
		_, err := planOf("a", "b", "c").Filter(tt.names)
		if err == nil {
			t.Errorf("Filter(%v) accepted an unknown level", tt.names)
			continue
		}
		for _, w := range []string{`"` + tt.bad + `"`, "seed", "a, b, c"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Filter(%v) error %q does not contain %q", tt.names, err, w)
			}
		}
	}
}

func TestDescribeOpen(t *testing.T) {
	l := Level{
		Name: "seed", Group: "g", X: 3, XName: "rate", Env: map[string]string{"WORKER_THREADS": "11"},
		Load: load.OpenLoop{Duration: time.Minute, Timeout: 5 * time.Second, Streams: []load.Stream{
			{Tag: "instant", Request: load.Request{Path: "/instant"}, Pacer: load.PerSecond(10)},
			{Tag: "delayed", Request: load.Request{Path: "/delayed"}, Pacer: load.ConstantPacer{Freq: 1, Per: 2 * time.Second}, Connections: 4},
		}},
	}
	got := Describe(l)
	want := results.Level{
		Name: "seed", Group: "g", X: 3, XName: "rate", Env: map[string]string{"WORKER_THREADS": "11"},
		Load: "open loop, 1m0s, request timeout 5s", Duration: 60, Timeout: 5,
		Streams: []results.StreamPlan{
			{Tag: "instant", Path: "/instant", Mode: "open", Rate: 10},
			{Tag: "delayed", Path: "/delayed", Mode: "open", Rate: 0.5, Connections: 4},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Describe(open) =\n %+v\nwant\n %+v", got, want)
	}
}

func TestDescribeClosed(t *testing.T) {
	closed := load.ClosedLoop{Tag: "sleep", Request: load.Request{Path: "/sleep"}, Connections: 200, Requests: 90000, Duration: 145 * time.Second, Timeout: 30 * time.Second, Expect: 45 * time.Second}
	warm := load.ClosedLoop{Tag: "warmup", Request: load.Request{Path: "/sleep"}, Connections: 200, Requests: 10000, Duration: 30 * time.Second, Timeout: 30 * time.Second}
	cases := []struct {
		name       string
		downstream *Downstream
		wantDS     bool
		wantDelay  float64
	}{
		{"no downstream", nil, false, 0},
		{"downstream without delay", &Downstream{}, true, 0},
		{"downstream 50 ms", &Downstream{Delay: 50 * time.Millisecond}, true, 50},
		{"downstream 1.5 ms", &Downstream{Delay: 1500 * time.Microsecond}, true, 1.5},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			l := Level{Name: "sleep-c200", Group: "sleep 100 ms", X: 200, XName: "connections", Downstream: tt.downstream, Load: closed, Warmup: []load.Load{warm}}
			got := Describe(l)
			want := results.Level{
				Name: "sleep-c200", Group: "sleep 100 ms", X: 200, XName: "connections",
				Downstream: tt.wantDS, DownstreamDelayMs: tt.wantDelay,
				Load:    "closed loop, 200 connections, 90000 requests (at most 2m25s), request timeout 30s",
				Timeout: 30, // and no planned length: a count of requests takes what it takes
				Streams: []results.StreamPlan{{Tag: "sleep", Path: "/sleep", Mode: "closed", Connections: 200, Requests: 90000}},
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Describe(closed) =\n %+v\nwant\n %+v", got, want)
			}
		})
	}
}

func TestExpected(t *testing.T) {
	open := load.OpenLoop{Duration: time.Minute, Timeout: 10 * time.Second}
	drained := open
	drained.Drain = 12 * time.Second
	closed := load.ClosedLoop{Requests: 100, Duration: 145 * time.Second, Timeout: time.Second}
	expect := closed
	expect.Expect = 45 * time.Second
	warm := load.ClosedLoop{Requests: 10, Duration: 30 * time.Second, Timeout: time.Second}
	cases := []struct {
		name string
		l    Level
		want time.Duration
	}{
		{"open", Level{Load: open}, time.Minute},
		{"open with drain", Level{Load: drained}, 72 * time.Second},
		{"open with drain and warm-up: a warm-up's bound is no estimate", Level{Load: drained, Warmup: []load.Load{warm}}, 72 * time.Second},
		{"closed with an expectation: it, not the bound", Level{Load: expect}, 45 * time.Second},
		{"closed without one: its time bound", Level{Load: closed}, 145 * time.Second},
		{"closed with an expectation and warm-up", Level{Load: expect, Warmup: []load.Load{warm}}, 45 * time.Second},
		{"closed without one, with warm-up", Level{Load: closed, Warmup: []load.Load{warm}}, 145 * time.Second},
	}
	for _, tt := range cases {
		if got := tt.l.Expected(); got != tt.want {
			t.Errorf("%s: Expected() = %s, want %s", tt.name, got, tt.want)
		}
	}
}

func cell(contender, level string, outcomes []string, tags ...results.TagSummary) results.CellSummary {
	return results.CellSummary{Contender: contender, Level: level, Repeats: len(outcomes), Outcomes: outcomes, Tags: tags}
}

func tagWith(name string, count int64, p99 float64) results.TagSummary {
	return results.TagSummary{Tag: name, Merged: results.Latency{Count: count, P99: p99}}
}

func TestSummariesTag(t *testing.T) {
	ok, crashed := results.OutcomeOK, results.OutcomeCrashed
	run := &results.Run{Summary: []results.CellSummary{
		cell("a", "l1", []string{ok}, tagWith("x", 10, 1), tagWith("y", 10, 2)),
		cell("a", "l2", []string{crashed}, tagWith("x", 10, 3)),
		cell("a", "l3", []string{crashed, ok}, tagWith("x", 10, 4)),
		cell("a", "l4", []string{ok}, tagWith("x", 0, 0)),
		cell("a", "l5", []string{results.OutcomeUnready, results.OutcomeInterrupted}, tagWith("x", 10, 5)),
		cell("a", "l6", nil, tagWith("x", 10, 6)),
		cell("b", "l1", []string{ok}, tagWith("x", 10, 7)),
	}}
	idx := Index(run)
	cases := []struct {
		contender, level, tag string
		ok                    bool
		p99                   float64
	}{
		{"a", "l1", "x", true, 1},
		{"a", "l1", "y", true, 2},
		{"a", "l1", "z", false, 0},
		{"a", "l2", "x", false, 0}, // no repeat ended ok
		{"a", "l3", "x", true, 4},  // one repeat ok is enough
		{"a", "l4", "x", false, 0}, // ok, but no answers
		{"a", "l5", "x", false, 0},
		{"a", "l6", "x", false, 0}, // no outcomes at all
		{"b", "l1", "x", true, 7},
		{"b", "l2", "x", false, 0},
		{"c", "l1", "x", false, 0},
	}
	for _, tt := range cases {
		got, ok := idx.Tag(tt.contender, tt.level, tt.tag)
		if ok != tt.ok || got.Merged.P99 != tt.p99 {
			t.Errorf("Tag(%s, %s, %s) = p99 %v, %v; want %v, %v", tt.contender, tt.level, tt.tag, got.Merged.P99, ok, tt.p99, tt.ok)
		}
		if !ok && !reflect.DeepEqual(got, results.TagSummary{}) {
			t.Errorf("Tag(%s, %s, %s) not found but returned %+v", tt.contender, tt.level, tt.tag, got)
		}
	}
}

func TestIndex(t *testing.T) {
	if idx := Index(&results.Run{}); len(idx) != 0 {
		t.Errorf("Index(empty) = %v", idx)
	}
	run := &results.Run{Summary: []results.CellSummary{
		cell("a", "l1", []string{"ok"}), cell("a", "l2", []string{"ok"}), cell("b", "l1", []string{"ok"}),
	}}
	idx := Index(run)
	if len(idx) != 2 || len(idx["a"]) != 2 || len(idx["b"]) != 1 || idx["a"]["l2"].Level != "l2" {
		t.Errorf("Index = %v", idx)
	}
}

func TestFirstPresent(t *testing.T) {
	idx := Index(&results.Run{Summary: []results.CellSummary{
		cell("spring-webflux", "l", []string{results.OutcomeOK}),
		cell("spring-mvc", "l", []string{results.OutcomeCrashed}),
	}})
	cases := []struct {
		names []string
		want  string
		ok    bool
	}{
		{[]string{"netty", "spring-webflux"}, "spring-webflux", true},
		{[]string{"spring-webflux", "spring-mvc"}, "spring-webflux", true},
		{[]string{"spring-mvc", "spring-webflux"}, "spring-mvc", true}, // present, even if it crashed
		{[]string{"netty"}, "", false},
		{nil, "", false},
	}
	for _, tt := range cases {
		got, ok := idx.FirstPresent(tt.names...)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FirstPresent(%v) = %q, %v; want %q, %v", tt.names, got, ok, tt.want, tt.ok)
		}
	}
	if got, ok := (Summaries{}).FirstPresent("a"); ok || got != "" {
		t.Errorf("empty FirstPresent = %q, %v", got, ok)
	}
}

func TestWithin(t *testing.T) {
	cases := []struct {
		got, want, frac float64
		in              bool
	}{
		{100, 100, 0.10, true},
		{110, 100, 0.10, true},
		{90, 100, 0.10, true},
		{110.01, 100, 0.10, false},
		{89.99, 100, 0.10, false},
		{125, 100, 0.25, true},
		{75, 100, 0.25, true},
		{126, 100, 0.25, false},
		{100, 100, 0, true},
		{100.001, 100, 0, false},
		{0, 0, 0.10, false},   // nothing to be near
		{-1, -1, 0.10, false}, // nor a negative want
		{0, 100, 0.10, false},
		{0, 100, 1, true},
	}
	for _, tt := range cases {
		if got := Within(tt.got, tt.want, tt.frac); got != tt.in {
			t.Errorf("Within(%v, %v, %v) = %v, want %v", tt.got, tt.want, tt.frac, got, tt.in)
		}
	}
}

// --env sets a variable for every level over the preset's, leaves the plan it came from as it
// was, and says so in the notes.
func TestWithEnv(t *testing.T) {
	orig := planOf("a", "b")
	orig.Levels[0].Env = map[string]string{"WORKER_THREADS": "200", "BACKPRESSURE": "on"}
	got := orig.WithEnv(map[string]string{"WORKER_THREADS": "11"})
	if w := got.Levels[0].Env; w["WORKER_THREADS"] != "11" || w["BACKPRESSURE"] != "on" {
		t.Errorf("level a env %v; want WORKER_THREADS 11 over the preset's, BACKPRESSURE kept", w)
	}
	if w := got.Levels[1].Env; !reflect.DeepEqual(w, map[string]string{"WORKER_THREADS": "11"}) {
		t.Errorf("level b env %v", w)
	}
	if orig.Levels[0].Env["WORKER_THREADS"] != "200" || orig.Levels[1].Env != nil || len(orig.Notes) != 0 {
		t.Errorf("WithEnv changed the plan it came from: %+v", orig)
	}
	if len(got.Notes) != 1 || !strings.Contains(got.Notes[0], "--env") || !strings.Contains(got.Notes[0], "WORKER_THREADS=11") {
		t.Errorf("notes %v", got.Notes)
	}
	if same := orig.WithEnv(nil); len(same.Notes) != 0 || same.Levels[0].Env["WORKER_THREADS"] != "200" {
		t.Errorf("no --env changed the plan: %+v", same)
	}
}

func TestCombine(t *testing.T) {
	h, f, p, u := results.ClaimHolds, results.ClaimFails, results.ClaimPartly, results.ClaimUntested
	cases := []struct {
		parts []string
		want  string
	}{
		{[]string{h, h}, h}, {[]string{f, f}, f}, {[]string{h, f}, p}, {[]string{p}, p},
		{[]string{u, u}, u}, {nil, u},
		{[]string{h, u}, results.ClaimHoldsWhereTested}, // a part with no evidence is never held
		{[]string{f, u}, f},
	}
	for _, tt := range cases {
		var parts []Part
		for i, v := range tt.parts {
			parts = append(parts, Part{Verdict: v, Why: fmt.Sprintf("part %d", i)})
		}
		c := Combine(results.Claim{ID: "x"}, parts...)
		if c.Verdict != tt.want || c.ID != "x" {
			t.Errorf("Combine(%v) = %s, want %s", tt.parts, c.Verdict, tt.want)
		}
		allSame := !slices.ContainsFunc(tt.parts, func(v string) bool { return v != c.Verdict })
		for i, v := range tt.parts {
			want := fmt.Sprintf("part %d", i)
			if v == u && !allSame { // a claim whose every part is untested says so once
				want = "untested: " + want
			}
			if !strings.Contains(c.Why, want) {
				t.Errorf("Combine(%v) why %q does not say %q", tt.parts, c.Why, want)
			}
		}
	}
	if c := Combine(results.Claim{}, Part{results.ClaimNotShown, "a tie"}, Part{results.ClaimNotShown, "another"}); c.Why != "a tie; another" {
		t.Errorf("every part not shown: the claim says it once, got %q", c.Why)
	}
	for _, tt := range []struct {
		passed, of int
		want       string
	}{{0, 0, u}, {3, 3, h}, {0, 3, f}, {1, 3, p}} {
		if got := Count(tt.passed, tt.of); got != tt.want {
			t.Errorf("Count(%d, %d) = %s, want %s", tt.passed, tt.of, got, tt.want)
		}
	}
}
