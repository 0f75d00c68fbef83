package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/reproduce"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/scenarios"
)

// filesUnder lists every file and folder under root with its size and time: what a refused
// command must leave as it was, beside the folder it was given as much as in it.
func filesUnder(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fmt.Sprintf("%v %d %s", info.Mode(), info.Size(), info.ModTime())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// writeRaw writes v as JSON, edited by edit (a crafted file), to path.
func writeRaw(t *testing.T, path string, v any, edit func(map[string]any)) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	if raw, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestResumeRefusesCraftedReproductions: `arena reproduce --resume` of a reproduction.json
// whose step names its run by a path, aims at a server elsewhere, or holds a spec `arena run`
// refuses is refused with why, before anything is written, run or sent: no file appears in
// the lab, in the reproduction's folder or beside it.
func TestResumeRefusesCraftedReproductions(t *testing.T) {
	day := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	stepOf := func(edit func(map[string]any)) func(map[string]any) {
		return func(m map[string]any) { edit(m["steps"].([]any)[0].(map[string]any)) }
	}
	for _, tt := range []struct {
		name string
		edit func(map[string]any)
		want []string
	}{
		{"a run id that climbs out", stepOf(func(st map[string]any) { st["run"] = "../../outside" }), []string{`step 1: id "../../outside"`}},
		{"an absolute run id", stepOf(func(st map[string]any) { st["run"] = "/tmp/outside" }), []string{`step 1: id "/tmp/outside"`}},
		{"a spec id that climbs out", stepOf(func(st map[string]any) { st["id"] = "../outside" }), []string{`step 1: id "../outside"`}},
		{"the reproduction's id", func(m map[string]any) { m["id"] = "../../outside" }, []string{`reproduction: id "../../outside"`}},
		{"a target at another address", stepOf(func(st map[string]any) {
			st["contenders"] = nil
			st["target"] = map[string]any{"name": "t", "url": "http://127.0.0.2:19080", "addr": "127.0.0.1:19080", "knobs": []string{}}
		}), []string{"step 1: a target (http://127.0.0.2:19080)", "never a server it did not start"}},
		{"a target off loopback", stepOf(func(st map[string]any) {
			st["contenders"] = nil
			st["target"] = map[string]any{"name": "t", "url": "http://10.1.2.3:80", "addr": "10.1.2.3:80", "pid": 1}
		}), []string{"step 1: a target (http://10.1.2.3:80)"}},
		{"a variable the lab sets", stepOf(func(st map[string]any) { st["env"] = map[string]string{"PORT": "22"} }), []string{"step 1 (sleep): --env PORT: the lab sets it itself"}},
		{"a port below 1024", stepOf(func(st map[string]any) { st["port"] = 80 }), []string{"step 1 (sleep): --port 80"}},
		{"a scenario arena does not know", stepOf(func(st map[string]any) { st["scenario"] = "../../sleep" }), []string{"step 1 (../../sleep)"}},
		{"repeats past the bound", stepOf(func(st map[string]any) { st["repeat"] = 100000 }), []string{"step 1 (sleep): --repeat 100000"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := fixtureLab(t)
			dir := filepath.Join(root, "runs", "reproduce-20261123-093000")
			rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-20261123-093000", Command: []string{"arena", "reproduce"},
				Started: day, Status: results.RunInterrupted, Repeat: 1,
				Steps: []results.Step{{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "sleep", Preset: "seed", Contenders: []string{"netty"}},
					Run: "20261123-093100-sleep", Status: results.RunInterrupted}}}
			writeRaw(t, filepath.Join(dir, results.ReproductionFile), rep, tt.edit)
			before := filesUnder(t, filepath.Dir(root))
			refused(t, []string{"reproduce", "--resume", dir}, tt.want...)
			refused(t, []string{"reproduce", "--resume", dir, "--dry-run"}, tt.want...)
			if after := filesUnder(t, filepath.Dir(root)); !maps.Equal(before, after) {
				t.Errorf("a refused resume wrote:\nbefore %v\nafter  %v", before, after)
			}
		})
	}
}

// TestCompareRefusesARunIDThatIsAPath: a results.json whose id climbs out of its folder is
// no run to compare, and compare writes no page named after it, there or anywhere.
func TestCompareRefusesARunIDThatIsAPath(t *testing.T) {
	runs := compareLab(t)
	for _, id := range []string{"../../../outside", "/tmp/outside", ".."} {
		a := filepath.Join(runs, "20261123-100000-sleep", results.JSONFile)
		writeRaw(t, a, compareRun("20261123-100000-sleep", "sleep", nil, 1985, 1990, 1978, 1992, 1984), func(m map[string]any) { m["id"] = id })
		before := filesUnder(t, filepath.Dir(filepath.Dir(runs)))
		refused(t, []string{"compare", "20261123-100000-sleep", "20261123-101000-sleep"}, `no run "20261123-100000-sleep"`, fmt.Sprintf("id %q", id))
		if after := filesUnder(t, filepath.Dir(filepath.Dir(runs))); !maps.Equal(before, after) {
			t.Errorf("id %q: a refused comparison wrote:\nbefore %v\nafter  %v", id, before, after)
		}
	}
}

// TestGateRefusesAStepOutsideItsReproduction: judging a reproduction whose step names its run
// by a path (one built in memory, past the reader's check) judges that step nowhere and
// writes no summary.json outside the reproduction's folder; it says which step.
func TestGateRefusesAStepOutsideItsReproduction(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "reproduce-x")
	outside := saveRun(t, parent, fixtureRun("outside", "sleep", time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), "netty"))
	rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-x", Status: results.RunComplete,
		Steps: []results.Step{{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "sleep"}, Run: "../outside", Status: results.RunComplete}}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	f := gateFlags{failOn: []string{"crashed"}}
	if err := f.parse(); err != nil {
		t.Fatal(err)
	}
	before := filesUnder(t, parent)
	_, err := f.judgeReproduction(rep, dir, io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), `id "../outside"`) {
		t.Errorf("judged a step named by a path: %v", err)
	}
	if _, statErr := os.Stat(filepath.Join(outside, "summary.json")); statErr == nil {
		t.Errorf("a summary.json was written in %s, outside the reproduction", outside)
	}
	if after := filesUnder(t, parent); !maps.Equal(before, after) {
		t.Errorf("judging wrote:\nbefore %v\nafter  %v", before, after)
	}
}

// TestEveryPlannedStepPassesTheResumeCheck: every step arena reproduce plans, in each form,
// passes the checks a resumed reproduction's steps are held to: the checks refuse crafted
// files, never arena's own.
func TestEveryPlannedStepPassesTheResumeCheck(t *testing.T) {
	all, err := contender.Discover(filepath.Join(labRoot, "contenders"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []reproduce.Options{{}, {Repeat: 1, MatrixRepeat: 2}, {Quick: true}} {
		rep, err := reproduce.New(scenarios.All(), all, o, []string{"arena", "reproduce"}, time.Now())
		if err != nil {
			t.Fatalf("%+v: %v", o, err)
		}
		for i := range rep.Steps {
			rep.Steps[i].Run = fmt.Sprintf("20261123-0931%02d-%s", i%60, rep.Steps[i].Scenario)
		}
		if err := reproduce.CheckSteps(rep, checkStepSpec); err != nil {
			t.Errorf("%+v: a planned reproduction of %d steps is refused: %v", o, len(rep.Steps), err)
		}
	}
}
