package sleep

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// wantLevel is one level as study 001 has it.
type wantLevel struct {
	name, group, tag, path string
	conns                  int
	delay                  time.Duration // 0: no downstream
}

func seedLevels() []wantLevel {
	var out []wantLevel
	for _, c := range []int{200, 400, 800, 1600, 2600} {
		out = append(out, wantLevel{fmt.Sprintf("sleep-c%d", c), "sleep 100 ms", "sleep", "/sleep", c, 0})
	}
	for _, c := range []int{200, 400, 800, 1600, 2600} {
		out = append(out, wantLevel{fmt.Sprintf("data50-c%d", c), "downstream 50 ms", "data", "/data/1", c, 50 * time.Millisecond})
	}
	return out
}

func TestPlan(t *testing.T) {
	cases := []struct {
		name     string
		opts     scenario.Options
		requests int64
		timeout  time.Duration
		duration time.Duration // 0: not overridden, the level's own bound
	}{
		{"seed", scenario.Options{Preset: "seed"}, 90000, 30 * time.Second, 0},
		{"empty preset is seed", scenario.Options{}, 90000, 30 * time.Second, 0},
		{"quick", scenario.Options{Quick: true}, 10000, 30 * time.Second, 0},
		{"duration override", scenario.Options{Duration: 20 * time.Second}, 90000, 30 * time.Second, 20 * time.Second},
		{"timeout override", scenario.Options{Timeout: 2 * time.Second}, 90000, 2 * time.Second, 0},
		{"both overrides, quick", scenario.Options{Quick: true, Duration: 7 * time.Second, Timeout: 3 * time.Second}, 10000, 3 * time.Second, 7 * time.Second},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := Scenario{}.Plan(tt.opts)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			want := seedLevels()
			if plan.Preset != "seed" || len(plan.Levels) != len(want) {
				t.Fatalf("preset %q, %d levels; want seed and %d", plan.Preset, len(plan.Levels), len(want))
			}
			if len(plan.Notes) == 0 {
				t.Errorf("no notes")
			}
			for i, w := range want {
				lv := plan.Levels[i]
				if lv.Name != w.name || lv.Group != w.group || lv.X != float64(w.conns) || lv.XName != "connections" {
					t.Errorf("level %d = %q group %q X %v %q; want %q group %q X %d connections", i, lv.Name, lv.Group, lv.X, lv.XName, w.name, w.group, w.conns)
				}
				c, ok := lv.Load.(load.ClosedLoop)
				if !ok {
					t.Fatalf("%s: load %T, want a closed loop", lv.Name, lv.Load)
				}
				if _, set := lv.Env["WORKER_THREADS"]; set {
					t.Errorf("%s sets WORKER_THREADS; each stack keeps its own pool", lv.Name)
				}
				if c.Tag != w.tag || c.Request.Path != w.path || c.Connections != w.conns || c.Requests != tt.requests || c.Timeout != tt.timeout {
					t.Errorf("%s: closed %s %s c=%d n=%d timeout %s; want %s %s c=%d n=%d timeout %s",
						lv.Name, c.Tag, c.Request.Path, c.Connections, c.Requests, c.Timeout, w.tag, w.path, w.conns, tt.requests, tt.timeout)
				}
				if c.Duration <= 0 || c.Duration > 5*time.Minute {
					t.Errorf("%s: time bound %s, want in (0, 5m]", lv.Name, c.Duration)
				}
				if tt.duration > 0 && c.Duration != tt.duration {
					t.Errorf("%s: time bound %s, want the override %s", lv.Name, c.Duration, tt.duration)
				}
				// Unless cut short on purpose, the bound leaves room for the requests at
				// the pace of 200 threads, which is what the level expects.
				wait := 100 * time.Millisecond
				if w.delay > 0 {
					wait = w.delay
				}
				wantDrain := time.Duration(tt.requests/200) * wait
				if lv.Expected() != wantDrain {
					t.Errorf("%s: expected %s, want %s", lv.Name, lv.Expected(), wantDrain)
				}
				if tt.duration == 0 && c.Duration < lv.Expected() {
					t.Errorf("%s: time bound %s is shorter than the planned %s", lv.Name, c.Duration, lv.Expected())
				}
				wu, ok := lv.Warmup[0].(load.ClosedLoop)
				if !ok {
					t.Fatalf("%s: warm-up %T, want a closed loop", lv.Name, lv.Warmup[0])
				}
				if wu.Tag == c.Tag || wu.Request.Path != w.path || wu.Connections != w.conns || wu.Requests <= 0 || wu.Requests > c.Requests || wu.Duration <= 0 || wu.Timeout != tt.timeout {
					t.Errorf("%s: warm-up %s %s c=%d n=%d bound %s timeout %s", lv.Name, wu.Tag, wu.Request.Path, wu.Connections, wu.Requests, wu.Duration, wu.Timeout)
				}
				switch {
				case w.delay == 0 && lv.Downstream != nil:
					t.Errorf("%s has a downstream (%+v), want none", lv.Name, *lv.Downstream)
				case w.delay > 0 && (lv.Downstream == nil || lv.Downstream.Delay != w.delay):
					t.Errorf("%s: downstream %+v, want delay %s", lv.Name, lv.Downstream, w.delay)
				}
			}
		})
	}
}

func TestPlanUnknownPreset(t *testing.T) {
	for _, p := range []string{"nosuch", "default", "Seed"} {
		_, err := Scenario{}.Plan(scenario.Options{Preset: p})
		if err == nil {
			t.Errorf("Plan accepted preset %q", p)
			continue
		}
		for _, w := range []string{`"` + p + `"`, "seed"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not contain %q", err, w)
			}
		}
	}
}

func TestScenarioDescription(t *testing.T) {
	s := Scenario{}
	if s.Name() != "sleep" || s.Title() == "" || !strings.Contains(s.Study(), "001") {
		t.Errorf("Name %q Title %q Study %q", s.Name(), s.Title(), s.Study())
	}
	for _, p := range s.Presets() {
		if _, err := s.Plan(scenario.Options{Preset: p}); err != nil {
			t.Errorf("listed preset %q does not plan: %v", p, err)
		}
	}
}

// curve is one contender's mean latency (ms) per connection count, for one test:
// "sleep" or "data50".
type curve struct {
	name    string
	prefix  string
	means   map[int]float64
	outcome string // "" : ok
}

// tagOf is the tag a curve's test records.
func tagOf(cv curve) string { return map[string]string{"sleep": "sleep", "data50": "data"}[cv.prefix] }

func summariesOf(cv curve) []results.CellSummary {
	outcome := cv.outcome
	if outcome == "" {
		outcome = results.OutcomeOK
	}
	var out []results.CellSummary
	for _, c := range []int{200, 400, 800, 1600, 2600} { // in the plan's order
		m, ok := cv.means[c]
		if !ok {
			continue
		}
		rps := float64(c) / m * 1000
		out = append(out, results.CellSummary{
			Contender: cv.name, Level: fmt.Sprintf("%s-c%d", cv.prefix, c), Repeats: 1, Outcomes: []string{outcome},
			Tags: []results.TagSummary{{Tag: tagOf(cv), Merged: results.Latency{Count: 1000, Mean: m, P50: m, P99: m * 1.5}, RPS: results.Spread{Median: rps, Min: rps, Max: rps}}},
		})
	}
	return out
}

// cellsOf are a curve's cells, repeats of them a level, each a tenth of a percent apart:
// what orders beyond the noise are judged on (a closed loop of c connections each waiting m
// serves c/m requests/s).
func cellsOf(cv curve, repeats int) []results.Cell {
	outcome := cv.outcome
	if outcome == "" {
		outcome = results.OutcomeOK
	}
	var out []results.Cell
	for _, c := range []int{200, 400, 800, 1600, 2600} {
		m, ok := cv.means[c]
		if !ok {
			continue
		}
		for r := 1; r <= repeats; r++ {
			mr := m * (1 + 0.001*float64(r-1))
			out = append(out, results.Cell{Contender: cv.name, Level: fmt.Sprintf("%s-c%d", cv.prefix, c), Repeat: r, Outcome: results.Outcome{Status: outcome},
				Tags: []results.Tag{{TagStats: results.TagStats{Tag: tagOf(cv), Completed: 1000}, RPS: float64(c) / mr * 1000, Response: results.Latency{Count: 1000, Mean: mr}}}})
		}
	}
	return out
}

// runOf is a run of the curves on one server core, three repeats a level (a reproduction's),
// contenders listed in order of first appearance.
func runOf(curves ...curve) *results.Run { return repeated(3, curves...) }

// repeated is runOf with repeats cells a level.
func repeated(repeats int, curves ...curve) *results.Run {
	run := &results.Run{Env: results.Environment{ServerCPUs: "1"}}
	seen := map[string]bool{}
	for _, cv := range curves {
		if !seen[cv.name] {
			seen[cv.name] = true
			run.Contenders = append(run.Contenders, results.Contender{Name: cv.name})
		}
		run.Summary = append(run.Summary, summariesOf(cv)...)
		run.Cells = append(run.Cells, cellsOf(cv, repeats)...)
	}
	return run
}

func judge(curves ...curve) ([]results.Verdict, map[string]results.Claim) {
	verdicts, claims := Scenario{}.Judge(runOf(curves...))
	byID := map[string]results.Claim{}
	for _, c := range claims {
		byID[c.ID] = c
	}
	return verdicts, byID
}

func flatCurve(name, prefix string, ms float64) curve {
	return curve{name: name, prefix: prefix, means: map[int]float64{200: ms, 400: ms, 800: ms, 1600: ms, 2600: ms}}
}

// queueing is a 200-thread pool: wait × c/200 above 200 connections.
func queueing(name, prefix string, wait float64) curve {
	m := map[int]float64{}
	for _, c := range []int{200, 400, 800, 1600, 2600} {
		m[c] = wait * float64(max(c, 200)) / 200
	}
	return curve{name: name, prefix: prefix, means: m}
}

func TestJudgeVerdicts(t *testing.T) {
	cases := []struct {
		name    string
		cv      curve
		group   string
		verdict string
		whyHas  []string
	}{
		{"flat everywhere", flatCurve("c", "sleep", 101), "sleep 100 ms", "flat to 2600", []string{"200: 101 ms", "2600: 101 ms"}},
		{"thread pool queues", queueing("c", "sleep", 101), "sleep 100 ms", "flat to 200, then queues", []string{"200: 101 ms", "400: 202 ms", "2600: 1.31 s"}},
		{"queues from the start", flatCurve("c", "sleep", 150), "sleep 100 ms", "queues", []string{"200: 150 ms"}},
		{"exactly 1.2 × the wait is flat", flatCurve("c", "sleep", 120), "sleep 100 ms", "flat to 2600", nil},
		{"just over 1.2 × the wait", flatCurve("c", "sleep", 120.5), "sleep 100 ms", "queues", nil},
		{"flat to 800", curve{"c", "sleep", map[int]float64{200: 101, 400: 102, 800: 110, 1600: 200, 2600: 330}, ""}, "sleep 100 ms", "flat to 800, then queues", nil},
		{"a recovery after queueing does not count", curve{"c", "sleep", map[int]float64{200: 101, 400: 300, 800: 101, 1600: 101, 2600: 101}, ""}, "sleep 100 ms", "flat to 200, then queues", nil},
		{"only some levels run", curve{"c", "sleep", map[int]float64{200: 101, 400: 101}, ""}, "sleep 100 ms", "flat to 400", []string{"200: 101 ms, 400: 101 ms"}},
		{"a level skipped in between", curve{"c", "sleep", map[int]float64{200: 101, 1600: 101}, ""}, "sleep 100 ms", "flat to 1600", nil},
		{"50 ms downstream flat", flatCurve("c", "data50", 52), "downstream 50 ms", "flat to 2600", []string{"200: 52 ms"}},
		{"50 ms wait: 60 ms is flat", flatCurve("c", "data50", 60), "downstream 50 ms", "flat to 2600", nil},
		{"50 ms wait: 61 ms is not", flatCurve("c", "data50", 61), "downstream 50 ms", "queues", nil},
		{"50 ms downstream queues", queueing("c", "data50", 51), "downstream 50 ms", "flat to 200, then queues", []string{"800: 204 ms"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			verdicts, _ := judge(tt.cv)
			if len(verdicts) != 1 {
				t.Fatalf("%d verdicts %+v, want 1", len(verdicts), verdicts)
			}
			v := verdicts[0]
			if v.Contender != "c" || v.Level != tt.group || v.Verdict != tt.verdict {
				t.Fatalf("verdict %+v, want %s at %s", v, tt.verdict, tt.group)
			}
			for _, w := range tt.whyHas {
				if !strings.Contains(v.Why, w) {
					t.Errorf("why %q does not contain %q", v.Why, w)
				}
			}
		})
	}
}

// A client-bound level is no verdict on the server: left out of the curve, and named; a
// curve of nothing else is inconclusive.
func TestJudgeClientBoundLevels(t *testing.T) {
	run := runOf(curve{"c", "sleep", map[int]float64{200: 101, 400: 101, 800: 101, 1600: 900}, ""})
	for i := range run.Summary {
		if run.Summary[i].Level == levelName(tests[0], 1600) {
			run.Summary[i].ClientBnd = true
		}
	}
	verdicts, _ := Scenario{}.Judge(run)
	if len(verdicts) != 1 || verdicts[0].Verdict != "flat to 800" || !strings.Contains(verdicts[0].Why, "client-bound at 1600 connections: not judged") {
		t.Fatalf("verdicts %+v; want flat to 800, 1600 not judged", verdicts)
	}
	for i := range run.Summary {
		run.Summary[i].ClientBnd = true
	}
	verdicts, claims := Scenario{}.Judge(run)
	if len(verdicts) != 1 || verdicts[0].Verdict != "inconclusive (client-bound)" {
		t.Fatalf("verdicts %+v; want inconclusive", verdicts)
	}
	for _, c := range claims {
		if c.Verdict != results.ClaimUntested {
			t.Errorf("claim %s counted client-bound levels: %+v", c.ID, c)
		}
	}
}

// Levels that did not end ok say nothing about flatness.
func TestJudgeVerdictSkipsFailedLevels(t *testing.T) {
	run := runOf(curve{"c", "sleep", map[int]float64{200: 101, 400: 101, 800: 101}, ""})
	run.Summary = append(run.Summary, summariesOf(curve{"c", "sleep", map[int]float64{1600: 30000, 2600: 30000}, results.OutcomeCrashed})...)
	verdicts, _ := Scenario{}.Judge(run)
	if len(verdicts) != 1 || verdicts[0].Verdict != "flat to 800" || strings.Contains(verdicts[0].Why, "1600") {
		t.Fatalf("verdicts %+v, want one: flat to 800, without 1600", verdicts)
	}

	allCrashed := runOf(curve{"c", "sleep", map[int]float64{200: 101}, results.OutcomeCrashed})
	if verdicts, _ := (Scenario{}).Judge(allCrashed); len(verdicts) != 0 {
		t.Fatalf("verdicts %+v for a contender with nothing measured, want none", verdicts)
	}
}

// One verdict per contender and test, contenders in the run's order, sleep before data50.
func TestJudgeVerdictOrder(t *testing.T) {
	run := runOf(
		flatCurve("netty", "data50", 51), queueing("spring-mvc", "sleep", 101),
		flatCurve("netty", "sleep", 101), queueing("spring-mvc", "data50", 51),
		flatCurve("spring-webflux", "sleep", 102),
	)
	run.Contenders = append(run.Contenders, results.Contender{Name: "never-ran"})
	verdicts, _ := Scenario{}.Judge(run)
	var got []string
	for _, v := range verdicts {
		got = append(got, v.Contender+"/"+v.Level+"="+v.Verdict)
	}
	want := []string{
		"netty/sleep 100 ms=flat to 2600", "netty/downstream 50 ms=flat to 2600",
		"spring-mvc/sleep 100 ms=flat to 200, then queues", "spring-mvc/downstream 50 ms=flat to 200, then queues",
		"spring-webflux/sleep 100 ms=flat to 2600",
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("verdicts\n %s\nwant\n %s", strings.Join(got, "; "), strings.Join(want, "; "))
	}
}

func at200(name, prefix string, ms float64) curve {
	return curve{name: name, prefix: prefix, means: map[int]float64{200: ms}}
}

func TestJudgeClaimA(t *testing.T) {
	cases := []struct {
		name    string
		curves  []curve
		verdict string
		whyHas  []string
	}{
		{"both 101 ms", []curve{at200("spring-mvc", "sleep", 101), at200("netty", "sleep", 101)}, "holds", []string{"spring-mvc 101 ms", "netty 101 ms"}},
		{"both near, a little apart", []curve{at200("spring-mvc", "sleep", 104), at200("netty", "sleep", 112)}, "holds", nil},
		{"falls back to spring-webflux", []curve{at200("spring-mvc", "sleep", 101), at200("spring-webflux", "sleep", 102)}, "holds", []string{"spring-webflux 102 ms"}},
		{"netty preferred to spring-webflux", []curve{at200("spring-mvc", "sleep", 101), at200("netty", "sleep", 200), at200("spring-webflux", "sleep", 101)}, "partly", []string{"netty 200 ms mean, about 101 ms: median 200.4 ms, 93 % interval 200–200.8 (5 repeats), wholly outside 101 ± 15 %"}},
		{"near the wait but apart", []curve{at200("spring-mvc", "sleep", 101), at200("netty", "sleep", 125)}, "partly", []string{"alike: spring-mvc's mean against netty's: ratio 0.808, 90 % interval 0.806–0.81 (5 against 5 repeats), wholly outside ±10 % (0.909–1.1) (arena's choice"}},
		{"both just over 115 ms", []curve{at200("spring-mvc", "sleep", 118), at200("netty", "sleep", 118)}, "partly", nil},
		{"tomcat queues at 200", []curve{at200("spring-mvc", "sleep", 200), at200("netty", "sleep", 101)}, "partly", []string{"spring-mvc 200 ms"}},
		{"both queue alike", []curve{at200("spring-mvc", "sleep", 200), at200("netty", "sleep", 205)}, "partly", nil},
		{"both slow and apart", []curve{at200("spring-mvc", "sleep", 200), at200("netty", "sleep", 300)}, "fails", nil},
		{"netty slow", []curve{at200("spring-mvc", "sleep", 101), at200("netty", "sleep", 140)}, "partly", nil},
		{"spring-mvc missing", []curve{at200("netty", "sleep", 101)}, "untested", []string{"sleep-c200"}},
		{"netty and spring-webflux missing", []curve{at200("spring-mvc", "sleep", 101)}, "untested", nil},
		{"spring-mvc ran other levels only", []curve{{"spring-mvc", "sleep", map[int]float64{400: 200}, ""}, at200("netty", "sleep", 101)}, "untested", nil},
		{"only the downstream test", []curve{at200("spring-mvc", "data50", 51), at200("netty", "data50", 51)}, "untested", nil},
		{"spring-mvc crashed", []curve{{"spring-mvc", "sleep", map[int]float64{200: 101}, results.OutcomeCrashed}, at200("netty", "sleep", 101)}, "untested", nil},
		{"nobody", nil, "untested", nil},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			// five repeats: "about 101 ms" is judged on its median's interval, which 5 repeats
			// give at 94 % ([min, max]) and 3 do not (TestClaimANeedsFiveRepeatsForTheWait)
			claims := map[string]results.Claim{}
			_, cs := Scenario{}.Judge(repeated(5, tt.curves...))
			for _, c := range cs {
				claims[c.ID] = c
			}
			c, ok := claims["a"]
			if !ok {
				t.Fatalf("no claim a in %v", claims)
			}
			if c.Verdict != tt.verdict {
				t.Fatalf("claim a: %s (%s), want %s", c.Verdict, c.Why, tt.verdict)
			}
			for _, w := range tt.whyHas {
				if !strings.Contains(c.Why, w) {
					t.Errorf("why %q does not contain %q", c.Why, w)
				}
			}
			if c.Text == "" || c.Why == "" {
				t.Errorf("claim a: text %q why %q", c.Text, c.Why)
			}
		})
	}
}

// at is a curve with means at 200, 400 and 800 connections.
func at(name, prefix string, c200, c400, c800 float64) curve {
	return curve{name: name, prefix: prefix, means: map[int]float64{200: c200, 400: c400, 800: c800}}
}

// The study's own figures: at 200 connections both 101 ms, at 800 Tomcat 111 ms and Netty
// 103 ms (seeds/001, its table).
func studys(prefix string) []curve {
	return []curve{
		{"spring-mvc", prefix, map[int]float64{200: 101, 800: 111}, ""},
		{"netty", prefix, map[int]float64{200: 101, 800: 103}, ""},
	}
}

func TestJudgeClaimsGap(t *testing.T) {
	cases := []struct {
		name    string
		id      string
		curves  []curve
		verdict string
		whyHas  []string
	}{
		// Claim b: the 100 ms sleep.

		{"b holds, a 200-thread pool against an event loop", "b", []curve{queueing("spring-mvc", "sleep", 100), flatCurve("netty", "sleep", 101)}, "holds", nil},
		{"b netty at 121 ms is not near", "b", []curve{at("spring-mvc", "sleep", 101, 200, 400), at("netty", "sleep", 101, 101, 121)}, "partly", []string{"netty within 20 % of the wait at 1 of 2 levels"}},
		// Tomcat as fast as Netty: behind and growing are not shown, neither failed (the old
		// rule: partly); 4 % behind on tight repeats is shown.
		{"b tomcat keeps up: a tie", "b", []curve{at("spring-mvc", "sleep", 101, 101, 103), at("netty", "sleep", 101, 101, 103)}, "holds where tested", []string{"not shown: spring-mvc behind beyond the noise at 0 of 2 levels, ahead at 0", "not separated: the repeats overlap"}},
		{"b tomcat 4 % behind on tight repeats", "b", []curve{at("spring-mvc", "sleep", 101, 105, 108), at("netty", "sleep", 101, 101, 103)}, "holds", []string{"c=400 105.1 vs 101.1, complete separation, 3 against 3: 1 in 20 by chance"}},
		{"b the gap shrinks", "b", []curve{at("spring-mvc", "sleep", 150, 200, 110), at("netty", "sleep", 101, 101, 101)}, "partly", []string{"the gap 49 ms at 200 connections, 9.00 ms at 800"}},
		{"b both queue alike: nothing of it holds", "b", []curve{at("spring-mvc", "sleep", 101, 200, 400), at("netty", "sleep", 101, 200, 400)}, "fails", nil},
		{"b only 200 measured", "b", []curve{at200("spring-mvc", "sleep", 101), at200("netty", "sleep", 101)}, "untested", []string{"above 200 connections"}},
		{"b one level above 200 and none below: growth untested", "b", []curve{{"spring-mvc", "sleep", map[int]float64{800: 130}, ""}, {"netty", "sleep", map[int]float64{800: 103}, ""}}, "holds where tested", []string{"untested: whether the gap grows"}},
		{"b falls back to spring-webflux", "b", []curve{queueing("spring-mvc", "sleep", 100), flatCurve("spring-webflux", "sleep", 101)}, "holds", []string{"spring-webflux"}},
		{"b netty preferred to spring-webflux", "b", []curve{queueing("spring-mvc", "sleep", 100), flatCurve("netty", "sleep", 300), flatCurve("spring-webflux", "sleep", 101)}, "partly", []string{"netty 300 ms"}},
		{"b netty missing", "b", []curve{queueing("spring-mvc", "sleep", 100)}, "untested", nil},
		{"b spring-mvc missing", "b", []curve{flatCurve("netty", "sleep", 101)}, "untested", nil},
		{"b not decided by the downstream test", "b", []curve{queueing("spring-mvc", "data50", 50), flatCurve("netty", "data50", 51)}, "untested", nil},
		// Claim c: the 50 ms downstream, by less than the sleep.
		{"c holds", "c", []curve{at("spring-mvc", "data50", 51, 100, 200), at("netty", "data50", 51, 51, 52), at("spring-mvc", "sleep", 101, 200, 400), at("netty", "sleep", 101, 101, 103)},
			"holds", []string{"at 800 connections the gap is 148 ms against 297 ms with the sleep"}},
		{"c the sleep test not run: smaller is untested", "c", []curve{at("spring-mvc", "data50", 51, 100, 200), at("netty", "data50", 51, 51, 52)}, "holds where tested", []string{"untested: the sleep test's gap"}},
		{"c a larger gap than the sleep's", "c", []curve{at("spring-mvc", "data50", 51, 300, 500), at("netty", "data50", 51, 51, 52), at("spring-mvc", "sleep", 101, 200, 400), at("netty", "sleep", 101, 101, 103)}, "partly", nil},
		{"c tomcat keeps up: not shown, never failed", "c", []curve{at("spring-mvc", "data50", 51, 51, 52), at("netty", "data50", 51, 51, 52)}, "not shown", nil}, // the old rule: fails
		{"c tomcat ahead", "c", []curve{at("spring-mvc", "data50", 51, 45, 46), at("netty", "data50", 51, 51, 52)}, "fails", []string{"the other way"}},
		{"c not decided by the sleep test", "c", []curve{at("spring-mvc", "sleep", 101, 200, 400), at("netty", "sleep", 101, 101, 103)}, "untested", nil},
		{"c crashed levels are not measured", "c", []curve{{"spring-mvc", "data50", map[int]float64{400: 100, 800: 200}, results.OutcomeCrashed}, at("netty", "data50", 51, 51, 52)}, "untested", nil},
		// Beyond the study: virtual threads.
		{"arena-1 holds", "arena-1", []curve{flatCurve("spring-mvc-virtual", "sleep", 102)}, "holds", []string{"at 4 of 4 levels", "c=2600: 102 ms"}},
		{"arena-1 queues at 2600", "arena-1", []curve{{"spring-mvc-virtual", "sleep", map[int]float64{200: 101, 800: 102, 2600: 300}, ""}}, "partly", []string{"at 1 of 2 levels"}},
		{"arena-1 queues like Tomcat", "arena-1", []curve{queueing("spring-mvc-virtual", "sleep", 100)}, "fails", nil},
		{"arena-1 only at 200", "arena-1", []curve{at200("spring-mvc-virtual", "sleep", 101)}, "untested", nil},
		{"arena-1 not run", "arena-1", []curve{queueing("spring-mvc", "sleep", 100)}, "untested", []string{"spring-mvc-virtual"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			_, claims := judge(tt.curves...)
			c, ok := claims[tt.id]
			if !ok {
				t.Fatalf("no claim %s in %v", tt.id, claims)
			}
			if c.Verdict != tt.verdict {
				t.Fatalf("claim %s: %s (%s), want %s", tt.id, c.Verdict, c.Why, tt.verdict)
			}
			for _, w := range tt.whyHas {
				if !strings.Contains(c.Why, w) {
					t.Errorf("why %q does not contain %q", c.Why, w)
				}
			}
		})
	}
}

func TestJudgeClaimShape(t *testing.T) {
	for _, run := range []*results.Run{{}, runOf(queueing("spring-mvc", "sleep", 100), flatCurve("netty", "sleep", 101))} {
		_, claims := Scenario{}.Judge(run)
		var ids []string
		for _, c := range claims {
			ids = append(ids, c.ID)
			if c.Text == "" || c.Why == "" {
				t.Errorf("claim %s: text %q why %q", c.ID, c.Text, c.Why)
			}
		}
		if strings.Join(ids, ",") != "a,b,c,d,e,arena-1" {
			t.Errorf("claims %v, want a, b, c, d, e, arena-1", ids)
		}
	}
	_, claims := Scenario{}.Judge(&results.Run{})
	for _, c := range claims {
		if c.Verdict != "untested" {
			t.Errorf("empty run: claim %s %s (%s)", c.ID, c.Verdict, c.Why)
		}
	}
	if !strings.Contains(claims[1].Text, "sleep 100 ms") || !strings.Contains(claims[2].Text, "downstream 50 ms") {
		t.Errorf("claims b and c texts %q, %q do not name their tests", claims[1].Text, claims[2].Text)
	}
}

// The steady preset has the seed's levels, each a steady-state loop at its connections.
func TestPlanSteady(t *testing.T) {
	plan, err := Scenario{}.Plan(scenario.Options{Preset: "steady"})
	if err != nil {
		t.Fatal(err)
	}
	want := seedLevels()
	if len(plan.Levels) != len(want) {
		t.Fatalf("%d levels, want %d", len(plan.Levels), len(want))
	}
	for i, w := range want {
		lv := plan.Levels[i]
		s, ok := lv.Load.(load.Steady)
		if !ok || lv.Name != w.name || len(lv.Warmup) != 0 {
			t.Fatalf("level %s: %T with %d warm-ups; want %s in the steady state", lv.Name, lv.Load, len(lv.Warmup), w.name)
		}
		if s.Loop.Connections != w.conns || s.Loop.Request.Path != w.path || s.Loop.Tag != w.tag || s.Measure != 20*time.Second {
			t.Errorf("%s: %+v", lv.Name, s)
		}
		if (w.delay > 0) != (lv.Downstream != nil) {
			t.Errorf("%s: downstream %+v", lv.Name, lv.Downstream)
		}
	}
}

// In the steady state, a level measured before its throughput settled says so.
func TestJudgeSaysWhereNotSettled(t *testing.T) {
	run := runOf(flatCurve("netty", "sleep", 101))
	run.Summary[1].Numbers = map[string]results.Spread{load.NumberWarmup: {Median: 120}, load.NumberSettled: {Min: 0, Max: 1, Median: 1}}
	verdicts, _ := Scenario{}.Judge(run)
	if len(verdicts) != 1 || !strings.Contains(verdicts[0].Why, "200: 101 ms, 400: 101 ms (not settled), 800: 101 ms") {
		t.Errorf("verdicts %+v", verdicts)
	}
}

// claimOf judges run and returns its claim id.
func claimOf(t *testing.T, run *results.Run, id string) results.Claim {
	t.Helper()
	_, claims := Scenario{}.Judge(run)
	for _, c := range claims {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no claim %s", id)
	return results.Claim{}
}

// The study's own figures (Tomcat 111 ms, Netty 103 ms at 800 connections) are 8 % apart:
// with one repeat a side that is inside the noise, with three tight ones it is an order.
func TestClaimBOrdersBeyondTheNoise(t *testing.T) {
	// Not separated on one repeat: not shown, no longer a failure (the old rule: partly).
	one := claimOf(t, repeated(1, studys("sleep")...), "b")
	if one.Verdict != results.ClaimHoldsWhereTested || !strings.Contains(one.Why, "not shown: spring-mvc behind beyond the noise at 0 of 1 levels") || !strings.Contains(one.Why, "111 vs 103, not separated: within 10 % (1 and 1 repeats)") {
		t.Errorf("one repeat: %s (%s)", one.Verdict, one.Why)
	}
	three := claimOf(t, repeated(3, studys("sleep")...), "b")
	if three.Verdict != results.ClaimHolds || !strings.Contains(three.Why, "111.1 vs 103.1, complete separation, 3 against 3: 1 in 20 by chance") {
		t.Errorf("three repeats: %s (%s)", three.Verdict, three.Why)
	}
}

// The plan says where Tomcat's 200 threads come from: its default, not the study.
func TestPlanNoteSaysWhereThePoolComesFrom(t *testing.T) {
	plan, err := Scenario{}.Plan(scenario.Options{})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(plan.Notes, "\n")
	if strings.Contains(notes, "as in the study") || !strings.Contains(notes, "Tomcat's is its default server.tomcat.threads.max, 200 threads") || !strings.Contains(notes, "arena's choice") {
		t.Errorf("notes:\n%s", notes)
	}
}

// Tomcat's mean beside the study's is explained by its pool's bound, from the WORKER_THREADS
// the run recorded, and the study's figure is said not to follow from its setup.
func TestTomcatDiffersDerivesThePoolBound(t *testing.T) {
	var tc scenario.Published
	for _, p := range (Scenario{}).Reproduction().Published {
		if p.Ours.Contender == "spring-mvc" && p.Ours.Level == "sleep-c800" && p.Ours.Figure == "mean" {
			tc = p
		}
	}
	if tc.Value != 111 || tc.Differs == nil {
		t.Fatalf("Tomcat at 800: %+v", tc)
	}
	got := tc.Differs(runOf(studys("sleep")...), 404)
	for _, w := range []string{"a pool of 200 threads (WORKER_THREADS unset: Tomcat's default server.tomcat.threads.max, arena's choice; the seed states none)",
		"serves at most 200 / 100 ms = 2000 requests/s, so 800 connections wait ≈ 800 / 2000/s = 400 ms; ours 404 ms",
		"The study's 111 ms at 800 connections needs ≥ 721 threads by the same model: it cannot follow from Tomcat's default 200"} {
		if !strings.Contains(got, w) {
			t.Errorf("differs %q\nlacks %q", got, w)
		}
	}
	run := runOf(studys("sleep")...)
	for i := range run.Cells {
		run.Cells[i].Env = map[string]string{"WORKER_THREADS": "1000"}
	}
	if got := tc.Differs(run, 101); !strings.Contains(got, "a pool of 1000 threads (WORKER_THREADS=1000)") || !strings.Contains(got, "= 10000 requests/s, so 800 connections wait ≈ 800 / 10000/s = 100 ms") {
		t.Errorf("recorded pool: %q", got)
	}
	for _, p := range (Scenario{}).Reproduction().Published {
		if p.Value <= 0 || p.Differs == nil {
			t.Errorf("%s: value %g, differs %v", p.What, p.Value, p.Differs != nil)
		}
	}
}

// Claim (c) is judged only where neither server's CPU set the pace: a level where one was at
// 90 % of its cores or more is untested here, with the figure.
func TestClaimCIsUntestedWhereTheCPUWasTheLimit(t *testing.T) {
	curves := []curve{at("spring-mvc", "data50", 51, 100, 200), at("netty", "data50", 51, 51, 52), at("spring-mvc", "sleep", 101, 200, 400), at("netty", "sleep", 101, 101, 103)}
	busyAt := func(run *results.Run, level string, pct float64) {
		for i := range run.Summary {
			if run.Summary[i].Contender == "spring-mvc" && run.Summary[i].Level == level {
				run.Summary[i].CPUPct = results.Spread{Median: pct}
			}
		}
	}
	run := runOf(curves...)
	busyAt(run, "data50-c800", 98)
	c := claimOf(t, run, "c")
	if c.Verdict != results.ClaimHoldsWhereTested || !strings.Contains(c.Why, "untested here: c=800: spring-mvc at 98 % CPU of its 1 core(s), at least 90 %") {
		t.Errorf("busy at 800: %s (%s)", c.Verdict, c.Why)
	}
	if len(c.Conditions) != 2 || !c.Conditions[0].Met || c.Conditions[1].Met || c.Conditions[1].Given != 2 {
		t.Errorf("conditions %+v", c.Conditions)
	}
	busyAt(run, "data50-c400", 95)
	if c := claimOf(t, run, "c"); c.Verdict != results.ClaimUntestedHere {
		t.Errorf("busy at every level: %s (%s)", c.Verdict, c.Why)
	}
	run.Env.ServerCPUs = "0-1" // 98 % of two cores is 49 %: the wait set the pace
	if c := claimOf(t, run, "c"); c.Verdict != results.ClaimHolds {
		t.Errorf("two cores: %s (%s)", c.Verdict, c.Why)
	}
}

// Claim (d), the study's throughput gap (seeds/001 line 48), is judged on requests/s.
func TestClaimDThroughputGap(t *testing.T) {
	if c := claimOf(t, runOf(queueing("spring-mvc", "sleep", 100), flatCurve("netty", "sleep", 101)), "d"); c.Verdict != results.ClaimHolds || !strings.Contains(c.Why, "netty ahead beyond the noise at 4 of 4 levels") {
		t.Errorf("a pool against an event loop: %s (%s)", c.Verdict, c.Why)
	}
	// Equal throughput is a tie: not shown (the old rule: fails); Tomcat ahead fails.
	if c := claimOf(t, runOf(flatCurve("spring-mvc", "sleep", 101), flatCurve("netty", "sleep", 101)), "d"); c.Verdict != results.ClaimNotShown {
		t.Errorf("both keep up: %s (%s)", c.Verdict, c.Why)
	}
	if c := claimOf(t, runOf(flatCurve("spring-mvc", "sleep", 101), queueing("netty", "sleep", 100)), "d"); c.Verdict != results.ClaimFails || !strings.Contains(c.Why, "netty ahead beyond the noise at 0 of 4 levels, behind at 4") {
		t.Errorf("Tomcat ahead: %s (%s)", c.Verdict, c.Why)
	}
	if c := claimOf(t, runOf(at200("spring-mvc", "sleep", 101), at200("netty", "sleep", 101)), "d"); c.Verdict != results.ClaimUntested {
		t.Errorf("only 200: %s (%s)", c.Verdict, c.Why)
	}
}

// Claim (e), a thread per request (seeds/001 line 4), rests on a pool as large as the
// concurrency and on 32 cores: on one core with Tomcat's 200 it is untested here.
func TestClaimEDeclaresItsConditions(t *testing.T) {
	c := claimOf(t, runOf(queueing("spring-mvc", "sleep", 100), flatCurve("netty", "sleep", 101)), "e")
	if c.Verdict != results.ClaimUntestedHere || !strings.Contains(c.Why, "needs ≥ 2000 spring-mvc request threads (seeds/001 line 4), this run gave 200") ||
		!strings.Contains(c.Why, "needs ≥ 32 server cores") || len(c.Conditions) != 2 {
		t.Errorf("claim e: %s (%s) %+v", c.Verdict, c.Why, c.Conditions)
	}
}

// arena-1 is judged as claim (c) is: a level where spring-mvc-virtual's CPU was busy
// measured the core, not the wait (the 2026-11-27 reproduction: 865 ms at 2600 connections,
// 99 % of its one core), so it is untested here, not a failure.
func TestVirtualThreadsUntestedWhereTheCPUWasTheLimit(t *testing.T) {
	run := runOf(curve{"spring-mvc-virtual", "sleep", map[int]float64{200: 101, 800: 102, 2600: 865}, ""})
	for i := range run.Summary {
		if run.Summary[i].Level == "sleep-c2600" {
			run.Summary[i].CPUPct = results.Spread{Median: 99}
		}
	}
	c := claimOf(t, run, "arena-1")
	if c.Verdict != results.ClaimHoldsWhereTested || !strings.Contains(c.Why, "c=2600: 865 ms: spring-mvc-virtual at 99 % CPU of its 1 core(s), at least 90 %: its CPU set the pace (at saturation)") || !strings.Contains(c.Why, "at 1 of 1 levels") {
		t.Errorf("busy at 2600: %s (%s)", c.Verdict, c.Why)
	}
	if len(c.Conditions) != 2 || !c.Conditions[0].Met || c.Conditions[1].Met {
		t.Errorf("conditions %+v", c.Conditions)
	}
	run.Env.ServerCPUs = "0-1" // 99 % of two cores is 50 %: the wait set the pace, and it queued
	if c := claimOf(t, run, "arena-1"); c.Verdict != results.ClaimPartly {
		t.Errorf("two cores: %s (%s)", c.Verdict, c.Why)
	}
}

// Three repeats give no 90 % interval for a median (75 %): "about 101 ms" is not shown on
// them, never held on one figure, and the sameness of the two still is.
func TestClaimANeedsFiveRepeatsForTheWait(t *testing.T) {
	c := claimOf(t, repeated(3, at200("spring-mvc", "sleep", 101), at200("netty", "sleep", 101)), "a")
	if c.Verdict != results.ClaimHoldsWhereTested || !strings.Contains(c.Why, "not shown: spring-mvc 101 ms mean, about 101 ms: median 101.1 ms, 75 % interval 101–101.2 (3 repeats); 3 repeats give no 90 % interval for the median (5 do)") {
		t.Errorf("three repeats: %s (%s)", c.Verdict, c.Why)
	}
}
