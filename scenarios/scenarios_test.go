package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

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
func checkClosed(t *testing.T, where string, c load.ClosedLoop) {
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

// checkSteady: a steady-state load is bounded in time in each of its phases.
func checkSteady(t *testing.T, where string, s load.Steady) {
	t.Helper()
	if s.Window <= 0 || s.Agree < 2 || s.Within <= 0 || s.MaxWarmup < time.Duration(s.Agree)*s.Window || s.Measure <= 0 {
		t.Errorf("%s: steady %+v; want windows, at least two to agree, a bound on the warm-up and a measurement", where, s)
	}
	c := s.Loop
	c.Requests, c.Duration = 1, s.Measure // its bounds are set per phase
	checkClosed(t, where, c)
}

func checkOpen(t *testing.T, where string, o load.OpenLoop) {
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
					switch l := lv.Load.(type) {
					case nil:
						t.Errorf("%s: no load", where)
						continue
					case load.OpenLoop:
						checkOpen(t, where, l)
					case load.ClosedLoop:
						checkClosed(t, where, l)
					case load.Steady:
						checkSteady(t, where, l)
					default: // a load beyond HTTP needs a feature of the contract
						if d := l.Describe(); d.Feature == "" {
							t.Errorf("%s: %T needs no feature", where, l)
						}
					}
					for _, w := range lv.Warmup {
						c, ok := w.(load.ClosedLoop)
						if !ok {
							t.Errorf("%s: warm-up %T, want a closed loop", where, w)
							continue
						}
						checkClosed(t, where+" warm-up", c)
					}
					if lv.Expected() <= 0 {
						t.Errorf("%s: expected %s", where, lv.Expected())
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

// seedsDir holds the studies' texts the published figures cite ($ARENA_SEEDS, else the lab
// machine's shared copy).
func seedsDir() string {
	if d := os.Getenv("ARENA_SEEDS"); d != "" {
		return d
	}
	return "/work/shared/seeds"
}

// Every figure a scenario says its study published is on the seed line it cites: its first
// number, with the study's separators dropped, is there.
func TestPublishedFiguresAreOnTheLinesTheyCite(t *testing.T) {
	dir := seedsDir()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no seed texts at %s (set ARENA_SEEDS)", dir)
	}
	cite := regexp.MustCompile(`^seeds/(\d{3}) lines? (\d+)\b`)
	number := regexp.MustCompile(`\d[\d,_.]*\d|\d`)
	plain := strings.NewReplacer(",", "", "_", "", " ", "")
	n := 0
	for _, sc := range All() {
		rp, ok := sc.(scenario.Reproducible)
		if !ok {
			t.Errorf("%s does not say how to reproduce it", sc.Name())
			continue
		}
		for _, p := range rp.Reproduction().Published {
			m := cite.FindStringSubmatch(p.Source)
			if m == nil {
				t.Errorf("%s: %q cites no seed line", sc.Name(), p.Source)
				continue
			}
			want := number.FindString(p.Theirs)
			if want == "" || p.Per != nil {
				continue // a ratio of two cited figures, or words
			}
			files, _ := filepath.Glob(filepath.Join(dir, m[1]+"_*.txt"))
			if len(files) != 1 {
				t.Errorf("no seed %s in %s", m[1], dir)
				continue
			}
			raw, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(raw), "\n")
			line, _ := strconv.Atoi(m[2])
			if line < 1 || line > len(lines) || !strings.Contains(plain.Replace(lines[line-1]), plain.Replace(want)) {
				t.Errorf("%s: %q (%s): line %d of seed %s does not say %s", sc.Name(), p.What, p.Theirs, line, m[1], want)
			}
			n++
		}
	}
	if n < 15 {
		t.Errorf("checked %d figures; the five studies publish more", n)
	}
}
