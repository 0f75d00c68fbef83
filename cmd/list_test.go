package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/scenarios"
)

// arena list prints a table of every contender, then one of every scenario with its
// presets, on stdout.
func TestList(t *testing.T) {
	setup(t)
	known, err := contender.Discover(labRoot + "/contenders")
	if err != nil {
		t.Fatalf("this lab's contenders: %v", err)
	}
	o := execute(t, "list")
	if o.err != nil || o.stderr != "" {
		t.Fatalf("arena list: %v, stderr %q", o.err, o.stderr)
	}
	contenders, scenarioTable, ok := strings.Cut(o.stdout, "\n\n")
	if !ok {
		t.Fatalf("arena list printed no two tables:\n%s", o.stdout)
	}
	rows := strings.Split(contenders, "\n")
	if got := strings.Fields(rows[0]); strings.Join(got, " ") != "CONTENDER MODEL RUNTIME VERSION FEATURES KNOBS STACK" {
		t.Errorf("contenders' header %q", rows[0])
	}
	if len(rows)-1 != len(known) {
		t.Errorf("%d contender rows, want %d:\n%s", len(rows)-1, len(known), contenders)
	}
	for i, m := range known {
		if i+1 >= len(rows) {
			break
		}
		f := strings.Fields(rows[i+1])
		// The node runtime's version is the lab's own binary's; the machine's toolchains (a
		// pyenv shim, go env) are asked again by the test, so only their column is checked.
		if len(f) < 7 || f[0] != m.Name || f[1] != m.Model || f[2] != m.Runtime || m.Runtime == "node" && f[3] != runtimeVersion(labRoot, "node") || strings.Join(f[6:], " ") != m.Stack {
			t.Errorf("row %d %q, want %s, its model, runtime, runtime's version and stack (sorted by name)", i+1, rows[i+1], m.Name)
		}
	}

	rows = strings.Split(strings.TrimSuffix(scenarioTable, "\n"), "\n")
	if got := strings.Fields(rows[0]); strings.Join(got, " ") != "SCENARIO PRESETS STUDY" {
		t.Errorf("scenarios' header %q", rows[0])
	}
	all := scenarios.All()
	if len(rows)-1 != len(all) {
		t.Fatalf("%d scenario rows, want %d:\n%s", len(rows)-1, len(all), scenarioTable)
	}
	for i, s := range all {
		f := strings.Fields(rows[i+1])
		if len(f) < 2 || f[0] != s.Name() || f[1] != strings.Join(s.Presets(), ",") {
			t.Errorf("row %q, want %s with presets %v", rows[i+1], s.Name(), s.Presets())
		}
	}
}

// A broken manifest does not hide the others: they are listed, then the error is returned.
func TestListWithABrokenManifest(t *testing.T) {
	root := fixtureLab(t)
	for name, manifest := range map[string]string{
		"fine":   "name = \"fine\"\nmodel = \"goroutines\"\nstack = \"Go\"\nruntime = \"go\"\nbuild = \"true\"\nsources = [\"x\"]\nartifact = \"x\"\nstart = \"exec ./x\"\n",
		"broken": "name = \"broken\"\nthis is not TOML\n",
	} {
		dir := filepath.Join(root, "contenders", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, contender.ManifestFile), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := execute(t, "list")
	if o.err == nil || !strings.Contains(o.err.Error(), "broken") {
		t.Errorf("arena list with a broken manifest: error %v, want one that names it", o.err)
	}
	if !strings.Contains(o.stdout, "\nfine ") || !strings.Contains(o.stdout, "SCENARIO") {
		t.Errorf("arena list did not list what it could:\n%s", o.stdout)
	}
	if strings.Contains(o.stdout, "\nbroken ") {
		t.Errorf("arena list listed the broken contender:\n%s", o.stdout)
	}
}

func TestListTakesNoArguments(t *testing.T) {
	setup(t)
	refused(t, []string{"list", "extra"}, `unknown command "extra"`)
}

// The VERSION column is read from the runtime's binary: the lab's own Node once installed
// (node --version), the version arena will install before that, "-" for a runtime arena
// has no entry for.
func TestListShowsTheLabsNodeVersion(t *testing.T) {
	root := t.TempDir()
	if got, want := runtimeVersion(root, "node"), "v"+contender.NodeVersion+"(not-yet-installed)"; got != want {
		t.Errorf("before the install: %q, want %q", got, want)
	}
	bin := filepath.Join(contender.NodeHome(root), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\necho v24.0.0-from-the-binary\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := runtimeVersion(root, "node"); got != "v24.0.0-from-the-binary" {
		t.Errorf("installed: %q, want what the lab's node prints", got)
	}
	if got := runtimeVersion(root, contender.OtherRuntime); got != "-" {
		t.Errorf("other runtime: %q, want -", got)
	}
}
