package findings

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/golden"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/scenarios"
)

// registry is the lab's scenarios, handed to the findings as cmd hands them.
var registry = Scenarios{All: scenarios.All(), Rejudge: scenarios.Rejudge, ClaimsOf: scenarios.ClaimsOf}

var day = time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)

// cell is one repeat of a contender at a level: 1000 responses of tag at ms, at rps.
func cell(t *testing.T, contender, level, tag string, repeat int, rps, ms float64) results.Cell {
	t.Helper()
	h := results.NewHistogram()
	for i := 0; i < 1000; i++ {
		_ = h.RecordValue(int64(ms * 1e6))
	}
	enc, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	return results.Cell{Contender: contender, Level: level, Repeat: repeat, Outcome: results.Outcome{Status: results.OutcomeOK},
		Tags: []results.Tag{{TagStats: results.TagStats{Tag: tag, Sent: 1000, Completed: 1000, Status: map[string]int64{"2xx": 1000}},
			RPS: rps, Response: results.LatencyOf(h), Service: results.LatencyOf(h), ResponseHist: enc, ServiceHist: enc}},
		Server: results.Resources{Summary: results.Usage{CPUPctMean: 60, RSSMBMax: 300, Samples: 10}}}
}

// downstreamRun is a run of the downstream scenario: per contender, its requests/s at self
// in each of two repeats.
func downstreamRun(t *testing.T, id, preset string, quick bool, rps map[string][2]float64, order ...string) *results.Run {
	t.Helper()
	run := &results.Run{Schema: results.SchemaVersion, ID: id, Started: day, Status: results.RunComplete,
		Scenario: results.ScenarioInfo{Name: "downstream", Preset: preset, Quick: quick, Repeat: 2,
			Levels: []results.Level{{Name: "self", Load: "closed loop, 100 connections"}}},
		Env: results.Environment{CPUModel: "AMD EPYC", Cores: 2, MemoryGB: 24, ServerCPUs: "1", ClientCPUs: "0", HeapMB: 512, JavaVersion: "25", ArenaRev: "4f3e949"}}
	for _, name := range order {
		model := map[bool]string{true: "goroutines", false: "reactive"}[name == "go-nethttp"]
		run.Contenders = append(run.Contenders, results.Contender{Name: name, Stack: name + " stack", Model: model, Verified: results.VerifyPassed})
		for r, v := range rps[name] {
			c := cell(t, name, "self", "data", r+1, v, 20)
			if preset == "steady" {
				c.Numbers = map[string]float64{load.NumberWarmup: 30, load.NumberSettled: 1}
			}
			run.Cells = append(run.Cells, c)
		}
	}
	return run
}

// reproduction writes a reproduction of the downstream study into a folder: the study's
// three stacks at its preset and in the steady state, and go-nethttp in the matrix's form;
// the other studies planned but not run.
func reproduction(t *testing.T) (*results.Reproduction, string) {
	t.Helper()
	dir := t.TempDir()
	finished := day.Add(75 * time.Minute)
	rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-20261123-093000", Command: []string{"arena", "reproduce"},
		Started: day, Finished: &finished, Status: results.RunComplete, Repeat: 2,
		Steps: []results.Step{
			{RunSpec: results.RunSpec{Scenario: "isolation", Preset: "seed", Contenders: []string{"spring-mvc"}}, Part: results.PartStudies},
			{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "downstream", Preset: "seed", Contenders: []string{"spring-webflux", "spring-webflux-fn", "vertx"}}, Run: "20261123-094000-downstream", Status: results.RunComplete},
			{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "downstream", Preset: "steady", Levels: []string{"self"}, Contenders: []string{"spring-webflux", "spring-webflux-fn", "vertx"}}, Run: "20261123-095000-downstream", Status: results.RunComplete},
			{Part: results.PartMatrix, RunSpec: results.RunSpec{Scenario: "downstream", Preset: "seed", Quick: true, Contenders: []string{"go-nethttp"}}, Run: "20261123-100000-downstream", Status: results.RunComplete},
			{Part: results.PartMatrix, RunSpec: results.RunSpec{Scenario: "stream", Preset: "default", Quick: true, Contenders: []string{"go-nethttp"}}, Run: "20261123-101000-stream", Status: results.RunRunning}, // begun, never saved
		}}
	study := downstreamRun(t, "20261123-094000-downstream", "seed", false, map[string][2]float64{
		"spring-webflux": {2600, 2650}, "spring-webflux-fn": {2690, 2700}, "vertx": {6600, 6700}}, "spring-webflux", "spring-webflux-fn", "vertx")
	steady := downstreamRun(t, "20261123-095000-downstream", "steady", false, map[string][2]float64{
		"spring-webflux": {4000, 4100}, "spring-webflux-fn": {4050, 4150}, "vertx": {10500, 10700}}, "spring-webflux", "spring-webflux-fn", "vertx")
	matrix := downstreamRun(t, "20261123-100000-downstream", "seed", true, map[string][2]float64{"go-nethttp": {15000, 15200}}, "go-nethttp")
	for i := range study.Cells {
		study.Cells[i].Runtime = runtimeRead(study.Cells[i].Contender, study.Cells[i].Repeat)
	}
	for _, r := range []*results.Run{study, steady, matrix} {
		d := filepath.Join(dir, r.ID)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.Save(r, d); err != nil {
			t.Fatal(err)
		}
	}
	return rep, dir
}

// runtimeRead is what a cell of contender could have read from its processes: the JVM as
// arena starts it, Vert.x's two event loops, Reactor's four, and a JVM that would not attach
// in spring-webflux-fn's second repeat.
func runtimeRead(contender string, repeat int) *results.Runtime {
	none := 0
	jvm := &results.JVM{Pid: 10, Collector: "Serial", InitialHeapMB: 512, MaxHeapMB: 512, ActiveProcessorCountFlag: -1,
		Processors: 1, VirtualThreadParallelism: 1, Carriers: &none}
	threads := map[string]int{"main": 1, "C CompilerThread": 2, "VM Thread": 1}
	switch contender {
	case "vertx":
		threads["vert.x-eventloop-thread-"] = 2
		threads["vert.x-acceptor-thread-"] = 1
	default:
		threads["reactor-http-epoll-"] = 4
	}
	rt := &results.Runtime{JVM: jvm, Threads: threads, Processes: map[string]int{"java": 1}}
	if contender == "spring-webflux-fn" && repeat == 2 {
		rt.JVM, rt.Unread = nil, map[string]string{"jvm": "jcmd 10: exit status 1: Unable to open socket file"}
		rt.Threads["reactor-http-epoll-"] = 3
	}
	return rt
}

func claimByID(t *testing.T, f *Findings, scenario, id string) Claim {
	t.Helper()
	for _, s := range f.Studies {
		if s.Scenario != scenario {
			continue
		}
		for _, c := range s.Claims {
			if c.ID == id {
				return c
			}
		}
	}
	t.Fatalf("no claim %s of %s", id, scenario)
	return Claim{}
}

func TestBuild(t *testing.T) {
	rep, dir := reproduction(t)
	f, err := Build(rep, dir, registry)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Runs) != 3 {
		t.Fatalf("%d runs; want the three that saved results (the stream run never did)", len(f.Runs))
	}
	var names []string
	for _, s := range f.Studies {
		names = append(names, s.Scenario)
	}
	if strings.Join(names, ",") != "isolation,sleep,downstream,chat,stream,database" {
		t.Errorf("studies %v; want all five and arena's own, each with its section", names)
	}

	a := claimByID(t, f, "downstream", "a")
	// Two repeats a side give no 90 % interval for the 2.5× (scenarios/downstream): the size
	// is not shown, the order holds.
	if a.Verdict != results.ClaimHoldsWhereTested || !strings.Contains(a.Why, "vertx 6650, spring-webflux 2625 requests/s: ratio 2.53") {
		t.Errorf("claim a: %s: %s", a.Verdict, a.Why)
	}
	if !strings.Contains(a.RestsOn, "the study's form (preset seed) on the study's stacks: run 20261123-094000-downstream") {
		t.Errorf("claim a rests on %q", a.RestsOn)
	}
	if a.Steady == nil || !strings.HasPrefix(a.Steady.Why, "in the steady state: not shown: vertx 10600, spring-webflux 4050 requests/s") || !strings.Contains(a.Steady.Why, "vertx settled after 30 s") {
		t.Errorf("claim a in the steady state: %+v", a.Steady)
	}
	if a.Every == nil || a.Every.Verdict != a.Verdict {
		t.Errorf("claim a over every contender: %+v", a.Every)
	}
	figs := map[string]Figure{}
	for _, fg := range a.Figures {
		figs[fg.What] = fg
	}
	vx := figs["Vert.x, requests/s"]
	if vx.Theirs != "6,654.65 requests/s" || !strings.Contains(vx.Source, "seeds/002 line 228") || vx.Ours.Median != 6650 || vx.Ours.Min != 6600 || vx.Ours.Max != 6700 || vx.Steady.Median != 10600 {
		t.Errorf("Vert.x's figure: %+v", vx)
	}
	ratio := figs["Vert.x over WebFlux annotated, throughput"]
	if !ratio.Ours.Measured || ratio.Ours.Text() != "2.53× (2.49–2.58), 0 % errors" || ratio.Steady.Text() != "2.62× (2.56–2.67), 0 % errors" {
		t.Errorf("the ratio: ours %q, steady %q", ratio.Ours.Text(), ratio.Steady.Text())
	}

	if iso := claimByID(t, f, "isolation", "a"); iso.Verdict != results.ClaimUntested || iso.Why != "not run in this reproduction" || iso.Text == "" {
		t.Errorf("a study not run: %+v", iso)
	}
	for _, s := range f.Studies {
		if s.Scenario == "downstream" && (!strings.Contains(s.Ours.Machine, "each server on CPU 1 (one core)") || !strings.Contains(s.Setup.Machine, "4 vCPUs")) {
			t.Errorf("setups: theirs %q, ours %q", s.Setup.Machine, s.Ours.Machine)
		}
	}
}

// The markdown is the findings as docs/findings.md has them, saying which arena measured
// and which judged.
func TestWriteMarkdown(t *testing.T) {
	rep, dir := reproduction(t)
	f, err := Build(rep, dir, registry)
	if err != nil {
		t.Fatal(err)
	}
	f.JudgedBy = "8dde661"
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, f, "runs/reproduce-20261123-093000/findings.html", "findings.png"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "Measured by arena 4f3e949; judged again and written by arena 8dde661.") {
		t.Error("the page does not say which arena measured and which judged")
	}
	golden.Check(t, "findings.md", buf.Bytes())
}

// Rendering a reproduction again with the same arena gives the same bytes: each rendering
// judges the runs afresh from the folder (maps ranged in a new order each time), and nothing
// of the moment it ran (a clock, a path of its own) reaches the page.
func TestRenderingAgainGivesTheSameBytes(t *testing.T) {
	rep, dir := reproduction(t)
	render := func() []byte {
		f, err := Build(rep, dir, registry)
		if err != nil {
			t.Fatal(err)
		}
		f.JudgedBy = "8dde661"
		var buf bytes.Buffer
		if err := WriteMarkdown(&buf, f, "findings.html", ""); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	first := render()
	for i := range 5 {
		if again := render(); !bytes.Equal(again, first) {
			t.Fatalf("rendering %d differs from the first:\n%s", i+2, firstDiff(first, again))
		}
	}
}

// firstDiff is the first line where two renderings part, for a failure to show.
func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n%s\n%s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("one is %d lines, the other %d", len(la), len(lb))
}

// Our figure beside a study's is the server's plain measure: a contender whose deliveries had
// integrity faults has none (and the page says why), a client-bound one is marked.
func TestFaultyAndClientBoundFiguresCarryTheirCaveat(t *testing.T) {
	run := downstreamRun(t, "20261123-093000-downstream", "seed", false,
		map[string][2]float64{"vertx": {9000, 9100}, "spring-webflux": {2000, 2100}}, "vertx", "spring-webflux")
	run.Cells[0].Faults = map[string]int64{results.FaultLost: 7}
	run.Cells[2].ClientBound = true
	var err error
	if run.Summary, err = results.Summarise(run.Cells); err != nil {
		t.Fatal(err)
	}
	read := func(contender string) Value {
		return read(run, scenario.Published{Ours: scenario.Read{Contender: contender, Level: "self", Figure: "rps", Tag: "data", Unit: "requests/s"}})
	}
	if v := read("vertx"); v.Measured || v.Caveat != "integrity faults: 7 lost" || v.Text() != "— [integrity faults: 7 lost]" {
		t.Errorf("faulty: %+v, %q", v, v.Text())
	}
	if v := read("spring-webflux"); !v.Measured || v.Caveat != "client-bound" || !strings.HasSuffix(v.Text(), "[client-bound]") {
		t.Errorf("client-bound: %+v, %q", v, v.Text())
	}
}

// A claim whose conditions the run did not give reads untested here, with the conditions,
// never fails: the page shows what it depends on, where from, and what the run gave.
func TestUntestedHereIsShownWithItsConditions(t *testing.T) {
	cond := results.Condition{Name: "server cores", Needs: 4, Source: "seeds/000 line 12", Given: 1, Met: false}
	c := Claim{ID: "b", Study: &results.Claim{ID: "b", Text: "cluster improves it", Verdict: results.ClaimUntestedHere,
		Why: "needs ≥ 4 server cores (seeds/000 line 12), this run gave 1", Conditions: []results.Condition{cond}}}
	run := &results.Run{ID: "r1", Scenario: results.ScenarioInfo{Preset: "seed"}}
	c.decide(run, nil)
	if c.Verdict != results.ClaimUntestedHere || !strings.Contains(c.Why, "this run gave 1") || len(c.Conditions) != 1 || !strings.HasSuffix(c.RestsOn, "did not give the conditions the claim depends on (server cores ≥ 4, given 1)") {
		t.Errorf("decided %q: %s (rests on %s), conditions %v", c.Verdict, c.Why, c.RestsOn, c.Conditions)
	}
	if got := ConditionText(cond); got != "server cores: needs ≥ 4 (seeds/000 line 12); the run gave 1: not met" {
		t.Errorf("condition reads %q", got)
	}
	var b strings.Builder
	writeClaim(&b, c)
	if !strings.Contains(b.String(), "**untested here**") || !strings.Contains(b.String(), "Depends on:\n\n- server cores: needs ≥ 4 (seeds/000 line 12); the run gave 1: not met") {
		t.Errorf("markdown:\n%s", b.String())
	}
	// The study's stacks never ran it and every contender's runs lacked a condition: the
	// latter is shown (sleep arena-1: spring-mvc-virtual is in the matrix, at a busy core).
	every := *c.Study
	c = Claim{ID: "arena-1", Study: &results.Claim{ID: "arena-1", Verdict: results.ClaimUntested, Why: "needs spring-mvc-virtual"}, Every: &every}
	c.decide(run, run)
	if c.Verdict != results.ClaimUntestedHere || len(c.Conditions) != 1 || !strings.Contains(c.RestsOn, "server cores ≥ 4, given 1") {
		t.Errorf("untested in the study's form, untested here over every contender: decided %q: %s (rests on %s)", c.Verdict, c.Why, c.RestsOn)
	}
	// ...and rests on the matrix's runs: a reproduction that ran no matrix is not set against it.
	if c.Basis != BasisEvery {
		t.Errorf("untested here over every contender rests on %q, want %q", c.Basis, BasisEvery)
	}
	// Holds where tested is a verdict of evidence, shown as it is.
	c = Claim{ID: "a", Study: &results.Claim{ID: "a", Verdict: results.ClaimHoldsWhereTested, Why: "2 of 2 parts run hold"}}
	c.decide(run, nil)
	if c.Verdict != results.ClaimHoldsWhereTested || !strings.Contains(c.RestsOn, "run r1") {
		t.Errorf("holds where tested decided as %q, rests on %s", c.Verdict, c.RestsOn)
	}
	for _, w := range []string{results.ClaimUntestedHere, results.ClaimHoldsWhereTested} {
		if tone := results.ToneOf(w); tone != results.Neutral {
			t.Errorf("%q reads %s; want neutral: never a mark against the claim", w, tone)
		}
	}
}

// Runs of the study's form at several server core counts: the page gives the verdict at
// each and where it changes.
func TestVerdictByCoreCount(t *testing.T) {
	rep, dir := reproduction(t)
	four := downstreamRun(t, "20261123-110000-downstream", "seed", false, map[string][2]float64{
		"spring-webflux": {6000, 6100}, "spring-webflux-fn": {6050, 6100}, "vertx": {6600, 6700}}, "spring-webflux", "spring-webflux-fn", "vertx")
	four.Env.ServerCPUs = "0-3"
	d := filepath.Join(dir, four.ID)
	if err := os.MkdirAll(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.Save(four, d); err != nil {
		t.Fatal(err)
	}
	rep.Steps = append(rep.Steps, results.Step{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "downstream", Preset: "seed", Contenders: []string{"spring-webflux", "spring-webflux-fn", "vertx"}}, Run: four.ID, Status: results.RunComplete})
	f, err := Build(rep, dir, registry)
	if err != nil {
		t.Fatal(err)
	}
	a := claimByID(t, f, "downstream", "a")
	if len(a.ByCores) != 2 || a.ByCores[0].Cores != 1 || a.ByCores[1].Cores != 4 || a.ByCores[1].Run != four.ID {
		t.Fatalf("by cores: %+v", a.ByCores)
	}
	// Two repeats a side give no 90 % interval for the size (scenarios/downstream): on 1 core
	// the order holds beside it, on 4 the 1.1× is not separated.
	if a.ByCores[0].Verdict != results.ClaimHoldsWhereTested || a.ByCores[1].Verdict != results.ClaimNotShown {
		t.Errorf("vertx 2.5× WebFlux on 1 core and 1.1× on 4: %+v", a.ByCores)
	}
	changes := strings.Join(a.CoreChanges(), "; ")
	if !strings.HasPrefix(changes, "changes from holds where tested at 1 server core to ") || !strings.HasSuffix(changes, " at 4 server cores") {
		t.Errorf("changes: %q", changes)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, f, "", ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "| server cores | verdict | why | run |") || !strings.Contains(buf.String(), "By core count: "+changes) {
		t.Errorf("the markdown lacks the verdict by core count")
	}
	if b := claimByID(t, f, "downstream", "b"); len(b.ByCores) != 2 || !strings.HasPrefix(strings.Join(b.CoreChanges(), ""), "the same, not shown, at every core count run") {
		t.Errorf("claim b by cores: %+v, %v", b.ByCores, b.CoreChanges())
	}
	if one := claimByID(t, f, "downstream", "a"); one.Verdict != results.ClaimHoldsWhereTested {
		t.Errorf("the claim's own verdict is the first study run's: %s", one.Verdict)
	}
}

// Where ours is more than 2× from the study's figure, the page says why, from the scenario's
// Differs, or plainly that no reason was derived; within 2×, or with no number of the study's,
// nothing; a failing cell's figure is never set beside the study's.
func TestWhyOursDiffers(t *testing.T) {
	run := downstreamRun(t, "20261123-093000-downstream", "seed", false,
		map[string][2]float64{"vertx": {9000, 9100}, "spring-webflux": {2000, 2100}}, "vertx", "spring-webflux")
	var err error
	if run.Summary, err = results.Summarise(run.Cells); err != nil {
		t.Fatal(err)
	}
	rps := scenario.Read{Contender: "spring-webflux", Level: "self", Figure: "rps", Tag: "data", Unit: "requests/s"}
	model := func(r *results.Run, ours float64) string {
		return fmt.Sprintf("one core (CPU %s) against the study's 4: %.0f requests/s", r.Env.ServerCPUs, ours)
	}
	for _, tt := range []struct {
		name  string
		value float64
		why   func(*results.Run, float64) string
		want  string
	}{
		{"more than 2× below, with a reason", 6000, model, "one core (CPU 1) against the study's 4: 2050 requests/s"},
		{"more than 2× above, with none", 1000, nil, NoReason},
		{"a reason that comes out empty", 1000, func(*results.Run, float64) string { return "" }, NoReason},
		{"within 2×", 3000, model, ""},
		{"no number of the study's", 0, model, ""},
	} {
		p := scenario.Published{What: "WebFlux", Value: tt.value, Differs: tt.why, Ours: rps}
		if got := differs(p, read(run, p), run); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}

	// spring-webflux answers 10 % of its requests with a 503: its figure is failing's.
	for i := range run.Cells {
		if run.Cells[i].Contender == "spring-webflux" {
			run.Cells[i].Tags[0].Errors = map[string]int64{"status": 100}
		}
	}
	if run.Summary, err = results.Summarise(run.Cells); err != nil {
		t.Fatal(err)
	}
	p := scenario.Published{What: "WebFlux", Value: 6000, Differs: model, Ours: rps}
	v := read(run, p)
	if !v.Failing || !strings.Contains(v.Text(), "10.0 % errors") || !strings.Contains(v.Caveat, scenario.Failing.Text) {
		t.Errorf("a failing figure: %+v, %q", v, v.Text())
	}
	if got := differs(p, v, run); got != "" {
		t.Errorf("a failing figure set beside the study's: %q", got)
	}
	if v := read(run, scenario.Published{Ours: scenario.Read{Contender: "vertx", Level: "self", Figure: "rps", Tag: "data", Unit: "requests/s"}}); v.Failing || v.ErrorText() != "0 % errors" {
		t.Errorf("a healthy figure: %+v", v)
	}
}

// Fewer repeats than the U test needs: the study says its orders rest on so few.
func TestFewRepeatsAreSaid(t *testing.T) {
	if note := (Study{Repeat: 1}).FewRepeats(); !strings.Contains(note, "rest on 1 repeat(s) a cell") || !strings.Contains(note, "10 %") {
		t.Errorf("one repeat: %q", note)
	}
	if note := (Study{Repeat: 3}).FewRepeats(); note != "" {
		t.Errorf("three repeats: %q", note)
	}
	f := &Findings{Reproduction: &results.Reproduction{Repeat: 3}}
	if got := f.RepeatText(); got != "3 repeat(s) a cell" {
		t.Errorf("before any run: %q", got)
	}
	run := func(part string, repeat int) Run {
		return Run{Run: &results.Run{Scenario: results.ScenarioInfo{Repeat: repeat}}, Step: results.Step{Part: part}}
	}
	f.Runs = []Run{run(results.PartStudies, 3), run(results.PartStudies, 3), run(results.PartMatrix, 1)}
	if got := f.RepeatText(); got != "3 repeat(s) a cell of the studies' forms, 1 of the matrix" {
		t.Errorf("studies at 3, matrix at 1: %q", got)
	}
}

// Where a study's levels had a database, the page sets the server's CPU beside the database's,
// cell by cell, and says which side was busy: a reader sees when the database, not the stack,
// was the limit. A cell without a database has no row.
func TestLimitsSetTheDatabasesCPUBesideTheServers(t *testing.T) {
	run := &results.Run{ID: "20261126-210000-database", Env: results.Environment{ServerCPUs: "1", ClientCPUs: "0"}}
	for _, f := range []struct {
		contender, level string
		server, db       float64
	}{{"spring-mvc", "read-c64", 60, 95}, {"vertx", "read-c64", 99, 30}, {"vertx", "idle", 5, 0}, {"go-nethttp", "read-c64", 50, -1}} {
		c := cell(t, f.contender, f.level, "db", 1, 1000, 2)
		c.Server.Summary.CPUPctMean = f.server
		if f.db >= 0 {
			c.Database = &results.Resources{Summary: results.Usage{CPUPctMean: f.db}, CPUs: "0"}
		}
		run.Cells = append(run.Cells, c)
	}
	var err error
	if run.Summary, err = results.Summarise(run.Cells); err != nil {
		t.Fatal(err)
	}
	got := limitsOf(run)
	want := []Limit{
		{Run: run.ID, Contender: "spring-mvc", Level: "read-c64", ServerCPU: 60, DatabaseCPU: 95, ServerCores: 1, DBCores: 1, Busy: "the database"},
		{Run: run.ID, Contender: "vertx", Level: "read-c64", ServerCPU: 99, DatabaseCPU: 30, ServerCores: 1, DBCores: 1, Busy: "the server"},
		{Run: run.ID, Contender: "vertx", Level: "idle", ServerCPU: 5, DatabaseCPU: 0, ServerCores: 1, DBCores: 1, Busy: "neither"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("limits\n%+v\nwant\n%+v", got, want)
	}
	var b strings.Builder
	writeLimits(&b, got)
	if row := "| `" + run.ID + "` | spring-mvc | read-c64 | 60 % of 1 core | 95 % of 1 core | the database |"; !strings.Contains(b.String(), row) {
		t.Errorf("markdown lacks %q:\n%s", row, b.String())
	}
}

// A study appended after the reproduction began says so beside its runs, with the arena that
// measured them and the one that measured the first run.
func TestAStudyAddedLaterSaysSo(t *testing.T) {
	rep, dir := reproduction(t)
	added := day.Add(90 * time.Minute)
	for i := range rep.Steps {
		if rep.Steps[i].Scenario == "downstream" {
			rep.Steps[i].Added = &added
		}
	}
	f, err := Build(rep, dir, registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Studies {
		want := ""
		if s.Scenario == "downstream" {
			want = "Added to the reproduction on 2026-11-23 11:00 UTC, after it began (arena reproduce --resume … --add): measured by arena 4f3e949, the reproduction's first run by arena 4f3e949."
		}
		if !strings.HasPrefix(s.Added, want) || (want == "") != (s.Added == "") {
			t.Errorf("%s: added %q, want %q", s.Scenario, s.Added, want)
		}
	}
}
