package isolation

import (
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

type streamWant struct {
	tag, path string
	rate      float64
}

func TestPlan(t *testing.T) {
	tests := []struct {
		name        string
		opts        scenario.Options
		preset      string
		workers     string // "" : no WORKER_THREADS
		delayedRate float64
		duration    time.Duration
		timeout     time.Duration
		noteHas     []string
	}{
		{"seed", scenario.Options{Preset: "seed"}, "seed", "11", 10, 60 * time.Second, 60 * time.Second, []string{"WORKER_THREADS=11"}},
		{"empty preset is seed", scenario.Options{}, "seed", "11", 10, 60 * time.Second, 60 * time.Second, nil},
		{"default", scenario.Options{Preset: "default"}, "default", "", 25, 60 * time.Second, 60 * time.Second, []string{"250 requests wait at once"}},
		{"quick", scenario.Options{Quick: true}, "seed", "11", 10, 20 * time.Second, 20 * time.Second, []string{"Load for 20s"}},
		{"quick default", scenario.Options{Preset: "default", Quick: true}, "default", "", 25, 20 * time.Second, 20 * time.Second, nil},
		{"duration override", scenario.Options{Duration: 30 * time.Second}, "seed", "11", 10, 30 * time.Second, 60 * time.Second, []string{"Load for 30s", "request timeout 1m0s"}},
		{"timeout override", scenario.Options{Timeout: 5 * time.Second}, "seed", "11", 10, 60 * time.Second, 5 * time.Second, []string{"request timeout 5s"}},
		{"both override quick", scenario.Options{Quick: true, Duration: 7 * time.Second, Timeout: 3 * time.Second}, "seed", "11", 10, 7 * time.Second, 3 * time.Second, []string{"Load for 7s", "request timeout 3s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := Scenario{}.Plan(tt.opts)
			if err != nil {
				t.Fatalf("Plan: %v", err)
			}
			if plan.Preset != tt.preset || len(plan.Levels) != 1 {
				t.Fatalf("preset %q, %d levels; want %q and one level", plan.Preset, len(plan.Levels), tt.preset)
			}
			lv := plan.Levels[0]
			open, ok := lv.Load.(load.OpenLoop)
			if lv.Name != tt.preset || !ok {
				t.Fatalf("level %q load %T, want an open loop", lv.Name, lv.Load)
			}
			if got, ok := lv.Env["WORKER_THREADS"]; got != tt.workers || ok != (tt.workers != "") {
				t.Errorf("WORKER_THREADS = %q (set %v), want %q", got, ok, tt.workers)
			}
			want := []streamWant{
				{TagInstant, "/instant", 10}, {TagDelayed, "/delayed", tt.delayedRate},
				{TagLiveness, "/actuator/health/liveness", 1}, {TagReadiness, "/actuator/health/readiness", 1},
			}
			if len(open.Streams) != len(want) {
				t.Fatalf("%d streams, want %d", len(open.Streams), len(want))
			}
			for i, w := range want {
				s := open.Streams[i]
				if s.Tag != w.tag || s.Request.Path != w.path || s.Pacer.Rate() != w.rate || s.Connections != 0 {
					t.Errorf("stream %d = %s %s %v/s (connections %d), want %s %s %v/s unbounded", i, s.Tag, s.Request.Path, s.Pacer.Rate(), s.Connections, w.tag, w.path, w.rate)
				}
			}
			if open.Duration != tt.duration || open.Timeout != tt.timeout {
				t.Errorf("duration %s timeout %s, want %s and %s", open.Duration, open.Timeout, tt.duration, tt.timeout)
			}
			if wantDrain := min(tt.timeout, 12*time.Second); open.Drain != wantDrain {
				t.Errorf("drain %s, want %s", open.Drain, wantDrain)
			}
			if lv.Expected() != tt.duration+open.Drain {
				t.Errorf("Expected %s, want %s", lv.Expected(), tt.duration+open.Drain)
			}
			notes := strings.Join(plan.Notes, "\n")
			for _, w := range tt.noteHas {
				if !strings.Contains(notes, w) {
					t.Errorf("notes %q do not mention %q", notes, w)
				}
			}
			if tt.duration == 60*time.Second && tt.timeout == 60*time.Second && strings.Contains(notes, "Load for") {
				t.Errorf("notes mention a changed length for the study's own: %q", notes)
			}
		})
	}
}

// The default preset keeps each stack's own pool, so /delayed must hold more requests in
// flight than Tomcat's 200 threads.
func TestPlanDefaultOverrunsTomcat(t *testing.T) {
	plan, err := Scenario{}.Plan(scenario.Options{Preset: "default"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range plan.Levels[0].Load.(load.OpenLoop).Streams {
		if s.Tag == TagDelayed {
			if inFlight := s.Pacer.Rate() * delayedFor.Seconds(); inFlight <= 200 {
				t.Fatalf("/delayed at %v/s holds %v requests, not more than 200", s.Pacer.Rate(), inFlight)
			}
			return
		}
	}
	t.Fatal("no delayed stream")
}

func TestPlanUnknownPreset(t *testing.T) {
	_, err := Scenario{}.Plan(scenario.Options{Preset: "nosuch"})
	if err == nil {
		t.Fatal("Plan accepted an unknown preset")
	}
	for _, w := range []string{`"nosuch"`, "seed, default"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func TestScenarioDescription(t *testing.T) {
	s := Scenario{}
	if s.Name() != "isolation" || s.Title() == "" || !strings.Contains(s.Study(), "004") {
		t.Errorf("Name %q Title %q Study %q", s.Name(), s.Title(), s.Study())
	}
	for _, p := range s.Presets() {
		if _, err := s.Plan(scenario.Options{Preset: p}); err != nil {
			t.Errorf("listed preset %q does not plan: %v", p, err)
		}
	}
}

// fig describes one contender's summary: its fast tags' merged p50/p99 (ms), errors on
// the instant tag, outcome.
type fig struct {
	name          string
	instantP50    float64
	instantP99    float64
	probeP50      float64
	probeP99      float64
	instantErrors int64
	// instantFailed of 100 /instant requests got a wrong answer (a 503: kind status), as
	// the load engine classifies them.
	instantFailed int64
	delayedP50    float64 // 0: the async services' 10 s
	delayedP99    float64
	outcome       string
	clientBound   bool
}

func summary(f fig) results.CellSummary {
	outcome := f.outcome
	if outcome == "" {
		outcome = results.OutcomeOK
	}
	lat := func(p50, p99 float64) results.Latency {
		return results.Latency{Count: 100, P50: p50, P90: p99, P99: p99, Max: p99}
	}
	if f.delayedP50 == 0 {
		f.delayedP50, f.delayedP99 = 10000, 10050
	}
	instant := results.TagSummary{Tag: TagInstant, Merged: lat(f.instantP50, f.instantP99), Sent: 100, Errors: f.instantErrors}
	if f.instantErrors > 0 {
		instant.ErrKinds = map[string]int64{results.ErrKindTimeout: f.instantErrors} // slow, not wrong
	}
	if f.instantFailed > 0 {
		instant.Errors += f.instantFailed
		instant.ErrKinds = map[string]int64{"status": f.instantFailed}
		instant.ErrorPct = float64(instant.Errors)
	}
	return results.CellSummary{
		Contender: f.name, Level: "seed", Repeats: 1, Outcomes: []string{outcome}, ClientBnd: f.clientBound,
		Tags: []results.TagSummary{
			instant,
			// /delayed is slow by design and never decides a verdict.
			{Tag: TagDelayed, Merged: lat(f.delayedP50, f.delayedP99)},
			{Tag: TagLiveness, Merged: lat(f.probeP50, f.probeP99)},
			{Tag: TagReadiness, Merged: lat(f.probeP50, f.probeP99)},
		},
	}
}

// delayedCells are repeats of f's /delayed, each p99 0.05 % above the last: what claim (d)
// judges over its repeats (scenario.Samples).
func delayedCells(f fig, repeats int) []results.Cell {
	cs := summary(f)
	var out []results.Cell
	for r := range repeats {
		p99 := cs.Tags[1].Merged.P99 * (1 + 0.0005*float64(r))
		out = append(out, results.Cell{Contender: f.name, Level: "seed", Repeat: r + 1, Outcome: results.Outcome{Status: cs.Outcomes[0]}, ClientBound: f.clientBound,
			Tags: []results.Tag{{TagStats: results.TagStats{Tag: TagDelayed, Completed: 100}, Response: results.Latency{Count: 100, P99: p99}}}})
	}
	return out
}

var (
	isolatedFig = func(name string) fig { return fig{name: name, instantP50: 2, instantP99: 5, probeP50: 3, probeP99: 8} }
	starvedFig  = func(name string) fig {
		return fig{name: name, instantP50: 9000, instantP99: 30000, probeP50: 9000, probeP99: 30000, delayedP50: 59990, delayedP99: 60000}
	}
	// failingFig answers /instant at once, wrongly: a fast 503 from a server shedding load.
	failingFig = func(name string) fig {
		f := isolatedFig(name)
		f.instantFailed = 100
		return f
	}
)

func judgeRun(figs ...fig) ([]results.Verdict, map[string]results.Claim) {
	return judgeAt("seed", figs...)
}

// judgeAt judges figs at preset, with the study's 60 s of load and 60 s timeout.
func judgeAt(preset string, figs ...fig) ([]results.Verdict, map[string]results.Claim) {
	return judgeRunOf(&results.Run{Scenario: results.ScenarioInfo{Name: "isolation", Preset: preset, Duration: 60, Timeout: 60}}, figs...)
}

func judgeRunOf(run *results.Run, figs ...fig) ([]results.Verdict, map[string]results.Claim) {
	for _, f := range figs {
		run.Summary = append(run.Summary, summary(f))
		run.Cells = append(run.Cells, delayedCells(f, 5)...)
	}
	verdicts, claims := Scenario{}.Judge(run)
	byID := map[string]results.Claim{}
	for _, c := range claims {
		byID[c.ID] = c
	}
	return verdicts, byID
}

func TestJudgeVerdicts(t *testing.T) {
	noAnswers := isolatedFig("c")
	tests := []struct {
		name    string
		fig     fig
		edit    func(*results.CellSummary)
		verdict string
		whyHas  []string
	}{
		{"fast everywhere", isolatedFig("c"), nil, "isolated", []string{"instant p99 5.00 ms", "liveness p99 8.00 ms", "readiness p99 8.00 ms"}},
		{"instant p99 30 s", fig{name: "c", instantP50: 2, instantP99: 30000, probeP50: 3, probeP99: 8}, nil, "starved", []string{"instant p99 30.00 s", "isolated needs p99 < 100ms"}},
		{"probe slow only", fig{name: "c", instantP50: 2, instantP99: 5, probeP50: 3, probeP99: 150}, nil, "starved", []string{"liveness p99 150 ms", "readiness p99 150 ms"}},
		{"just under 100 ms", fig{name: "c", instantP50: 2, instantP99: 99.9, probeP50: 3, probeP99: 8}, nil, "isolated", nil},
		{"exactly 100 ms", fig{name: "c", instantP50: 2, instantP99: 100, probeP50: 3, probeP99: 8}, nil, "starved", nil},
		{"errors on a fast tag", fig{name: "c", instantP50: 2, instantP99: 5, probeP50: 3, probeP99: 8, instantErrors: 4}, nil, "starved", []string{"(4 errors)"}},
		{"no answers at all", noAnswers, func(cs *results.CellSummary) { cs.Tags[0].Merged = results.Latency{} }, "starved", []string{"instant"}},
		{"crashed", fig{name: "c", instantP50: 2, instantP99: 5, probeP50: 3, probeP99: 8, outcome: results.OutcomeCrashed}, nil, "crashed", []string{"crashed"}},
		{"unready", fig{name: "c", outcome: results.OutcomeUnready}, nil, "unready", nil},
		{"client-bound: no verdict on the server", fig{name: "c", instantP50: 2, instantP99: 5, probeP50: 3, probeP99: 8, clientBound: true}, nil, "inconclusive (client-bound)", []string{"client"}},
		{"client-bound even when slow", fig{name: "c", instantP50: 2, instantP99: 3000, probeP50: 3, probeP99: 8, clientBound: true}, nil, "inconclusive (client-bound)", nil},
		{"unresponsive", fig{name: "c", outcome: results.OutcomeUnresponsive}, nil, "unresponsive", []string{"unresponsive"}},
		{"fast 503s on /instant: failing, never isolated", failingFig("c"), nil, "failing (errors)", []string{"instant: 100.0 % of 100 requests failed (100 status)"}},
		{"fast 503s on a probe: failing", isolatedFig("c"), func(cs *results.CellSummary) {
			cs.Tags[2].Sent, cs.Tags[2].Errors, cs.Tags[2].ErrKinds = 60, 60, map[string]int64{"status": 60}
		}, "failing (errors)", []string{"liveness: 100.0 % of 60 requests failed"}},
		{"empty bodies on /instant: failing", isolatedFig("c"), func(cs *results.CellSummary) {
			cs.Tags[0].Errors, cs.Tags[0].ErrKinds = 2, map[string]int64{"body": 2}
		}, "failing (errors)", []string{"2 body"}},
		{"1 % failed is still judged, and errors are no isolation", isolatedFig("c"), func(cs *results.CellSummary) {
			cs.Tags[0].Errors, cs.Tags[0].ErrKinds = 1, map[string]int64{"status": 1}
		}, "starved", []string{"(1 errors)"}},
		{"slow /delayed does not matter", isolatedFig("c"), func(cs *results.CellSummary) { cs.Tags[1].Merged.P99 = 60000 }, "isolated", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cs := summary(tt.fig)
			if tt.edit != nil {
				tt.edit(&cs)
			}
			verdicts, _ := Scenario{}.Judge(&results.Run{Summary: []results.CellSummary{cs}})
			if len(verdicts) != 1 {
				t.Fatalf("%d verdicts, want 1", len(verdicts))
			}
			v := verdicts[0]
			if v.Contender != "c" || v.Level != "seed" || v.Verdict != tt.verdict {
				t.Fatalf("verdict %+v, want %s", v, tt.verdict)
			}
			for _, w := range tt.whyHas {
				if !strings.Contains(v.Why, w) {
					t.Errorf("why %q does not contain %q", v.Why, w)
				}
			}
			if tt.verdict == "isolated" && strings.Contains(v.Why, "client") {
				t.Errorf("why mentions the client: %q", v.Why)
			}
		})
	}
}

func TestJudgeClaimA(t *testing.T) {
	tests := []struct {
		name    string
		figs    []fig
		verdict string
		whyHas  string
	}{
		{"spring-mvc slow at the median", []fig{{name: "spring-mvc", instantP50: 5000, instantP99: 30000, probeP50: 4000, probeP99: 30000}}, "holds", "fastest fast endpoint 4.00 s"},
		{"every median exactly 1 s", []fig{{name: "spring-mvc", instantP50: 1000, instantP99: 30000, probeP50: 1000, probeP99: 30000}}, "holds", "1.00 s"},
		{"the study's medians: 56 s and 48 s", []fig{{name: "spring-mvc", instantP50: 56060, instantP99: 60000, probeP50: 47970, probeP99: 60000}}, "holds", "47.97 s"},
		{"the probes in seconds, /instant not: not every endpoint", []fig{{name: "spring-mvc", instantP50: 50, instantP99: 30000, probeP50: 2500, probeP99: 30000}}, "partly", "the fastest: 50 ms"},
		{"only the tail slow", []fig{{name: "spring-mvc", instantP50: 40, instantP99: 30000, probeP50: 30, probeP99: 20000}}, "partly", "not every median"},
		{"spring-mvc isolated", []fig{isolatedFig("spring-mvc")}, "fails", "stayed isolated"},
		{"spring-mvc absent", []fig{isolatedFig("spring-webflux")}, "untested", "not in this run"},
		{"spring-mvc crashed", []fig{{name: "spring-mvc", instantP50: 5000, instantP99: 30000, outcome: results.OutcomeCrashed}}, "untested", "crashed"},
		{"spring-mvc stopped answering", []fig{{name: "spring-mvc", outcome: results.OutcomeUnresponsive}}, "holds", "stopped answering"},
		{"spring-mvc client-bound is not counted", []fig{{name: "spring-mvc", instantP50: 5000, instantP99: 30000, probeP50: 4000, probeP99: 30000, clientBound: true}}, "untested", "inconclusive (client-bound)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, claims := judgeRun(tt.figs...)
			c, ok := claims["a"]
			if !ok {
				t.Fatalf("no claim a in %v", claims)
			}
			if c.Verdict != tt.verdict || !strings.Contains(c.Why, tt.whyHas) {
				t.Fatalf("claim a: %s (%s), want %s with %q", c.Verdict, c.Why, tt.verdict, tt.whyHas)
			}
			if c.Text == "" {
				t.Errorf("claim a has no text")
			}
		})
	}
}

func TestJudgeClaimB(t *testing.T) {
	async, all, flux := "spring-mvc-async", "spring-mvc-async-all", "spring-webflux"
	tests := []struct {
		name    string
		figs    []fig
		verdict string
		whyHas  []string
	}{
		{"all three isolated", []fig{isolatedFig(async), isolatedFig(all), isolatedFig(flux), starvedFig("spring-mvc")}, "holds", []string{async, all, flux}},
		{"one starved", []fig{isolatedFig(async), starvedFig(all), isolatedFig(flux)}, "partly", []string{all + " starved"}},
		{"one crashed", []fig{isolatedFig(async), isolatedFig(all), {name: flux, outcome: results.OutcomeCrashed}}, "partly", []string{flux + " crashed"}},
		{"one unresponsive", []fig{isolatedFig(async), isolatedFig(all), {name: flux, outcome: results.OutcomeUnresponsive}}, "partly", []string{flux + " unresponsive"}},
		{"all starved", []fig{starvedFig(async), starvedFig(all), starvedFig(flux)}, "fails", []string{async + " starved", flux + " starved"}},
		{"a fast 503 is no isolation", []fig{isolatedFig(async), isolatedFig(all), failingFig(flux)}, "partly", []string{flux + " failing (errors)", "100 status"}},
		{"all failing", []fig{failingFig(async), failingFig(all), failingFig(flux)}, "fails", []string{"failing (errors)"}},
		{"a client-bound one is not counted", []fig{isolatedFig(async), isolatedFig(all), func() fig { f := starvedFig(flux); f.clientBound = true; return f }()}, "holds where tested", []string{"untested: " + flux + " inconclusive (client-bound)"}},
		{"starved beats missing", []fig{starvedFig(async)}, "fails", []string{async}},
		// the first look's own choice of contenders is no mark against the study
		{"some not run", []fig{isolatedFig(async), isolatedFig(flux)}, "holds where tested", []string{"untested: " + all + " not run"}},
		{"only a not-run one failing", []fig{failingFig(async)}, "fails", []string{"untested: " + all + " not run", "untested: " + flux + " not run"}},
		{"none of them", []fig{isolatedFig("spring-mvc")}, "untested", []string{async + " not run", all + " not run", flux + " not run"}},
		{"empty run", nil, "untested", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, claims := judgeRun(tt.figs...)
			c, ok := claims["b"]
			if !ok {
				t.Fatalf("no claim b in %v", claims)
			}
			if c.Verdict != tt.verdict {
				t.Fatalf("claim b: %s (%s), want %s", c.Verdict, c.Why, tt.verdict)
			}
			for _, w := range tt.whyHas {
				if !strings.Contains(c.Why, w) {
					t.Errorf("why %q does not contain %q", c.Why, w)
				}
			}
		})
	}
}

func TestJudgeVirtualThreadsClaim(t *testing.T) {
	for _, tt := range []struct {
		figs    []fig
		verdict string
	}{
		{[]fig{isolatedFig("spring-mvc-virtual")}, "holds"},
		{[]fig{starvedFig("spring-mvc-virtual")}, "fails"},
		{[]fig{isolatedFig("spring-mvc")}, "untested"},
	} {
		_, claims := judgeRun(tt.figs...)
		if c := claims["arena-1"]; c.Verdict != tt.verdict {
			t.Errorf("claim arena-1 for %s: %s (%s), want %s", tt.figs[0].name, c.Verdict, c.Why, tt.verdict)
		}
	}
}

// Judge gives one verdict per summary, in order, and always all three claims.
func TestJudgeShape(t *testing.T) {
	verdicts, claims := judgeRun(isolatedFig("spring-webflux"), starvedFig("spring-mvc"), isolatedFig("spring-mvc-async"))
	var names []string
	for _, v := range verdicts {
		names = append(names, v.Contender+"="+v.Verdict)
	}
	if got := strings.Join(names, " "); got != "spring-webflux=isolated spring-mvc=starved spring-mvc-async=isolated" {
		t.Errorf("verdicts %s", got)
	}
	if len(claims) != 6 {
		t.Errorf("claims %v, want a, b, c, d, arena-1 and arena-2", claims)
	}
}

// arena-2 asks study 004 of every ecosystem by model: a thread-per-request contender with the
// study's pool starves, any other stays isolated. Each contender is a part; a blocking one
// that ran its own pool (no WORKER_THREADS) is untested, as is a verdict that says nothing
// either way; one runtime alone is no answer across ecosystems.
func TestJudgeEveryModelClaim(t *testing.T) {
	contender := func(name, model, runtime string, knobs ...string) results.Contender {
		return results.Contender{Name: name, Model: model, Runtime: runtime, Knobs: knobs}
	}
	python := []results.Contender{
		contender("python-flask", "thread-per-request", "python", "WORKER_THREADS"),
		contender("python-fastapi", "event-loop", "python"),
	}
	java := []results.Contender{contender("spring-mvc", "thread-per-request", "java", "WORKER_THREADS"), contender("spring-webflux", "reactive", "java")}
	for _, tt := range []struct {
		name       string
		contenders []results.Contender
		figs       []fig
		verdict    string
		why        []string
	}{
		{"sync starved, async isolated", append(python, java...),
			[]fig{starvedFig("python-flask"), isolatedFig("python-fastapi"), starvedFig("spring-mvc"), isolatedFig("spring-webflux")},
			"holds", []string{"python-flask (thread-per-request, python) starved", "python-fastapi (event-loop, python) isolated"}},
		{"an event loop starved", append(python, java...),
			[]fig{starvedFig("python-flask"), starvedFig("python-fastapi"), starvedFig("spring-mvc"), isolatedFig("spring-webflux")},
			"partly", []string{"python-fastapi (event-loop, python) starved"}},
		{"a blocking server isolated", append(python, java...),
			[]fig{isolatedFig("python-flask"), isolatedFig("python-fastapi"), starvedFig("spring-mvc"), isolatedFig("spring-webflux")},
			"partly", []string{"python-flask (thread-per-request, python) isolated", "though its model blocks a pool thread per request"}},
		{"its own pool", []results.Contender{contender("rust-threads", "thread-per-request", "rust"), java[0]},
			[]fig{isolatedFig("rust-threads"), starvedFig("spring-mvc")},
			"holds where tested", []string{"rust-threads (thread-per-request, rust) does not honour WORKER_THREADS"}},
		{"client-bound says nothing", append(python[:1:1], java[1]),
			[]fig{{name: "python-flask", clientBound: true}, isolatedFig("spring-webflux")},
			"holds where tested", []string{"python-flask (thread-per-request, python) inconclusive"}},
		{"one runtime", java, []fig{starvedFig("spring-mvc"), isolatedFig("spring-webflux")},
			"untested", []string{"more than one runtime; this run has 1"}},
	} {
		run := &results.Run{Scenario: results.ScenarioInfo{Name: "isolation", Preset: "seed", Duration: 60, Timeout: 60}, Contenders: tt.contenders}
		_, claims := judgeRunOf(run, tt.figs...)
		c := claims["arena-2"]
		if c.Verdict != tt.verdict {
			t.Errorf("%s: %s (%s), want %s", tt.name, c.Verdict, c.Why, tt.verdict)
		}
		for _, w := range tt.why {
			if !strings.Contains(c.Why, w) {
				t.Errorf("%s: why %q lacks %q", tt.name, c.Why, w)
			}
		}
	}
	run := &results.Run{Scenario: results.ScenarioInfo{Name: "isolation", Preset: "default", Duration: 60, Timeout: 60}, Contenders: python}
	if _, claims := judgeRunOf(run, starvedFig("python-flask"), isolatedFig("python-fastapi")); claims["arena-2"].Verdict != "untested" {
		t.Errorf("at preset default (no 11 threads): %+v", claims["arena-2"])
	}
}

// The study's claims are judged at its load, preset seed; at preset default (each stack's own
// pool) they are untested, while the lab's own claim is judged at any load.
func TestJudgeStudyClaimsOnlyAtTheStudysLoad(t *testing.T) {
	_, claims := judgeAt("default", starvedFig("spring-mvc"), isolatedFig("spring-mvc-async"), isolatedFig("spring-mvc-async-all"),
		isolatedFig("spring-webflux"), isolatedFig("spring-mvc-virtual"))
	for _, id := range []string{"a", "b", "c", "d"} {
		if c := claims[id]; c.Verdict != "untested" || !strings.Contains(c.Why, "preset seed (11 request threads); this run is preset default") {
			t.Errorf("claim %s at preset default: %s (%s)", id, c.Verdict, c.Why)
		}
	}
	if c := claims["arena-1"]; c.Verdict != "holds" {
		t.Errorf("claim arena-1 at preset default: %s (%s)", c.Verdict, c.Why)
	}
}

// (c): the sync servlet's /delayed waits beyond 50 s at its median (seeds/004 lines 24, 30),
// judged only where the load lasted, and its requests could wait, that long.
func TestJudgeClaimDelayedCompounds(t *testing.T) {
	slowDelayed := func(p50 float64) fig {
		f := starvedFig("spring-mvc")
		f.delayedP50, f.delayedP99 = p50, 60000
		return f
	}
	tests := []struct {
		name              string
		duration, timeout float64
		figs              []fig
		verdict           string
		whyHas            []string
	}{
		{"the study's 59.99 s", 60, 60, []fig{slowDelayed(59990)}, "holds", []string{"/delayed median 59.99 s"}},
		{"exactly 50 s", 60, 60, []fig{slowDelayed(50000)}, "holds", nil},
		{"30 s in a 60 s load: no compounding as the study's", 60, 60, []fig{slowDelayed(30000)}, "fails", []string{"30.00 s", "not beyond 50s"}},
		{"served in 10 s", 60, 60, []fig{isolatedFig("spring-mvc")}, "fails", []string{"10.00 s"}},
		{"a 20 s quick load cannot show 50 s", 20, 20, []fig{slowDelayed(20000)}, "untested here", []string{"needs ≥ 50 seconds of load", "this run gave 20", "as context only: spring-mvc /delayed median 20.00 s"}},
		{"a 10 s timeout cuts every wait", 60, 10, []fig{slowDelayed(10000)}, "untested here", []string{"needs ≥ 50 seconds of request timeout", "this run gave 10"}},
		{"spring-mvc failing is no compounding", 60, 60, []fig{failingFig("spring-mvc")}, "fails", []string{"failing (errors)"}},
		{"spring-mvc client-bound: untested", 60, 60, []fig{func() fig { f := slowDelayed(59990); f.clientBound = true; return f }()}, "untested", []string{"inconclusive (client-bound)"}},
		{"spring-mvc not run", 60, 60, []fig{isolatedFig("spring-webflux")}, "untested", []string{"spring-mvc not run"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run := &results.Run{Scenario: results.ScenarioInfo{Preset: "seed", Duration: tt.duration, Timeout: tt.timeout}}
			_, claims := judgeRunOf(run, tt.figs...)
			c := claims["c"]
			if c.Verdict != tt.verdict {
				t.Fatalf("claim c: %s (%s), want %s", c.Verdict, c.Why, tt.verdict)
			}
			for _, w := range tt.whyHas {
				if !strings.Contains(c.Why, w) {
					t.Errorf("why %q does not contain %q", c.Why, w)
				}
			}
			if len(c.Conditions) != 2 || c.Conditions[0].Given != tt.duration || c.Conditions[1].Given != tt.timeout {
				t.Errorf("conditions %+v, want the load's length and timeout as given", c.Conditions)
			}
		})
	}
}

// (d): under the async services /delayed stays at 10 s (seeds/004 lines 37, 43), each its
// own part: one not run is untested, one that compounds or fails is a mark against.
func TestJudgeClaimDelayedStays(t *testing.T) {
	async, all, flux := "spring-mvc-async", "spring-mvc-async-all", "spring-webflux"
	compounding := func(name string) fig { f := isolatedFig(name); f.delayedP50, f.delayedP99 = 30000, 59000; return f }
	tests := []struct {
		name    string
		figs    []fig
		verdict string
		whyHas  []string
	}{
		{"all three at 10 s", []fig{isolatedFig(async), isolatedFig(all), isolatedFig(flux)}, "holds", []string{async + " /delayed p99: median 10.06 s, 93 % interval 10.05–10.07 (5 repeats), inside 10 ± 10 % (9–11)"}},
		{"one compounds", []fig{isolatedFig(async), compounding(all), isolatedFig(flux)}, "partly", []string{all + " /delayed p99: median 59.06 s, 93 % interval 59–59.12 (5 repeats), wholly outside 10 ± 10 %"}},
		{"one not run", []fig{isolatedFig(async), isolatedFig(flux)}, "holds where tested", []string{"untested: " + all + " not run"}},
		{"one failing", []fig{isolatedFig(async), isolatedFig(all), failingFig(flux)}, "partly", []string{flux + " failing (errors)"}},
		{"none run", []fig{starvedFig("spring-mvc")}, "untested", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, claims := judgeRun(tt.figs...)
			c := claims["d"]
			if c.Verdict != tt.verdict {
				t.Fatalf("claim d: %s (%s), want %s", c.Verdict, c.Why, tt.verdict)
			}
			for _, w := range tt.whyHas {
				if !strings.Contains(c.Why, w) {
					t.Errorf("why %q does not contain %q", c.Why, w)
				}
			}
		})
	}
}

// (d) on three repeats: no 90 % interval for a median, so "stays at 10 s" is not shown,
// never held on the merged figure.
func TestJudgeClaimDelayedStaysOnThreeRepeats(t *testing.T) {
	run := &results.Run{Scenario: results.ScenarioInfo{Name: "isolation", Preset: "seed", Duration: 60, Timeout: 60}}
	for _, n := range []string{"spring-mvc-async", "spring-mvc-async-all", "spring-webflux"} {
		f := isolatedFig(n)
		run.Summary = append(run.Summary, summary(f))
		run.Cells = append(run.Cells, delayedCells(f, 3)...)
	}
	_, claims := Scenario{}.Judge(run)
	for _, c := range claims {
		if c.ID == "d" && (c.Verdict != results.ClaimNotShown || !strings.Contains(c.Why, "median 10.06 s, 75 % interval 10.05–10.06 (3 repeats); 3 repeats give no 90 % interval for the median (5 do)")) {
			t.Errorf("claim d on three repeats: %s (%s)", c.Verdict, c.Why)
		}
	}
}

// (d) at a request timeout under the 10 s wait (a quick run's 5 s, say): every /delayed ends at
// the timeout, so the claim is untested here, never failed on a cut-off wait.
func TestJudgeClaimDelayedStaysNeedsATimeoutPastTheWait(t *testing.T) {
	cut := isolatedFig("spring-webflux")
	cut.delayedP50, cut.delayedP99 = 5000, 5010
	for _, tt := range []struct {
		timeout float64
		verdict string
	}{{5, results.ClaimUntestedHere}, {10, results.ClaimUntestedHere}, {11, "partly"}, {60, "partly"}} {
		run := &results.Run{Scenario: results.ScenarioInfo{Name: "isolation", Preset: "seed", Duration: 60, Timeout: tt.timeout}}
		_, claims := judgeRunOf(run, cut, isolatedFig("spring-mvc-async"), isolatedFig("spring-mvc-async-all"))
		c := claims["d"]
		if !strings.HasPrefix(c.Verdict, tt.verdict) {
			t.Errorf("timeout %g s: claim d %s (%s), want %s", tt.timeout, c.Verdict, c.Why, tt.verdict)
		}
		if tt.timeout < 11 && !strings.Contains(c.Why, "needs ≥ 11 seconds of request timeout") {
			t.Errorf("timeout %g s: why %q does not name the timeout it needs", tt.timeout, c.Why)
		}
	}
}

// A starved median is set by the load's length, its timeout and the threads: where the run
// gave less than the study, the findings say so from what the run recorded.
func TestStarvedMedianDiffersForTheRunsConditions(t *testing.T) {
	var inst, async scenario.Published
	for _, p := range (Scenario{}).Reproduction().Published {
		switch {
		case p.Ours.Contender == "spring-mvc" && p.Ours.Tag == TagInstant:
			inst = p
		case p.Ours.Contender == "spring-mvc-async" && p.Ours.Tag == TagInstant:
			async = p
		}
		if p.Value <= 0 {
			t.Errorf("%s: no value for %s", p.What, p.Theirs)
		}
	}
	if inst.Value != 56060 || inst.Differs == nil || async.Value != 3.69 || async.Differs == nil {
		t.Fatalf("spring-mvc /instant %+v, spring-mvc-async /instant %+v", inst, async)
	}
	// A served request's median: the study's machine is not stated, and both are far under
	// the claim's 100 ms; a median that is not a served request's has no such reason.
	if why := async.Differs(nil, 1.4); !strings.Contains(why, "ours 1.40 ms, the study's 3.69 ms") || !strings.Contains(why, "states no machine") {
		t.Errorf("a served median: %q", why)
	}
	if why := async.Differs(nil, 250); why != "" {
		t.Errorf("a median of 250 ms is no served request's: %q", why)
	}
	quick := &results.Run{Scenario: results.ScenarioInfo{Duration: 20, Timeout: 20,
		Levels: []results.Level{{Name: "seed", Env: map[string]string{"WORKER_THREADS": "11"}}}}}
	why := inst.Differs(quick, 15000)
	for _, w := range []string{"ours 15.00 s", "lasted 20 s (the study's 60 s)", "timed out at 20 s", "no wait can pass 20.00 s"} {
		if !strings.Contains(why, w) {
			t.Errorf("why %q does not contain %q", why, w)
		}
	}
	if strings.Contains(why, "WORKER_THREADS") {
		t.Errorf("the study's threads are no reason: %q", why)
	}
	study := &results.Run{Scenario: results.ScenarioInfo{Duration: 60, Timeout: 60,
		Levels: []results.Level{{Name: "seed", Env: map[string]string{"WORKER_THREADS": "11"}}}}}
	if why := inst.Differs(study, 15000); why != "" {
		t.Errorf("at the study's conditions there is no recorded reason, got %q", why)
	}
	study.Scenario.Levels[0].Env = nil
	if why := inst.Differs(study, 15000); !strings.Contains(why, `WORKER_THREADS=""`) {
		t.Errorf("a run without the study's threads: %q", why)
	}
}
