package contender

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// validManifest is a manifest that passes every check, for a folder called name.
func validManifest(name string) string {
	return `name        = "` + name + `"
description = "a test contender"
stack       = "Test Stack 1.0"
model       = "thread-per-request"
runtime     = "go"
build       = "go build -o app ."
sources     = ["main.go", "src"]
artifact    = "app"
start       = "exec ./app"
knobs       = ["WORKER_THREADS", "DOWNSTREAM_URL"]
notes       = "nothing special"
`
}

// writeManifest creates root/folder/contender.toml with body and returns the folder.
func writeManifest(t *testing.T, root, folder, body string) string {
	t.Helper()
	dir := filepath.Join(root, folder)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadValidManifest(t *testing.T) {
	dir := writeManifest(t, t.TempDir(), "alpha", validManifest("alpha"))
	m, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := Manifest{
		Name: "alpha", Description: "a test contender", Stack: "Test Stack 1.0",
		Model: "thread-per-request", Runtime: "go", Build: "go build -o app .",
		Sources: []string{"main.go", "src"}, Artifact: "app", Start: "exec ./app",
		Knobs: []string{"WORKER_THREADS", "DOWNSTREAM_URL"}, Notes: "nothing special", Dir: dir,
	}
	if m.Name != want.Name || m.Description != want.Description || m.Stack != want.Stack ||
		m.Model != want.Model || m.Runtime != want.Runtime || m.Build != want.Build ||
		m.Artifact != want.Artifact || m.Start != want.Start || m.Notes != want.Notes || m.Dir != want.Dir ||
		!slices.Equal(m.Sources, want.Sources) || !slices.Equal(m.Knobs, want.Knobs) {
		t.Fatalf("Load = %+v\nwant   %+v", *m, want)
	}
	if !filepath.IsAbs(m.Dir) {
		t.Errorf("Dir %q is not absolute", m.Dir)
	}
	if !m.Honours("WORKER_THREADS") || m.Honours("BACKPRESSURE") {
		t.Errorf("Honours: WORKER_THREADS=%v BACKPRESSURE=%v, want true, false", m.Honours("WORKER_THREADS"), m.Honours("BACKPRESSURE"))
	}
}

// A relative folder still gives an absolute Dir, and no build needs no sources.
func TestLoadRelativeDirAndNoBuild(t *testing.T) {
	root := t.TempDir()
	writeManifest(t, root, "beta", `name = "beta"
stack = "S 1"
model = "goroutines"
runtime = "go"
start = "exec ./beta"
`)
	t.Chdir(root)
	m, err := Load("beta")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if want := filepath.Join(root, "beta"); m.Dir != want {
		// t.TempDir may sit behind a symlink; compare resolved paths.
		got, _ := filepath.EvalSymlinks(m.Dir)
		exp, _ := filepath.EvalSymlinks(want)
		if got != exp {
			t.Errorf("Dir = %q, want %q", m.Dir, want)
		}
	}
}

func TestLoadRejectsInvalidManifests(t *testing.T) {
	base := validManifest("gamma")
	tests := []struct {
		name string
		body string
		want []string // substrings the error must contain
	}{
		{"name differs from folder", strings.Replace(base, `name        = "gamma"`, `name = "delta"`, 1),
			[]string{`name "delta"`, `folder's name "gamma"`}},
		{"unknown model", strings.Replace(base, `"thread-per-request"`, `"green-threads"`, 1),
			[]string{`model "green-threads"`, "thread-per-request", "goroutines"}},
		{"unknown runtime", strings.Replace(base, `runtime     = "go"`, `runtime = "cobol"`, 1),
			[]string{`runtime "cobol"`, "java, node, go, python, rust, other", "requires and memory_env"}},
		{"other without requires", strings.Replace(base, `runtime     = "go"`, `runtime = "other"`+"\nmemory_env = \"none\"", 1),
			[]string{"requires is empty"}},
		{"other without memory_env", strings.Replace(base, `runtime     = "go"`, `runtime = "other"`+"\nrequires = [\"sh\"]", 1),
			[]string{`memory_env ""`, "{heap_mb}", `"none"`}},
		{"other with a memory_env not of the heap", strings.Replace(base, `runtime     = "go"`, `runtime = "other"`+"\nrequires = [\"sh\"]\nmemory_env = \"HEAP=512\"", 1),
			[]string{`memory_env "HEAP=512"`}},
		{"requires on a known runtime", strings.Replace(base, `runtime     = "go"`, `runtime = "go"`+"\nrequires = [\"sh\"]", 1),
			[]string{`requires and memory_env are for runtime "other"`}},
		{"empty start", strings.Replace(base, `start       = "exec ./app"`, `start = "  "`, 1),
			[]string{"start is empty"}},
		{"missing start", strings.Replace(base, `start       = "exec ./app"`, ``, 1),
			[]string{"start is empty"}},
		{"empty stack", strings.Replace(base, `stack       = "Test Stack 1.0"`, `stack = ""`, 1),
			[]string{"stack is empty"}},
		{"build without sources", strings.Replace(base, `sources     = ["main.go", "src"]`, `sources = []`, 1),
			[]string{"sources is empty"}},
		{"unknown knob", strings.Replace(base, `knobs       = ["WORKER_THREADS", "DOWNSTREAM_URL"]`, `knobs = ["WORKER_THREADS", "THREADS"]`, 1),
			[]string{`knob "THREADS"`, "WORKER_THREADS, DOWNSTREAM_URL, BACKPRESSURE"}},
		{"unknown field (typo)", base + `artefact = "app"` + "\n",
			[]string{`unknown field "artefact"`, "known: name"}},
		{"misspelt known field", strings.Replace(base, `description =`, `descripton =`, 1),
			[]string{`unknown field "descripton"`}},
		{"not TOML", base + "this is = = not toml\n",
			[]string{ManifestFile}},
		{"wrong type", strings.Replace(base, `sources     = ["main.go", "src"]`, `sources = "src"`, 1),
			[]string{ManifestFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeManifest(t, t.TempDir(), "gamma", tt.body)
			m, err := Load(dir)
			if err == nil {
				t.Fatalf("Load accepted the manifest: %+v", m)
			}
			msg := err.Error()
			if !strings.Contains(msg, filepath.Join(dir, ManifestFile)) {
				t.Errorf("error does not name the file: %q", msg)
			}
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			// One thing is wrong, so one problem is reported.
			if strings.Contains(msg, "\n") {
				t.Errorf("error reports more than one problem: %q", msg)
			}
		})
	}
}

// Every problem of a manifest is reported at once, not just the first.
func TestLoadReportsEveryProblem(t *testing.T) {
	dir := writeManifest(t, t.TempDir(), "eps", `name = "other"
stack = ""
model = "nope"
runtime = "ruby"
build = "make"
start = ""
knobs = ["X"]
`)
	_, err := Load(dir)
	if err == nil {
		t.Fatal("Load accepted a manifest with seven problems")
	}
	for _, w := range []string{`name "other"`, "stack is empty", `model "nope"`, `runtime "ruby"`, "start is empty", "sources is empty", `knob "X"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not contain %q", err, w)
		}
	}
}

func TestLoadMissingManifest(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil {
		t.Fatal("Load of a folder without contender.toml succeeded")
	}
}

func names(ms []*Manifest) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Name)
	}
	return out
}

func TestDiscover(t *testing.T) {
	root := t.TempDir()
	// Written out of order, so that the result's order is Discover's doing.
	writeManifest(t, root, "zeta", validManifest("zeta"))
	writeManifest(t, root, "alpha", validManifest("alpha"))
	writeManifest(t, root, "mid", validManifest("mid"))
	// Shared parts and hidden folders are skipped even with a (valid) manifest.
	writeManifest(t, root, "_parents", validManifest("_parents"))
	writeManifest(t, root, ".hidden", validManifest(".hidden"))
	// A folder without a manifest is not a contender.
	if err := os.MkdirAll(filepath.Join(root, "no-manifest", "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A file beside the folders is ignored.
	if err := os.WriteFile(filepath.Join(root, "README.md"), []byte("# contenders\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	ms, err := Discover(root)
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	if got, want := names(ms), []string{"alpha", "mid", "zeta"}; !slices.Equal(got, want) {
		t.Fatalf("Discover = %v, want %v", got, want)
	}

	// A broken manifest is reported; the good ones still come back.
	writeManifest(t, root, "broken", strings.Replace(validManifest("broken"), `"thread-per-request"`, `"bogus"`, 1))
	ms, err = Discover(root)
	if err == nil {
		t.Fatal("Discover did not report the broken manifest")
	}
	if !strings.Contains(err.Error(), filepath.Join("broken", ManifestFile)) || !strings.Contains(err.Error(), `model "bogus"`) {
		t.Errorf("error %q does not name the broken manifest and its problem", err)
	}
	if got, want := names(ms), []string{"alpha", "mid", "zeta"}; !slices.Equal(got, want) {
		t.Fatalf("Discover with a broken manifest = %v, want %v", got, want)
	}
}

func TestDiscoverMissingRoot(t *testing.T) {
	_, err := Discover(filepath.Join(t.TempDir(), "nowhere"))
	if err == nil || !strings.Contains(err.Error(), "reading contenders") {
		t.Fatalf("Discover of a missing folder: %v", err)
	}
}

func TestSelect(t *testing.T) {
	all := []*Manifest{{Name: "a"}, {Name: "b"}, {Name: "c"}}
	tests := []struct {
		name    string
		pick    []string
		want    []string
		wantErr []string
	}{
		{"none means all", nil, []string{"a", "b", "c"}, nil},
		{"order kept", []string{"c", "a"}, []string{"c", "a"}, nil},
		{"duplicates dropped", []string{"b", "a", "b", "b"}, []string{"b", "a"}, nil},
		{"unknown name", []string{"a", "nosuch"}, nil, []string{`"nosuch"`, "known: a, b, c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Select(all, tt.pick)
			if tt.wantErr != nil {
				if err == nil {
					t.Fatalf("Select(%v) = %v, want an error", tt.pick, names(got))
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Select(%v): %v", tt.pick, err)
			}
			if !slices.Equal(names(got), tt.want) {
				t.Fatalf("Select(%v) = %v, want %v", tt.pick, names(got), tt.want)
			}
			// The manifests are the same ones, not copies.
			for _, m := range got {
				if !slices.Contains(all, m) {
					t.Errorf("Select returned a manifest not in all: %p", m)
				}
			}
		})
	}
}

// A contender's name is [a-z0-9-]+: it names files, cgroups, URLs and report entries.
func TestLoadRestrictsNames(t *testing.T) {
	root := t.TempDir()
	for _, ok := range []string{"netty", "spring-mvc-async-all", "node20", "a-1"} {
		if _, err := Load(writeManifest(t, root, ok, validManifest(ok))); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"<img src=x onerror=window.x=1>", "Netty", "spring_mvc", "a b", "x.y", "é", "a\"b", "../x", ""} {
		folder := strings.NewReplacer("/", "", ".", "", "\"", "").Replace(bad)
		if folder == "" {
			folder = "empty"
		}
		toml := strings.Replace(validManifest("x"), `name        = "x"`, `name        = `+strconv.Quote(bad), 1)
		_, err := Load(writeManifest(t, root, folder, toml))
		if err == nil || !strings.Contains(err.Error(), "use only a-z, 0-9 and -") {
			t.Errorf("name %q: %v; want a refusal naming the rule", bad, err)
		}
	}
}

// A contender in a language arena has no entry for: runtime "other", the commands it needs
// and its memory setting spelled out in the manifest; the heap goes where {heap_mb} is.
func TestOtherRuntimeSpellsOutItsSettings(t *testing.T) {
	body := strings.Replace(validManifest("zeta"), `runtime     = "go"`, `runtime = "other"`+"\nrequires = [\"sh\", \"python3\"]\nmemory_env = \"MAX_HEAP={heap_mb}M\"", 1)
	m, err := Load(writeManifest(t, t.TempDir(), "zeta", body))
	if err != nil {
		t.Fatal(err)
	}
	env, err := Settings{HeapMB: 384}.Env(m, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := envMap(t, env)["MAX_HEAP"]; got != "384M" {
		t.Errorf("MAX_HEAP=%q, want 384M", got)
	}
	if rt := RuntimeOf(m); rt.Name != "other" || len(rt.Requires) != 2 || rt.Requires[1].Command != "python3" {
		t.Errorf("runtime %+v", rt)
	}
	m.MemoryEnv = "none"
	if RuntimeOf(m).Memory != nil {
		t.Error(`memory_env "none" gives a memory setting`)
	}
}

// A toolchain missing on the machine is one clear error per contender and command, naming
// what to install, before anything is built.
func TestCheckToolchainNamesWhatToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir()) // nothing on it
	ms := []*Manifest{{Name: "py", Runtime: "python"}, {Name: "rs", Runtime: "rust"}, {Name: "sh", Runtime: "other", Requires: []string{"arena-no-such-tool"}}}
	err := CheckToolchain(ms)
	if err == nil {
		t.Fatal("no error with nothing on PATH")
	}
	for _, want := range []string{
		"contender py (runtime python) needs python3, which is not on PATH: install apt-get install python3 python3-venv",
		"contender rs (runtime rust) needs cargo",
		"contender sh (runtime other) needs arena-no-such-tool",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if err := CheckToolchain([]*Manifest{{Name: "sh", Runtime: "other", Requires: []string{"sh"}}}); err == nil {
		t.Error("sh found on an empty PATH")
	}
}
