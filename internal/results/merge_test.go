package results

import (
	"reflect"
	"testing"
)

func mergeRun(id string, levels []string, contenders ...string) *Run {
	r := &Run{ID: id, Scenario: ScenarioInfo{Name: "chat", Preset: "seed"}}
	for _, l := range levels {
		r.Scenario.Levels = append(r.Scenario.Levels, Level{Name: l})
	}
	for _, c := range contenders {
		r.Contenders = append(r.Contenders, Contender{Name: c, BuildHash: id})
		for _, l := range levels {
			r.Cells = append(r.Cells, Cell{Contender: c, Level: l, Repeat: 1})
			r.Summary = append(r.Summary, CellSummary{Contender: c, Level: l})
		}
		r.Verdicts = append(r.Verdicts, Verdict{Contender: c, Verdict: id})
	}
	r.Claims = []Claim{{ID: "a", Verdict: ClaimHolds}}
	return r
}

// Each contender comes whole from the run picked for it, the levels from all; the claims are
// left to be judged again.
func TestMerge(t *testing.T) {
	study := mergeRun("study", []string{"r1-u10", "r1-u60"}, "vertx", "node-express")
	matrix := mergeRun("matrix", []string{"r1-u5", "r1-u10"}, "go-nethttp", "vertx")
	m := Merge(map[string]*Run{"vertx": study, "node-express": study, "go-nethttp": matrix}, []string{"vertx", "go-nethttp", "node-express", "absent"})
	if m.ID != "study" || len(m.Claims) != 0 {
		t.Errorf("id %s, claims %v; want the first pick's id and no claims", m.ID, m.Claims)
	}
	var levels, contenders, verdicts []string
	for _, l := range m.Scenario.Levels {
		levels = append(levels, l.Name)
	}
	for _, c := range m.Contenders {
		contenders = append(contenders, c.Name+"@"+c.BuildHash)
	}
	for _, v := range m.Verdicts {
		verdicts = append(verdicts, v.Contender+"="+v.Verdict)
	}
	if !reflect.DeepEqual(levels, []string{"r1-u10", "r1-u60", "r1-u5"}) {
		t.Errorf("levels %v", levels)
	}
	if !reflect.DeepEqual(contenders, []string{"vertx@study", "go-nethttp@matrix", "node-express@study"}) {
		t.Errorf("contenders %v", contenders)
	}
	if !reflect.DeepEqual(verdicts, []string{"vertx=study", "go-nethttp=matrix", "node-express=study"}) {
		t.Errorf("verdicts %v", verdicts)
	}
	if len(m.Cells) != 6 || len(m.Summary) != 6 {
		t.Errorf("%d cells and %d summaries, want 2 levels × 3 contenders", len(m.Cells), len(m.Summary))
	}
	for _, c := range m.Cells {
		if c.Contender == "vertx" && c.Level == "r1-u5" {
			t.Error("vertx's cells came from the matrix run too")
		}
	}
	if len(study.Scenario.Levels) != 2 || len(study.Claims) != 1 {
		t.Error("Merge changed a run it was given")
	}
	if Merge(nil, []string{"x"}) != nil {
		t.Error("a merge of nothing is something")
	}
}
