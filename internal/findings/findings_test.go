package findings

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/golden"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

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
		Server: results.Resources{Summary: results.Usage{CPUPctMean: 99, RSSMBMax: 300, Samples: 10}}}
}

// downstreamRun is a run of the downstream scenario: per contender, its requests/s at self
// in each of two repeats.
func downstreamRun(t *testing.T, id, preset string, quick bool, rps map[string][2]float64, order ...string) *results.Run {
	t.Helper()
	run := &results.Run{Schema: results.SchemaVersion, ID: id, Started: day, Status: results.RunComplete,
		Scenario: results.ScenarioInfo{Name: "downstream", Preset: preset, Quick: quick, Repeat: 2,
			Levels: []results.Level{{Name: "self", Load: "closed loop, 100 connections"}}},
		Env: results.Environment{CPUModel: "AMD EPYC", Cores: 2, MemoryGB: 24, ServerCPUs: "1", ClientCPUs: "0", HeapMB: 512, JavaVersion: "25"}}
	for _, name := range order {
		run.Contenders = append(run.Contenders, results.Contender{Name: name, Stack: name + " stack", Verified: results.VerifyPassed})
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
			{Part: results.PartStudies, Scenario: "isolation", Preset: "seed", Contenders: []string{"spring-mvc"}},
			{Part: results.PartStudies, Scenario: "downstream", Preset: "seed", Contenders: []string{"spring-webflux", "spring-webflux-fn", "vertx"}, Run: "20261123-094000-downstream", Status: results.RunComplete},
			{Part: results.PartStudies, Scenario: "downstream", Preset: "steady", Levels: []string{"self"}, Contenders: []string{"spring-webflux", "spring-webflux-fn", "vertx"}, Run: "20261123-095000-downstream", Status: results.RunComplete},
			{Part: results.PartMatrix, Scenario: "downstream", Preset: "seed", Quick: true, Contenders: []string{"go-nethttp"}, Run: "20261123-100000-downstream", Status: results.RunComplete},
			{Part: results.PartMatrix, Scenario: "stream", Preset: "default", Quick: true, Contenders: []string{"go-nethttp"}, Run: "20261123-101000-stream", Status: results.RunRunning}, // begun, never saved
		}}
	study := downstreamRun(t, "20261123-094000-downstream", "seed", false, map[string][2]float64{
		"spring-webflux": {2600, 2650}, "spring-webflux-fn": {2690, 2700}, "vertx": {6600, 6700}}, "spring-webflux", "spring-webflux-fn", "vertx")
	steady := downstreamRun(t, "20261123-095000-downstream", "steady", false, map[string][2]float64{
		"spring-webflux": {4000, 4100}, "spring-webflux-fn": {4050, 4150}, "vertx": {10500, 10700}}, "spring-webflux", "spring-webflux-fn", "vertx")
	matrix := downstreamRun(t, "20261123-100000-downstream", "seed", true, map[string][2]float64{"go-nethttp": {15000, 15200}}, "go-nethttp")
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
	f, err := Build(rep, dir)
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
	if strings.Join(names, ",") != "isolation,sleep,downstream,chat,stream" {
		t.Errorf("studies %v; want all five, each with its section", names)
	}

	a := claimByID(t, f, "downstream", "a")
	if a.Verdict != results.ClaimHolds || !strings.Contains(a.Why, "vertx 6650, spring-webflux 2625 requests/s: 2.53×") {
		t.Errorf("claim a: %s: %s", a.Verdict, a.Why)
	}
	if !strings.Contains(a.RestsOn, "the study's form (preset seed) on the study's stacks: run 20261123-094000-downstream") {
		t.Errorf("claim a rests on %q", a.RestsOn)
	}
	if a.Steady == nil || !strings.HasPrefix(a.Steady.Why, "in the steady state: vertx 10600, spring-webflux 4050 requests/s") || !strings.Contains(a.Steady.Why, "vertx settled after 30 s") {
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
	if !ratio.Ours.Measured || ratio.Ours.Text() != "2.53× (2.49–2.58)" || ratio.Steady.Text() != "2.62× (2.56–2.67)" {
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

// The markdown is the findings as docs/findings.md has them.
func TestWriteMarkdown(t *testing.T) {
	rep, dir := reproduction(t)
	f, err := Build(rep, dir)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, f, "runs/reproduce-20261123-093000/findings.html", "findings.png"); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "findings.md", buf.Bytes())
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
