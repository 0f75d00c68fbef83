package chat

import (
	"strings"
	"testing"

	chatload "github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// planned is a preset's levels as results.json records them.
func planned(o scenario.Options) []results.Level {
	plan, err := Scenario{}.Plan(o)
	if err != nil {
		panic(err)
	}
	var out []results.Level
	for _, l := range plan.Levels {
		out = append(out, scenario.Describe(l))
	}
	return out
}

var (
	seedPlanned  = planned(scenario.Options{})
	quickPlanned = planned(scenario.Options{Quick: true})
	scalePlanned = planned(scenario.Options{Preset: "scale"})
	// tops are each room count's largest level, where claims b and c are judged.
	tops = map[string]bool{"r1-u60": true, "r2-u35": true, "r4-u17": true}
)

// fig is a contender's figures at one level: mean latency (ms), server CPU (%) and peak
// RSS (MB).
type fig struct{ mean, cpu, rss float64 }

// spec is one contender at one level of a synthetic run.
type spec struct {
	name, level string
	fig         fig
	outcome     string           // "": ok
	faults      map[string]int64 // delivery faults (results.Fault*)
	errs        map[string]int64 // transport failures: error kinds of the delivery tag
	clientBound bool
	sharedCPU   bool
}

func summaryOf(s spec) results.CellSummary {
	outcome := s.outcome
	if outcome == "" {
		outcome = results.OutcomeOK
	}
	cs := results.CellSummary{Contender: s.name, Level: s.level, Repeats: 1, Outcomes: []string{outcome}}
	if outcome == results.OutcomeUnsupported || outcome == results.OutcomeSkipped {
		return cs // never run: no figures
	}
	var errs int64
	for _, n := range s.errs {
		errs += n
	}
	// A crashed cell keeps its figures here, so that a judge that used them would show.
	cs.Tags = []results.TagSummary{{Tag: Tag, Merged: results.Latency{Count: 1000, Mean: s.fig.mean, P50: s.fig.mean, P99: 2 * s.fig.mean}, Errors: errs, ErrKinds: s.errs}}
	cs.Faults, cs.ClientBnd, cs.SharedCPU = s.faults, s.clientBound, s.sharedCPU
	cs.CPUPct = results.Spread{Median: s.fig.cpu, Min: s.fig.cpu, Max: s.fig.cpu}
	cs.RSSMB = results.Spread{Median: s.fig.rss, Min: s.fig.rss, Max: s.fig.rss}
	return cs
}

// runOf is a run over levels, contenders listed in order of first appearance.
func runOf(levels []results.Level, specs ...spec) *results.Run {
	run := &results.Run{Scenario: results.ScenarioInfo{Name: "chat", Levels: levels}}
	seen := map[string]bool{}
	for _, s := range specs {
		if !seen[s.name] {
			seen[s.name] = true
			run.Contenders = append(run.Contenders, results.Contender{Name: s.name})
		}
		run.Summary = append(run.Summary, summaryOf(s))
	}
	return run
}

// everywhere is name at every level of levels with the figures f gives.
func everywhere(levels []results.Level, name string, f func(l results.Level) fig) []spec {
	var out []spec
	for _, l := range levels {
		out = append(out, spec{name: name, level: l.Name, fig: f(l)})
	}
	return out
}

// notRun is name at every seed level with an outcome that measured nothing.
func notRun(name, outcome string) []spec {
	var out []spec
	for _, l := range seedPlanned {
		out = append(out, spec{name: name, level: l.Name, outcome: outcome})
	}
	return out
}

func constant(f fig) func(results.Level) fig { return func(results.Level) fig { return f } }

func verdictsOf(run *results.Run) []results.Verdict {
	v, _ := Scenario{}.Judge(run)
	return v
}

func TestJudgeVerdicts(t *testing.T) {
	type want struct {
		contender, group, verdict string
		whyHas                    []string
	}
	clean := func(name string) []spec { return everywhere(seedPlanned, name, constant(fig{12, 100, 100})) }
	with := func(specs []spec, level string, edit func(*spec)) []spec {
		out := append([]spec(nil), specs...)
		for i := range out {
			if out[i].level == level {
				edit(&out[i])
			}
		}
		return out
	}
	only := func(specs []spec, keep func(spec) bool) []spec {
		var out []spec
		for _, s := range specs {
			if keep(s) {
				out = append(out, s)
			}
		}
		return out
	}
	cases := []struct {
		name  string
		specs []spec
		want  []want
	}{
		{"every delivery arrived", clean("vertx"), []want{
			{"vertx", "1 room", "complete", []string{"10 users: mean 12 ms, p99 24 ms", "60 users: mean 12 ms"}},
			{"vertx", "2 rooms", "complete", []string{"20 users", "35 users"}},
			{"vertx", "4 rooms", "complete", []string{"10 users", "17 users"}},
		}},
		{"sub-10 ms means", everywhere(seedPlanned, "vertx", constant(fig{2.5, 1, 1})), []want{
			{"vertx", "1 room", "complete", []string{"mean 2.50 ms, p99 5.00 ms"}},
			{"vertx", "2 rooms", "complete", nil}, {"vertx", "4 rooms", "complete", nil},
		}},
		{"lost deliveries at one level", with(clean("vertx"), "r2-u30", func(s *spec) { s.faults = map[string]int64{results.FaultLost: 3} }), []want{
			{"vertx", "1 room", "complete", nil},
			{"vertx", "2 rooms", "faults", []string{"30 users: mean 12 ms, p99 24 ms (3 lost)", "20 users: mean 12 ms"}},
			{"vertx", "4 rooms", "complete", nil},
		}},
		{"lost, duplicated, out of order and leaked, each counted", with(clean("vertx"), "r1-u60", func(s *spec) {
			s.faults = map[string]int64{results.FaultReordered: 4, results.FaultLost: 2, results.FaultDuplicated: 1, results.FaultLeaked: 5}
		}), []want{
			{"vertx", "1 room", "faults", []string{"60 users: mean 12 ms, p99 24 ms (2 lost, 1 duplicated, 4 out-of-order, 5 leaked)"}},
			{"vertx", "2 rooms", "complete", nil}, {"vertx", "4 rooms", "complete", nil},
		}},
		{"duplicated only", with(clean("vertx"), "r4-u12", func(s *spec) { s.faults = map[string]int64{results.FaultDuplicated: 7} }), []want{
			{"vertx", "1 room", "complete", nil}, {"vertx", "2 rooms", "complete", nil},
			{"vertx", "4 rooms", "faults", []string{"12 users: mean 12 ms, p99 24 ms (7 duplicated)"}},
		}},
		{"out of order only", with(clean("vertx"), "r1-u10", func(s *spec) { s.faults = map[string]int64{results.FaultReordered: 1} }), []want{
			{"vertx", "1 room", "faults", []string{"(1 out-of-order)"}},
			{"vertx", "2 rooms", "complete", nil}, {"vertx", "4 rooms", "complete", nil},
		}},
		{"leaked only", with(clean("vertx"), "r2-u20", func(s *spec) { s.faults = map[string]int64{results.FaultLeaked: 1} }), []want{
			{"vertx", "1 room", "complete", nil},
			{"vertx", "2 rooms", "faults", []string{"20 users: mean 12 ms, p99 24 ms (1 leaked)"}},
			{"vertx", "4 rooms", "complete", nil},
		}},
		{"a client-bound level is not judged", with(clean("vertx"), "r4-u17", func(s *spec) { s.clientBound = true }), []want{
			{"vertx", "1 room", "complete", nil}, {"vertx", "2 rooms", "complete", nil},
			{"vertx", "4 rooms", "complete", []string{"17 users: client-bound, not judged", "15 users: mean 12 ms"}},
		}},
		{"a room count all client-bound is inconclusive", func() []spec {
			specs := clean("vertx")
			for i := range specs {
				specs[i].clientBound = strings.HasPrefix(specs[i].level, "r2-")
			}
			return specs
		}(), []want{
			{"vertx", "1 room", "complete", nil},
			{"vertx", "2 rooms", "inconclusive (client-bound)", []string{"20 users: client-bound, not judged", "35 users: client-bound"}},
			{"vertx", "4 rooms", "complete", nil},
		}},
		{"a room count all on shared CPUs is inconclusive", func() []spec {
			specs := clean("vertx")
			for i := range specs {
				specs[i].sharedCPU = strings.HasPrefix(specs[i].level, "r2-")
			}
			return specs
		}(), []want{
			{"vertx", "1 room", "complete", nil},
			{"vertx", "2 rooms", "inconclusive (shared CPU)", []string{"20 users: shared CPU, not judged"}},
			{"vertx", "4 rooms", "complete", nil},
		}},
		{"client-bound levels with faults are faults: a copy is the server's at any pace", func() []spec {
			specs := clean("vertx")
			for i := range specs {
				if strings.HasPrefix(specs[i].level, "r2-") {
					specs[i].clientBound = true
					specs[i].faults = map[string]int64{results.FaultDuplicated: 1}
				}
			}
			return specs
		}(), []want{
			{"vertx", "1 room", "complete", nil},
			{"vertx", "2 rooms", "faults", []string{"20 users: mean 12 ms, p99 24 ms (1 duplicated)", "35 users: mean"}},
			{"vertx", "4 rooms", "complete", nil},
		}},
		{"closed and unconnected members", with(clean("vertx"), "r1-u50", func(s *spec) {
			s.errs = map[string]int64{chatload.FaultClosed: 2, chatload.FaultConnect: 5}
		}), []want{
			{"vertx", "1 room", "faults", []string{"50 users: mean 12 ms, p99 24 ms (2 closed, 5 connect)"}},
			{"vertx", "2 rooms", "complete", nil}, {"vertx", "4 rooms", "complete", nil},
		}},
		{"a crashed level", with(clean("node-express"), "r1-u60", func(s *spec) { s.outcome = results.OutcomeCrashed }), []want{
			{"node-express", "1 room", "faults", []string{"60 users: crashed", "50 users: mean 12 ms"}},
			{"node-express", "2 rooms", "complete", nil}, {"node-express", "4 rooms", "complete", nil},
		}},
		{"unsupported", append(notRun("spring-mvc", results.OutcomeUnsupported), clean("vertx")...), []want{
			{"spring-mvc", "1 room", "unsupported", []string{"/chat"}},
			{"spring-mvc", "2 rooms", "unsupported", []string{"/chat"}},
			{"spring-mvc", "4 rooms", "unsupported", []string{"/chat"}},
			{"vertx", "1 room", "complete", nil}, {"vertx", "2 rooms", "complete", nil}, {"vertx", "4 rooms", "complete", nil},
		}},
		{"only one room count run", only(clean("vertx"), func(s spec) bool { return strings.HasPrefix(s.level, "r2-") }), []want{
			{"vertx", "2 rooms", "complete", []string{"25 users"}},
		}},
		{"contenders in run order, groups in plan order", append(only(clean("vertx"), func(s spec) bool { return !strings.HasPrefix(s.level, "r1-") }),
			only(clean("play-akka"), func(s spec) bool { return strings.HasPrefix(s.level, "r1-") || strings.HasPrefix(s.level, "r4-") })...), []want{
			{"vertx", "2 rooms", "complete", nil}, {"vertx", "4 rooms", "complete", nil},
			{"play-akka", "1 room", "complete", nil}, {"play-akka", "4 rooms", "complete", nil},
		}},
		{"nobody", nil, nil},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			run := runOf(seedPlanned, tt.specs...)
			run.Contenders = append(run.Contenders, results.Contender{Name: "never-ran"})
			got := verdictsOf(run)
			if len(got) != len(tt.want) {
				t.Fatalf("%d verdicts %+v, want %d", len(got), got, len(tt.want))
			}
			for i, w := range tt.want {
				v := got[i]
				if v.Contender != w.contender || v.Level != w.group || v.Verdict != w.verdict {
					t.Errorf("verdict %d = %s at %s: %q (%s); want %s at %s: %q", i, v.Contender, v.Level, v.Verdict, v.Why, w.contender, w.group, w.verdict)
				}
				if v.Why == "" {
					t.Errorf("verdict %d has no why", i)
				}
				for _, has := range w.whyHas {
					if !strings.Contains(v.Why, has) {
						t.Errorf("verdict %d why %q does not contain %q", i, v.Why, has)
					}
				}
				if v.Verdict != "faults" && strings.Contains(strings.NewReplacer("(client-bound)", "", "(shared CPU)", "").Replace(v.Why), "(") {
					t.Errorf("verdict %d complete but names faults: %q", i, v.Why)
				}
			}
		})
	}
}

// Under the scale preset a contender's ladder stops where it breaks: the levels above are
// skipped, which is not a fault of theirs.
func TestJudgeVerdictsScale(t *testing.T) {
	steps := func(name string, last string, lastFig fig, faults map[string]int64) []spec {
		var out []spec
		skipping := false
		for _, l := range scalePlanned {
			switch {
			case skipping:
				out = append(out, spec{name: name, level: l.Name, outcome: results.OutcomeSkipped})
			case l.Name == last:
				out = append(out, spec{name: name, level: l.Name, fig: lastFig, faults: faults})
				skipping = true
			default:
				out = append(out, spec{name: name, level: l.Name, fig: fig{40, 100, 100}})
			}
		}
		return out
	}
	cases := []struct {
		name    string
		specs   []spec
		verdict string
		whyHas  []string
	}{
		{"ran to 1600", steps("vertx", "", fig{}, nil), "complete", []string{"50 users: mean 40 ms", "1600 users: mean 40 ms"}},
		{"broke by latency at 400", steps("node-express", "r1-u400", fig{900, 100, 100}, nil), "complete", []string{"400 users: mean 900 ms, p99 1.80 s", "800 users: skipped", "1600 users: skipped"}},
		{"broke by losses at 200", steps("play-akka", "r1-u200", fig{40, 100, 100}, map[string]int64{results.FaultLost: 10}), "faults", []string{"200 users: mean 40 ms, p99 80 ms (10 lost)", "400 users: skipped"}},
		{"crashed at 800", append(steps("spring-mvc", "r1-u800", fig{40, 100, 100}, nil)[:4], spec{name: "spring-mvc", level: "r1-u800", outcome: results.OutcomeCrashed}, spec{name: "spring-mvc", level: "r1-u1600", outcome: results.OutcomeSkipped}), "faults", []string{"800 users: crashed"}},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			got := verdictsOf(runOf(scalePlanned, tt.specs...))
			if len(got) != 1 {
				t.Fatalf("%d verdicts %+v, want 1", len(got), got)
			}
			v := got[0]
			if v.Level != "1 room" || v.Verdict != tt.verdict {
				t.Errorf("verdict %s at %s (%s), want %s at 1 room", v.Verdict, v.Level, v.Why, tt.verdict)
			}
			for _, has := range tt.whyHas {
				if !strings.Contains(v.Why, has) {
					t.Errorf("why %q does not contain %q", v.Why, has)
				}
			}
		})
	}
}

// studyOrder lists the study's seven stacks.
var studyOrder = []string{"spring-mvc", "spring-mvc-jetty", "play-akka", "vertx", "vertx-eventbus", "node-express-cluster", "node-express"}

// baseline is the study's picture at a level: Spring fastest then Akka, the EventBus slower
// and busier than plain Vert.x, single Node slowest and the cluster faster, Node lightest,
// the EventBus and Akka heavier above 40 users in one room. Latency grows with users.
func baseline(name string, l results.Level) fig {
	above40 := l.Group == "1 room" && l.X > 40
	scale := l.X / 10
	switch name {
	case "spring-mvc":
		return fig{5 * scale, 300, 200}
	case "spring-mvc-jetty":
		return fig{6 * scale, 280, 200}
	case "play-akka":
		if above40 {
			return fig{8 * scale, 250, 240}
		}
		return fig{8 * scale, 250, 200}
	case "vertx":
		return fig{10 * scale, 150, 200}
	case "vertx-eventbus":
		if above40 {
			return fig{30 * scale, 400, 300}
		}
		return fig{30 * scale, 400, 200}
	case "node-express-cluster":
		return fig{20 * scale, 200, 100}
	case "node-express":
		return fig{50 * scale, 95, 60}
	}
	panic("no baseline for " + name)
}

// edit changes one study stack's cell; false leaves the cell out of the run.
type edit func(s *spec, l results.Level) bool

// studyRun is the baseline over the seed levels, changed by edit, with extra cells after.
func studyRun(e edit, extra ...spec) *results.Run {
	var specs []spec
	for _, name := range studyOrder {
		for _, l := range seedPlanned {
			s := spec{name: name, level: l.Name, fig: baseline(name, l)}
			if e == nil || e(&s, l) {
				specs = append(specs, s)
			}
		}
	}
	return runOf(seedPlanned, append(specs, extra...)...)
}

func claimsOf(run *results.Run) map[string]results.Claim {
	_, claims := Scenario{}.Judge(run)
	byID := map[string]results.Claim{}
	for _, c := range claims {
		byID[c.ID] = c
	}
	return byID
}

// firstLevels is the names of the seed plan's first n levels.
func firstLevels(n int) map[string]bool {
	out := map[string]bool{}
	for _, l := range seedPlanned[:n] {
		out[l.Name] = true
	}
	return out
}

// on edits name's cells at the levels where at holds.
func on(name string, at func(l results.Level) bool, change func(s *spec)) edit {
	return func(s *spec, l results.Level) bool {
		if s.name == name && at(l) {
			change(s)
		}
		return true
	}
}

// without leaves name out, at the levels where at holds.
func without(name string, at func(l results.Level) bool) edit {
	return func(s *spec, l results.Level) bool { return s.name != name || !at(l) }
}

// both applies a then b.
func both(a, b edit) edit {
	return func(s *spec, l results.Level) bool { return a(s, l) && b(s, l) }
}

func all(results.Level) bool      { return true }
func atTop(l results.Level) bool  { return tops[l.Name] }
func notTop(l results.Level) bool { return !tops[l.Name] }
func inGroup(g string) func(results.Level) bool {
	return func(l results.Level) bool { return l.Group == g }
}
func in(names map[string]bool) func(results.Level) bool {
	return func(l results.Level) bool { return names[l.Name] }
}
func named(n string) func(results.Level) bool {
	return func(l results.Level) bool { return l.Name == n }
}

// extraEverywhere is a contender outside the study at every seed level.
func extraEverywhere(name string, f fig) []spec {
	return everywhere(seedPlanned, name, constant(f))
}

type claimCase struct {
	name    string
	run     *results.Run
	verdict string
	whyHas  []string
}

func checkClaim(t *testing.T, id string, cases []claimCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := claimsOf(tt.run)[id]
			if !ok {
				t.Fatalf("no claim %s", id)
			}
			if c.Verdict != tt.verdict {
				t.Errorf("claim %s: %s (%s), want %s", id, c.Verdict, c.Why, tt.verdict)
			}
			for _, has := range tt.whyHas {
				if !strings.Contains(c.Why, has) {
					t.Errorf("claim %s why %q does not contain %q", id, c.Why, has)
				}
			}
			if c.Text == "" || c.Why == "" {
				t.Errorf("claim %s: text %q why %q", id, c.Text, c.Why)
			}
		})
	}
}

func TestJudgeClaimA(t *testing.T) {
	fast := func(s *spec) { s.fig.mean = 0.5 }
	checkClaim(t, "a", []claimCase{
		{"the study's picture", studyRun(nil), "holds", []string{"at 14 of 14 levels"}},
		{"slower but not busier", studyRun(on("vertx-eventbus", all, func(s *spec) { s.fig.cpu = 100 })), "fails", []string{"0 of 14"}},
		{"busier but not slower", studyRun(on("vertx-eventbus", all, fast)), "fails", []string{"0 of 14"}},
		{"equal CPU is not more", studyRun(on("vertx-eventbus", all, func(s *spec) { s.fig.cpu = 150 })), "fails", nil},
		{"all but one level", studyRun(on("vertx-eventbus", named("r4-u17"), fast)), "partly", []string{"13 of 14"}},
		{"exactly half", studyRun(on("vertx-eventbus", in(firstLevels(7)), fast)), "partly", []string{"7 of 14"}},
		{"just under half", studyRun(on("vertx-eventbus", in(firstLevels(8)), fast)), "fails", []string{"6 of 14"}},
		{"judged where both ran", studyRun(without("vertx", inGroup("4 rooms"))), "holds", []string{"10 of 10"}},
		{"a crashed level is not counted", studyRun(on("vertx-eventbus", named("r1-u60"), func(s *spec) { s.outcome = results.OutcomeCrashed; fast(s) })), "holds", []string{"13 of 13"}},
		{"never at the same level", studyRun(both(without("vertx", inGroup("1 room")), without("vertx-eventbus", func(l results.Level) bool { return l.Group != "1 room" }))), "untested", nil},
		{"vertx missing", studyRun(without("vertx", all)), "untested", []string{"vertx and vertx-eventbus"}},
		{"vertx-eventbus missing", studyRun(without("vertx-eventbus", all)), "untested", []string{"vertx and vertx-eventbus"}},
		{"vertx crashed everywhere", studyRun(on("vertx", all, func(s *spec) { s.outcome = results.OutcomeCrashed })), "untested", nil},
		{"vertx unsupported", studyRun(on("vertx", all, func(s *spec) { s.outcome = results.OutcomeUnsupported })), "untested", nil},
		{"both alone", runOf(seedPlanned, append(everywhere(seedPlanned, "vertx", constant(fig{10, 100, 100})), everywhere(seedPlanned, "vertx-eventbus", constant(fig{11, 101, 100}))...)...), "holds", nil},
	})
}

func TestJudgeClaimB(t *testing.T) {
	checkClaim(t, "b", []claimCase{
		{"the study's picture", studyRun(nil), "holds", []string{"worst at 3 of 3, the cluster faster at 3"}},
		{"a slower go-nethttp changes nothing", studyRun(nil, extraEverywhere("go-nethttp", fig{10000, 100, 10})...), "holds", []string{"worst at 3 of 3"}},
		{"a faster go-nethttp changes nothing", studyRun(nil, extraEverywhere("go-nethttp", fig{0.1, 100, 10})...), "holds", nil},
		{"judged at the largest levels only", studyRun(on("node-express", notTop, func(s *spec) { s.fig.mean = 0.1 })), "holds", nil},
		{"the EventBus worse at one largest level", studyRun(on("vertx-eventbus", named("r4-u17"), func(s *spec) { s.fig.mean = 1e6 })), "partly", []string{"worst at 2 of 3, the cluster faster at 3"}},
		{"the EventBus worse at every largest level", studyRun(on("vertx-eventbus", atTop, func(s *spec) { s.fig.mean = 1e6 })), "fails", []string{"worst at 0 of 3"}},
		{"the cluster no faster in one room", studyRun(on("node-express-cluster", named("r1-u60"), func(s *spec) { s.fig.mean = 300 })), "partly", []string{"the cluster faster at 2"}},
		// Equal means: single Node is still the worst (no stack is slower), but the
		// cluster is not faster.
		{"the cluster as slow as single Node", studyRun(func(s *spec, l results.Level) bool {
			if s.name == "node-express-cluster" && tops[l.Name] {
				s.fig.mean = baseline("node-express", l).mean
			}
			return true
		}), "fails", []string{"worst at 3 of 3, the cluster faster at 0"}},
		{"crashed cells do not count", studyRun(on("spring-mvc", atTop, func(s *spec) { s.outcome = results.OutcomeCrashed; s.fig.mean = 1e6 })), "holds", nil},
		{"node-express missing", studyRun(without("node-express", all)), "untested", []string{"node-express and node-express-cluster"}},
		{"the cluster missing", studyRun(without("node-express-cluster", all)), "untested", []string{"node-express and node-express-cluster"}},
		{"node-express crashed at the largest levels", studyRun(on("node-express", atTop, func(s *spec) { s.outcome = results.OutcomeCrashed })), "untested", []string{"0 of 0"}},
		{"the two Node stacks alone", runOf(seedPlanned, append(everywhere(seedPlanned, "node-express", constant(fig{50, 100, 50})), everywhere(seedPlanned, "node-express-cluster", constant(fig{20, 300, 90}))...)...), "holds", nil},
	})
}

// Claim c follows the study: both Spring servers ahead of the rest, "followed by Akka".
func TestJudgeClaimC(t *testing.T) {
	meanOf := func(name string, mean func(l results.Level) float64) edit {
		return func(s *spec, l results.Level) bool {
			if s.name == name {
				s.fig.mean = mean(l)
			}
			return true
		}
	}
	like := func(name string) func(l results.Level) float64 {
		return func(l results.Level) float64 { return baseline(name, l).mean }
	}
	checkClaim(t, "c", []claimCase{
		{"the study's picture: Tomcat, Jetty, then Akka", studyRun(nil), "holds", []string{
			"r1-u60: spring-mvc fastest, play-akka next after Spring", "r2-u35: spring-mvc fastest, play-akka next after Spring", "r4-u17: spring-mvc fastest, play-akka next after Spring",
		}},
		{"Jetty behind Akka", studyRun(on("spring-mvc-jetty", all, func(s *spec) { s.fig.mean = 1e6 })), "holds", nil},
		{"a faster go-nethttp changes nothing", studyRun(nil, extraEverywhere("go-nethttp", fig{0.1, 100, 10})...), "holds", []string{"r4-u17: spring-mvc fastest, play-akka next"}},
		{"judged at the largest levels only", studyRun(on("spring-mvc", notTop, func(s *spec) { s.fig.mean = 1e6 })), "holds", nil},
		{"Tomcat and Jetty tied rank by name", studyRun(meanOf("spring-mvc-jetty", like("spring-mvc"))), "holds", []string{"r1-u60: spring-mvc fastest"}},
		{"Jetty fastest", studyRun(on("spring-mvc-jetty", all, func(s *spec) { s.fig.mean = 0.1 })), "partly", []string{"r1-u60: spring-mvc-jetty fastest, play-akka next after Spring"}},
		{"Jetty fastest in four rooms", studyRun(on("spring-mvc-jetty", named("r4-u17"), func(s *spec) { s.fig.mean = 0.1 })), "partly", []string{"r4-u17: spring-mvc-jetty fastest", "r2-u35: spring-mvc fastest"}},
		{"Vert.x between Spring and Akka", studyRun(meanOf("vertx", func(l results.Level) float64 {
			return (baseline("spring-mvc", l).mean + baseline("play-akka", l).mean) / 2
		})),
			"partly", []string{"r1-u60: spring-mvc fastest, vertx next after Spring"}},
		{"the Node cluster fastest of all", studyRun(on("node-express-cluster", atTop, func(s *spec) { s.fig.mean = 0.1 })), "fails", []string{"r1-u60: node-express-cluster fastest, node-express-cluster next after Spring"}},
		{"the Node cluster fastest at one level", studyRun(on("node-express-cluster", named("r2-u35"), func(s *spec) { s.fig.mean = 0.1 })), "partly", nil},
		{"crashed cells do not count", studyRun(on("node-express-cluster", atTop, func(s *spec) { s.outcome = results.OutcomeCrashed; s.fig.mean = 0.1 })), "holds", nil},
		{"play-akka missing", studyRun(without("play-akka", all)), "untested", []string{"spring-mvc and play-akka"}},
		{"spring-mvc missing", studyRun(without("spring-mvc", all)), "untested", []string{"spring-mvc and play-akka"}},
		{"the two alone", runOf(seedPlanned, append(everywhere(seedPlanned, "play-akka", constant(fig{8, 1, 1})), everywhere(seedPlanned, "spring-mvc", constant(fig{5, 1, 1}))...)...), "holds", nil},
	})
}

func TestJudgeClaimD(t *testing.T) {
	flatRSS := func(rss float64) func(s *spec) { return func(s *spec) { s.fig.rss = rss } }
	heavy := func(s *spec) bool { return s.name == "vertx-eventbus" || s.name == "play-akka" }
	oneRoom := func(low, high float64) edit {
		return func(s *spec, l results.Level) bool {
			if heavy(s) && l.Group == "1 room" {
				s.fig.rss = low
				if l.X > 40 {
					s.fig.rss = high
				}
			}
			return true
		}
	}
	checkClaim(t, "d", []claimCase{
		{"the study's picture", studyRun(nil), "holds", []string{"least memory at 14 of 14 levels", "rise above 40 users in 2 of 2"}},
		{"the cluster lighter does not count", studyRun(on("node-express-cluster", all, flatRSS(10))), "holds", []string{"14 of 14"}},
		{"a lighter go-nethttp changes nothing", studyRun(nil, extraEverywhere("go-nethttp", fig{1, 1, 5})...), "holds", []string{"14 of 14"}},
		{"Spring as light is still least", studyRun(on("spring-mvc", all, flatRSS(60))), "holds", nil},
		{"Spring lighter everywhere: one part fails, one holds", studyRun(on("spring-mvc", all, flatRSS(59))), "partly", []string{"0 of 14", "2 of 2"}},
		{"Spring lighter at half the levels", studyRun(on("spring-mvc", in(firstLevels(7)), flatRSS(10))), "partly", []string{"7 of 14", "2 of 2"}},
		{"no rise", studyRun(on("vertx-eventbus", all, flatRSS(200)), extraEverywhere("go-nethttp", fig{1, 1, 100})...), "partly", []string{"14 of 14", "in 1 of 2"}},
		{"no rise for either", studyRun(oneRoom(200, 200)), "partly", []string{"in 0 of 2"}},
		{"a rise of exactly 5 %", studyRun(oneRoom(200, 210)), "partly", []string{"in 0 of 2"}},
		{"a rise just over 5 %", studyRun(oneRoom(200, 210.5)), "holds", []string{"in 2 of 2"}},
		{"40 users is below the line", studyRun(func(s *spec, l results.Level) bool {
			if heavy(s) && l.Group == "1 room" && l.X >= 40 {
				s.fig.rss = 400
			}
			return true
		}), "partly", []string{"in 0 of 2"}},
		{"more than 40 users in all counts, in any number of rooms", studyRun(func(s *spec, l results.Level) bool {
			if heavy(s) {
				s.fig.rss = 200
				if l.Group != "1 room" && usersOf(l) > 40 {
					s.fig.rss = 280
				}
			}
			return true
		}), "holds", []string{"in 2 of 2"}},
		{"40 users in all, in two or four rooms, is below the line", studyRun(func(s *spec, l results.Level) bool {
			if heavy(s) && (l.Name == "r2-u20" || l.Name == "r4-u10") {
				s.fig.rss = 400 // above the one-room ladder's 300 and 240
			}
			return true
		}), "partly", []string{"in 0 of 2"}},
		{"no level above 40 users: the rise is untested, never held", studyRun(both(
			without("vertx-eventbus", func(l results.Level) bool { return usersOf(l) > 40 }),
			without("play-akka", func(l results.Level) bool { return usersOf(l) > 40 }))),
			"partly", []string{"least memory at 14 of 14 levels", "untested: the rise above 40 users"}},
		{"a quick run, a few users a room: the rise is untested", runOf(quickPlanned, append(append(
			everywhere(quickPlanned, "node-express", constant(fig{5, 50, 60})),
			everywhere(quickPlanned, "vertx-eventbus", constant(fig{5, 50, 200}))...),
			everywhere(quickPlanned, "play-akka", constant(fig{5, 50, 200}))...)...),
			"partly", []string{"least memory at 4 of 4 levels", "untested: the rise above 40 users"}},
		{"the rise judged on peaks", studyRun(func(s *spec, l results.Level) bool {
			if heavy(s) && l.Name == "r1-u10" {
				s.fig.rss = 250 // the low side's peak; 300 and 240 above
			}
			return true
		}), "partly", []string{"in 1 of 2"}},
		{"crashed cells do not count", studyRun(on("spring-mvc", all, func(s *spec) { s.outcome = results.OutcomeCrashed; s.fig.rss = 1 })), "holds", []string{"14 of 14"}},
		{"node-express missing", studyRun(without("node-express", all)), "partly", []string{"untested: node-express was not measured", "in 2 of 2"}},
	})
}

// The claims come as a, b, c, d; an empty run tests none of them.
func TestJudgeClaimShape(t *testing.T) {
	for _, run := range []*results.Run{{}, runOf(seedPlanned), studyRun(nil)} {
		_, claims := Scenario{}.Judge(run)
		var ids []string
		for _, c := range claims {
			ids = append(ids, c.ID)
			if c.Text == "" || c.Why == "" {
				t.Errorf("claim %s: text %q why %q", c.ID, c.Text, c.Why)
			}
			if len(run.Summary) == 0 && c.Verdict != "untested" {
				t.Errorf("empty run: claim %s %s (%s)", c.ID, c.Verdict, c.Why)
			}
			if len(run.Summary) > 0 && c.Verdict != "holds" {
				t.Errorf("the study's picture: claim %s %s (%s)", c.ID, c.Verdict, c.Why)
			}
		}
		if strings.Join(ids, ",") != "a,b,c,d" {
			t.Errorf("claims %v, want a, b, c, d", ids)
		}
	}
}
