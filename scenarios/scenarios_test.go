package scenarios

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

func TestAll(t *testing.T) {
	all := All()
	if len(all) == 0 {
		t.Fatal("no scenarios")
	}
	if all[0].Name() != "isolation" {
		t.Errorf("first scenario %q, want isolation (the default)", all[0].Name())
	}
	seen := map[string]bool{}
	for _, s := range all {
		n := s.Name()
		if n == "" || strings.ContainsAny(n, " \t/") {
			t.Errorf("scenario name %q is not a usable name", n)
		}
		if seen[n] {
			t.Errorf("scenario %q listed twice", n)
		}
		seen[n] = true
		if s.Title() == "" || s.Study() == "" {
			t.Errorf("%s: title %q study %q", n, s.Title(), s.Study())
		}
		if len(s.Presets()) == 0 {
			t.Errorf("%s has no presets", n)
		}
	}
	for _, n := range []string{"isolation", "sleep", "downstream"} {
		if !seen[n] {
			t.Errorf("All does not list %s", n)
		}
	}
}

func TestFind(t *testing.T) {
	for _, s := range All() {
		got, err := Find(s.Name())
		if err != nil || got == nil || got.Name() != s.Name() {
			t.Errorf("Find(%q) = %v, %v", s.Name(), got, err)
		}
	}
	var names []string
	for _, s := range All() {
		names = append(names, s.Name())
	}
	for _, bad := range []string{"nosuch", "", "Sleep", "sleep "} {
		got, err := Find(bad)
		if err == nil || got != nil {
			t.Errorf("Find(%q) = %v, %v; want an error", bad, got, err)
			continue
		}
		for _, w := range []string{fmt.Sprintf("%q", bad), strings.Join(names, ", ")} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Find(%q) error %q does not contain %q", bad, err, w)
			}
		}
	}
}

// checkClosed applies the lab's rule to a closed loop: bounded in count and in time, with a
// request timeout, and something to send.
func checkClosed(t *testing.T, where string, c *load.ClosedLoop) {
	t.Helper()
	if c.Requests <= 0 || c.Duration <= 0 {
		t.Errorf("%s: closed loop bounded by %d requests and %s; want both bounds", where, c.Requests, c.Duration)
	}
	if c.Timeout <= 0 {
		t.Errorf("%s: request timeout %s", where, c.Timeout)
	}
	if c.Connections <= 0 || c.Tag == "" || !strings.HasPrefix(c.Request.Path, "/") {
		t.Errorf("%s: %d connections, tag %q, path %q", where, c.Connections, c.Tag, c.Request.Path)
	}
}

func checkOpen(t *testing.T, where string, o *load.OpenLoop) {
	t.Helper()
	if o.Duration <= 0 {
		t.Errorf("%s: open loop of %s", where, o.Duration)
	}
	if o.Timeout <= 0 {
		t.Errorf("%s: request timeout %s", where, o.Timeout)
	}
	if len(o.Streams) == 0 {
		t.Errorf("%s: open loop without streams", where)
	}
	tags := map[string]bool{}
	for i, s := range o.Streams {
		if s.Tag == "" || tags[s.Tag] || !strings.HasPrefix(s.Request.Path, "/") || s.Connections < 0 {
			t.Errorf("%s: stream %d tag %q (repeated %v) path %q connections %d", where, i, s.Tag, tags[s.Tag], s.Request.Path, s.Connections)
		}
		tags[s.Tag] = true
		if s.Pacer == nil || s.Pacer.Rate() <= 0 {
			t.Errorf("%s: stream %s has no rate", where, s.Tag)
			continue
		}
		// An open loop is bounded in count by its schedule within its duration.
		if o.Duration > 0 {
			if n := load.HitsWithin(s.Pacer, o.Duration); n <= 0 || n > 10_000_000 {
				t.Errorf("%s: stream %s schedules %d hits", where, s.Tag, n)
			}
		}
	}
}

// Every scenario's every preset plans, full and quick, levels the lab can run.
func TestPlans(t *testing.T) {
	for _, s := range All() {
		var opts []scenario.Options
		for _, q := range []bool{false, true} {
			opts = append(opts, scenario.Options{Quick: q})
			for _, p := range s.Presets() {
				opts = append(opts, scenario.Options{Preset: p, Quick: q})
			}
		}
		for _, o := range opts {
			t.Run(fmt.Sprintf("%s/%q/quick=%v", s.Name(), o.Preset, o.Quick), func(t *testing.T) {
				plan, err := s.Plan(o)
				if err != nil {
					t.Fatalf("Plan: %v", err)
				}
				if plan.Preset == "" || (o.Preset != "" && plan.Preset != o.Preset) {
					t.Errorf("plan preset %q for %q", plan.Preset, o.Preset)
				}
				if len(plan.Levels) == 0 {
					t.Fatal("no levels")
				}
				names := map[string]bool{}
				var all []string
				for i, lv := range plan.Levels {
					where := fmt.Sprintf("level %d %q", i, lv.Name)
					if lv.Name == "" || names[lv.Name] {
						t.Errorf("%s: empty or repeated name", where)
					}
					names[lv.Name] = true
					all = append(all, lv.Name)
					kinds := 0
					for _, set := range []bool{lv.Open != nil, lv.Closed != nil, lv.Driver != nil} {
						if set {
							kinds++
						}
					}
					if kinds != 1 {
						t.Errorf("%s: open %v closed %v driver %v, want exactly one", where, lv.Open != nil, lv.Closed != nil, lv.Driver != nil)
						continue
					}
					switch {
					case lv.Open != nil:
						checkOpen(t, where, lv.Open)
					case lv.Closed != nil:
						checkClosed(t, where, lv.Closed)
					case lv.Driver.Feature() == "" || lv.Driver.Expected() <= 0:
						t.Errorf("%s: driver feature %q, expected %s", where, lv.Driver.Feature(), lv.Driver.Expected())
					}
					for _, w := range lv.Warmup {
						checkClosed(t, where+" warm-up", w)
					}
					if lv.Drain < 0 || lv.Expected() <= 0 {
						t.Errorf("%s: drain %s, expected %s", where, lv.Drain, lv.Expected())
					}
					if lv.Downstream != nil && lv.Downstream.Delay < 0 {
						t.Errorf("%s: downstream delay %s", where, lv.Downstream.Delay)
					}
					if d := scenario.Describe(lv); d.Name != lv.Name || d.Load == "" || len(d.Streams) == 0 {
						t.Errorf("%s: described as %+v", where, d)
					}
				}
				if kept, err := plan.Filter(all); err != nil || len(kept.Levels) != len(plan.Levels) {
					t.Errorf("Filter(every level) = %d levels, %v", len(kept.Levels), err)
				}
			})
		}
	}
}

func TestPlanUnknownPreset(t *testing.T) {
	for _, s := range All() {
		_, err := s.Plan(scenario.Options{Preset: "no-such-preset"})
		if err == nil {
			t.Errorf("%s accepted an unknown preset", s.Name())
		} else if !strings.Contains(err.Error(), "no-such-preset") {
			t.Errorf("%s: error %q does not name the preset", s.Name(), err)
		}
	}
}

// With nothing measured, every claim is untested and no scenario panics.
func TestJudgeEmpty(t *testing.T) {
	for _, s := range All() {
		plan, err := s.Plan(scenario.Options{})
		if err != nil {
			t.Fatalf("%s: %v", s.Name(), err)
		}
		// Contenders that all failed to start: listed, never measured.
		var failed results.Run
		for _, n := range []string{"spring-mvc", "spring-webflux", "netty", "vertx", "spring-webflux-fn"} {
			failed.Contenders = append(failed.Contenders, results.Contender{Name: n})
			for _, lv := range plan.Levels {
				failed.Summary = append(failed.Summary, results.CellSummary{Contender: n, Level: lv.Name, Repeats: 1, Outcomes: []string{results.OutcomeUnready}})
			}
		}
		runs := map[string]*results.Run{
			"empty":             {},
			"contenders listed": {Contenders: failed.Contenders},
			"all unready":       &failed,
		}
		for what, run := range runs {
			t.Run(s.Name()+"/"+what, func(t *testing.T) {
				var claims []results.Claim
				func() {
					defer func() {
						if r := recover(); r != nil {
							t.Fatalf("Judge panicked: %v", r)
						}
					}()
					_, claims = s.Judge(run)
				}()
				if len(claims) == 0 {
					t.Fatal("no claims")
				}
				ids := map[string]bool{}
				for _, c := range claims {
					if c.ID == "" || ids[c.ID] {
						t.Errorf("claim id %q empty or repeated", c.ID)
					}
					ids[c.ID] = true
					switch {
					case what != "all unready" && c.Verdict != "untested":
						t.Errorf("claim %s: %s (%s), want untested", c.ID, c.Verdict, c.Why)
					case c.Verdict == "holds" || c.Verdict == "partly":
						// A contender that never started supports no claim. (Whether it
						// refutes one is the scenario's call: isolation counts any cell
						// that did not end ok against "stays isolated".)
						t.Errorf("claim %s: %s (%s) with nothing measured", c.ID, c.Verdict, c.Why)
					}
					if c.Text == "" || c.Why == "" {
						t.Errorf("claim %s: text %q why %q", c.ID, c.Text, c.Why)
					}
				}
			})
		}
	}
}
