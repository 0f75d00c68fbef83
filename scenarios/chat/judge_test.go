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
	reps        []fig // the figures of each repeat; nil: three repeats about fig (repeatsAbout)
}

// repeats are a spec's figures per repeat.
func (s spec) repeats() []fig {
	if s.reps == nil {
		return repeatsAbout(s.fig)
	}
	return s.reps
}

// repeatsAbout are three repeats a reproduction gives, 0.5 % either side of f: two figures a
// few per cent apart separate completely, two alike are not separated, and a ratio's 90 %
// interval (3 against 3: the least and the most of the 9 pairwise ratios) is about ±1 %.
func repeatsAbout(f fig) []fig {
	var out []fig
	for _, k := range []float64{0.995, 1, 1.005} {
		out = append(out, fig{f.mean * k, f.cpu * k, f.rss * k})
	}
	return out
}

// cellsOf are a spec's repeats as the run records them: what scenario.Samples reads.
func cellsOf(s spec) []results.Cell {
	outcome := s.outcome
	if outcome == "" {
		outcome = results.OutcomeOK
	}
	var out []results.Cell
	for i, f := range s.repeats() {
		out = append(out, results.Cell{Contender: s.name, Level: s.level, Repeat: i + 1, Outcome: results.Outcome{Status: outcome},
			Tags:   []results.Tag{{TagStats: results.TagStats{Tag: Tag, Completed: 1000}, Response: results.Latency{Count: 1000, Mean: f.mean, P50: f.mean, P99: 2 * f.mean}}},
			Server: results.Resources{Summary: results.Usage{CPUPctMean: f.cpu, RSSMBMax: f.rss}},
			Faults: s.faults, ClientBound: s.clientBound, SharedCPU: s.sharedCPU})
	}
	return out
}

func summaryOf(s spec) results.CellSummary {
	outcome := s.outcome
	if outcome == "" {
		outcome = results.OutcomeOK
	}
	cs := results.CellSummary{Contender: s.name, Level: s.level, Repeats: len(s.repeats()), Outcomes: []string{outcome}}
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

// runOf is a run over levels on the study's 8 server cores, contenders listed in order of
// first appearance.
func runOf(levels []results.Level, specs ...spec) *results.Run {
	run := &results.Run{Scenario: results.ScenarioInfo{Name: "chat", Levels: levels}, Env: results.Environment{ServerCPUs: "0-7"}}
	seen := map[string]bool{}
	for _, s := range specs {
		if !seen[s.name] {
			seen[s.name] = true
			run.Contenders = append(run.Contenders, results.Contender{Name: s.name})
		}
		run.Summary = append(run.Summary, summaryOf(s))
		run.Cells = append(run.Cells, cellsOf(s)...)
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
// and busier than plain Vert.x, single Node slowest and the cluster faster; Spring and Akka
// busier than plain Vert.x and Node, single Node within one core and the cluster beyond it;
// Node lightest, the EventBus (×2.25) and Akka (×1.3) heavier above 40 users in one room,
// the others constant. Latency grows with users; every two stacks an order apart are more
// than the 10 % noise of one repeat apart.
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
			return fig{8 * scale, 250, 260}
		}
		return fig{8 * scale, 250, 200}
	case "vertx":
		return fig{10 * scale, 150, 200}
	case "vertx-eventbus":
		if above40 {
			return fig{30 * scale, 400, 450}
		}
		return fig{30 * scale, 400, 200}
	case "node-express-cluster":
		return fig{20 * scale, 120, 100}
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
