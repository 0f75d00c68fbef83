package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// badIDs are ids a crafted file may hold to make a path of them.
var badIDs = []string{"", ".", "..", "../x", "../../outside", "/tmp/abs", "a/b", `a\b`, "-flag", ".hidden", "a b", "a\x00b", "é",
	"run\n", strings.Repeat("a", 101)}

// TestCheckID: every id arena makes, and the CI action's, passes; nothing that could be a
// path does.
func TestCheckID(t *testing.T) {
	for _, id := range []string{"20261125-101500-sleep", "20261125-101500-sleep-2", "reproduce-20261123-093000",
		"ci-123456-1-arena_quick", "golden", "r1", "v1.2", strings.Repeat("a", 100)} {
		if err := CheckID(id); err != nil {
			t.Errorf("CheckID(%q): %v", id, err)
		}
	}
	for _, id := range badIDs {
		if err := CheckID(id); err == nil {
			t.Errorf("CheckID(%q) passed", id)
		}
	}
}

// TestRunDirStaysInside: RunDir and In join only what stays in the folder.
func TestRunDirStaysInside(t *testing.T) {
	dir := t.TempDir()
	if got, err := RunDir(dir, "r1"); err != nil || got != filepath.Join(dir, "r1") {
		t.Errorf("RunDir(r1) = %q, %v", got, err)
	}
	for _, id := range badIDs {
		if got, err := RunDir(dir, id); err == nil {
			t.Errorf("RunDir(%q) = %q, want it refused", id, got)
		}
	}
	for _, name := range []string{"../x", "/etc/passwd", "", "a/../../b"} {
		if got, err := In(dir, name); err == nil {
			t.Errorf("In(%q) = %q, want it refused", name, got)
		}
	}
	if got, err := In(dir, "compare-r1.html"); err != nil || got != filepath.Join(dir, "compare-r1.html") {
		t.Errorf("In(compare-r1.html) = %q, %v", got, err)
	}
}

// writeFile writes body as dir/name and returns its path.
func writeFile(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLoadRefusesIDsThatArePaths: a results.json or reproduction.json whose id, a step's run
// or a spec's id is not an id is refused as it is read, naming the file; the same files with
// ids are read.
func TestLoadRefusesIDsThatArePaths(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct{ name, body string }{
		{"run id", `{"schema": "arena.results/v2", "id": "../../outside"}`},
		{"absolute run id", `{"schema": "arena.results/v2", "id": "/tmp/outside"}`},
		{"no run id", `{"schema": "arena.results/v2"}`},
		{"spec id", `{"schema": "arena.results/v2", "id": "r1", "spec": {"scenario": "sleep", "contenders": null, "id": "../r2"}}`},
		{"v1 run id", `{"schema": "arena.results/v1", "id": "a/../../b"}`},
	} {
		path := writeFile(t, dir, JSONFile, tt.body)
		if run, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: Load = %+v, %v; want a refusal naming the file", tt.name, run, err)
		}
	}
	path := writeFile(t, dir, JSONFile, `{"schema": "arena.results/v2", "id": "r1", "spec": {"scenario": "sleep", "contenders": null, "id": "r1"}}`)
	if _, err := Load(path); err != nil {
		t.Errorf("a results.json with ids: %v", err)
	}

	const step = `{"part": "studies", "scenario": "sleep", "preset": "seed", "contenders": ["netty"], "why": "", "estimate_s": 1`
	for _, tt := range []struct{ name, body string }{
		{"reproduction id", `{"schema": "arena.reproduction/v1", "id": "../x", "steps": []}`},
		{"step run", `{"schema": "arena.reproduction/v1", "id": "reproduce-1", "steps": [` + step + `, "run": "../../outside"}]}`},
		{"absolute step run", `{"schema": "arena.reproduction/v1", "id": "reproduce-1", "steps": [` + step + `, "run": "/tmp/outside"}]}`},
		{"step spec id", `{"schema": "arena.reproduction/v1", "id": "reproduce-1", "steps": [` + step + `, "id": ".."}]}`},
	} {
		path := writeFile(t, dir, ReproductionFile, tt.body)
		if rep, err := LoadReproduction(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: LoadReproduction = %+v, %v; want a refusal naming the file", tt.name, rep, err)
		}
	}
	path = writeFile(t, dir, ReproductionFile, `{"schema": "arena.reproduction/v1", "id": "reproduce-1", "steps": [`+step+`, "run": "20261123-093100-sleep"}, `+step+`}]}`)
	if _, err := LoadReproduction(path); err != nil {
		t.Errorf("a reproduction.json with ids, one step not begun: %v", err)
	}
}
