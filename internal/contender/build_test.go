package contender

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles creates each file (path relative to dir → content), with its folders.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func mustHash(t *testing.T, m *Manifest) string {
	t.Helper()
	h, err := SourceHash(m)
	if err != nil {
		t.Fatalf("SourceHash: %v", err)
	}
	if len(h) != 16 {
		t.Fatalf("SourceHash = %q, want 16 hex digits", h)
	}
	return h
}

func TestSourceHash(t *testing.T) {
	tests := []struct {
		name    string
		sources []string
		change  func(t *testing.T, m *Manifest)
		changes bool
	}{
		{"nothing changed", []string{"pom.xml", "src"}, func(t *testing.T, m *Manifest) {}, false},
		{"source file edited", []string{"pom.xml", "src"}, func(t *testing.T, m *Manifest) {
			writeFiles(t, m.Dir, map[string]string{"src/main/App.java": "class App { int x; }"})
		}, true},
		{"top-level source file edited", []string{"pom.xml", "src"}, func(t *testing.T, m *Manifest) {
			writeFiles(t, m.Dir, map[string]string{"pom.xml": "<project>2</project>"})
		}, true},
		{"source file added", []string{"pom.xml", "src"}, func(t *testing.T, m *Manifest) {
			writeFiles(t, m.Dir, map[string]string{"src/main/Extra.java": "class Extra {}"})
		}, true},
		{"source file renamed", []string{"pom.xml", "src"}, func(t *testing.T, m *Manifest) {
			if err := os.Rename(filepath.Join(m.Dir, "src/main/App.java"), filepath.Join(m.Dir, "src/main/Main.java")); err != nil {
				t.Fatal(err)
			}
		}, true},
		{"build command changed", []string{"pom.xml", "src"}, func(t *testing.T, m *Manifest) {
			m.Build = "mvn -B package -DskipTests"
		}, true},
		{"runtime changed", []string{"pom.xml", "src"}, func(t *testing.T, m *Manifest) {
			m.Runtime = "node"
		}, true},
		{"file under src/target changed", []string{"pom.xml", "src"}, func(t *testing.T, m *Manifest) {
			writeFiles(t, m.Dir, map[string]string{"src/target/app.jar": "new jar", "src/target/classes/New.class": "x"})
		}, false},
		{"file under src/node_modules changed", []string{"pom.xml", "src"}, func(t *testing.T, m *Manifest) {
			writeFiles(t, m.Dir, map[string]string{"src/node_modules/lib/index.js": "changed", "src/node_modules/other.js": "new"})
		}, false},
		{"file outside the sources changed", []string{"pom.xml", "src"}, func(t *testing.T, m *Manifest) {
			writeFiles(t, m.Dir, map[string]string{"README.md": "changed"})
		}, false},
		{"whole folder: target/ changed", []string{"."}, func(t *testing.T, m *Manifest) {
			writeFiles(t, m.Dir, map[string]string{"target/app.jar": "rebuilt"})
		}, false},
		{"whole folder: node_modules/ changed", []string{"."}, func(t *testing.T, m *Manifest) {
			writeFiles(t, m.Dir, map[string]string{"node_modules/x/y.js": "rebuilt"})
		}, false},
		{"python's __pycache__ written at start", []string{"src"}, func(t *testing.T, m *Manifest) {
			writeFiles(t, m.Dir, map[string]string{"src/main/__pycache__/app.cpython-311.pyc": "bytecode"})
		}, false},
		{"whole folder: a venv rebuilt", []string{"."}, func(t *testing.T, m *Manifest) {
			writeFiles(t, m.Dir, map[string]string{".venv/bin/python": "rebuilt"})
		}, false},
		{"whole folder: source changed", []string{"."}, func(t *testing.T, m *Manifest) {
			writeFiles(t, m.Dir, map[string]string{"src/main/App.java": "class App { int y; }"})
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{
				"pom.xml":                   "<project>1</project>",
				"README.md":                 "readme",
				"src/main/App.java":         "class App {}",
				"src/target/app.jar":        "jar",
				"src/node_modules/lib/a.js": "a",
				"target/app.jar":            "jar",
				"node_modules/x/y.js":       "y",
			})
			m := &Manifest{Name: "h", Runtime: "java", Build: "mvn -B -q package", Sources: tt.sources, Dir: dir}
			before := mustHash(t, m)
			if again := mustHash(t, m); again != before {
				t.Fatalf("SourceHash is not stable: %s then %s", before, again)
			}
			tt.change(t, m)
			after := mustHash(t, m)
			if changed := after != before; changed != tt.changes {
				t.Fatalf("hash changed = %v (%s → %s), want %v", changed, before, after, tt.changes)
			}
		})
	}
}

func TestSourceHashMissingSource(t *testing.T) {
	m := &Manifest{Name: "h", Runtime: "go", Build: "true", Sources: []string{"nope"}, Dir: t.TempDir()}
	_, err := SourceHash(m)
	if err == nil || !strings.Contains(err.Error(), `source "nope"`) {
		t.Fatalf("SourceHash with a missing source: %v", err)
	}
}

// countLines is the number of lines in dir/count.txt (0 when it does not exist).
func countLines(t *testing.T, dir string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "count.txt"))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(raw), "\n")
}

func TestBuilderBuildCaches(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "package main\n"})
	m := &Manifest{Name: "trivial", Runtime: "go", Build: "echo x >> count.txt && touch out.bin",
		Sources: []string{"main.go"}, Artifact: "out.bin", Start: "true", Dir: dir}
	b := &Builder{CacheDir: filepath.Join(t.TempDir(), "builds"), Settings: Settings{HeapMB: 64}}
	ctx := context.Background()

	steps := []struct {
		name      string
		before    func(t *testing.T)
		force     bool
		wantBuilt bool
		wantCount int
	}{
		{"first build", nil, false, true, 1},
		{"cached", nil, false, false, 1},
		{"cached again", nil, false, false, 1},
		{"source edited", func(t *testing.T) {
			writeFiles(t, dir, map[string]string{"main.go": "package main\n\nfunc main() {}\n"})
		}, false, true, 2},
		{"cached after the edit", nil, false, false, 2},
		{"forced", nil, true, true, 3},
		{"artifact deleted", func(t *testing.T) {
			if err := os.Remove(filepath.Join(dir, "out.bin")); err != nil {
				t.Fatal(err)
			}
		}, false, true, 4},
		{"cached at the end", nil, false, false, 4},
	}
	var lastHash string
	for _, st := range steps {
		if st.before != nil {
			st.before(t)
		}
		res, err := b.Build(ctx, m, st.force)
		if err != nil {
			t.Fatalf("%s: Build: %v", st.name, err)
		}
		if res.Built != st.wantBuilt {
			t.Errorf("%s: Built = %v, want %v", st.name, res.Built, st.wantBuilt)
		}
		if n := countLines(t, dir); n != st.wantCount {
			t.Errorf("%s: the build ran %d time(s) in all, want %d", st.name, n, st.wantCount)
		}
		if want := mustHash(t, m); res.Hash != want {
			t.Errorf("%s: Hash = %q, want SourceHash %q", st.name, res.Hash, want)
		}
		if res.Log != filepath.Join(b.CacheDir, "trivial.log") {
			t.Errorf("%s: Log = %q", st.name, res.Log)
		}
		stamp, err := os.ReadFile(filepath.Join(b.CacheDir, "trivial.hash"))
		if err != nil || strings.TrimSpace(string(stamp)) != res.Hash {
			t.Errorf("%s: stamp %q (%v), want %q", st.name, stamp, err, res.Hash)
		}
		if st.name == "source edited" && res.Hash == lastHash {
			t.Errorf("%s: hash did not change", st.name)
		}
		lastHash = res.Hash
	}
}

// The build runs in the contender's folder with the runtime's settings.
func TestBuilderBuildEnvironment(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "package main\n"})
	t.Setenv("GOMEMLIMIT", "1MiB")
	m := &Manifest{Name: "envcheck", Runtime: "go", Build: `echo "$GOMEMLIMIT $(pwd)" > env.txt`,
		Sources: []string{"main.go"}, Start: "true", Dir: dir}
	b := &Builder{CacheDir: t.TempDir(), Settings: Settings{HeapMB: 300}}
	if _, err := b.Build(context.Background(), m, false); err != nil {
		t.Fatalf("Build: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	realDir, _ := filepath.EvalSymlinks(dir)
	got := strings.TrimSpace(string(raw))
	if got != "300MiB "+dir && got != "300MiB "+realDir {
		t.Fatalf("build saw %q, want %q", got, "300MiB "+dir)
	}
}

func TestBuilderBuildFailure(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "package main\n"})
	m := &Manifest{Name: "failing", Runtime: "go",
		Build:   `i=1; while [ $i -le 30 ]; do echo "line$i"; i=$((i+1)); done; echo "compiler says no" >&2; exit 7`,
		Sources: []string{"main.go"}, Start: "true", Dir: dir}
	b := &Builder{CacheDir: t.TempDir(), Settings: Settings{HeapMB: 64}}
	res, err := b.Build(context.Background(), m, false)
	if err == nil {
		t.Fatal("a failing build returned no error")
	}
	msg := err.Error()
	for _, w := range []string{"building failing failed", "exit status 7", "compiler says no", "line30", "line17", res.Log} {
		if !strings.Contains(msg, w) {
			t.Errorf("error does not contain %q:\n%s", w, msg)
		}
	}
	// Only the last lines: 15 of the 31 the build printed.
	if strings.Contains(msg, "line16\n") || strings.Contains(msg, "line2\n") {
		t.Errorf("error carries more than the last lines:\n%s", msg)
	}
	if !res.Built {
		t.Errorf("Built = false for a build that ran")
	}
	// A failed build leaves no stamp, so the next Build runs it again.
	if _, err := os.Stat(filepath.Join(b.CacheDir, "failing.hash")); !os.IsNotExist(err) {
		t.Errorf("a failed build left a stamp (%v)", err)
	}
	if res2, err := b.Build(context.Background(), m, false); err == nil || !res2.Built {
		t.Errorf("second Build after a failure: Built=%v err=%v, want it run and failing again", res2.Built, err)
	}
}

func TestBuilderBuildMissingArtifact(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "package main\n"})
	m := &Manifest{Name: "noart", Runtime: "go", Build: "true", Sources: []string{"main.go"}, Artifact: "out.bin", Start: "true", Dir: dir}
	b := &Builder{CacheDir: t.TempDir(), Settings: Settings{HeapMB: 64}}
	_, err := b.Build(context.Background(), m, false)
	if err == nil || !strings.Contains(err.Error(), "artifact out.bin is missing") {
		t.Fatalf("Build without its artifact: %v", err)
	}
	if _, err := os.Stat(filepath.Join(b.CacheDir, "noart.hash")); !os.IsNotExist(err) {
		t.Errorf("a build without its artifact left a stamp (%v)", err)
	}
}

func TestBuilderNothingToBuild(t *testing.T) {
	dir := t.TempDir()
	m := &Manifest{Name: "script", Runtime: "node", Start: "exec node app.js", Dir: dir}
	b := &Builder{CacheDir: filepath.Join(t.TempDir(), "builds"), Settings: Settings{HeapMB: 64}}
	res, err := b.Build(context.Background(), m, true)
	if err != nil || res.Built || res.Hash == "" {
		t.Fatalf("Build with no build command: %+v, %v; want not built, a hash, no error", res, err)
	}
}

func TestBuilderBuildJavaWithoutJDK(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"pom.xml": "<project/>"})
	m := &Manifest{Name: "jvm", Runtime: "java", Build: "touch built", Sources: []string{"pom.xml"}, Start: "true", Dir: dir}
	b := &Builder{CacheDir: t.TempDir(), Settings: Settings{HeapMB: 64}}
	_, err := b.Build(context.Background(), m, false)
	if err == nil || !strings.Contains(err.Error(), "JDK") {
		t.Fatalf("Build of a java contender without a JDK: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "built")); !os.IsNotExist(err) {
		t.Errorf("the build ran without a JDK")
	}
}

func TestBuilderBuildCancelled(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"main.go": "package main\n"})
	m := &Manifest{Name: "slow", Runtime: "go", Build: "sleep 30", Sources: []string{"main.go"}, Start: "true", Dir: dir}
	b := &Builder{CacheDir: t.TempDir(), Settings: Settings{HeapMB: 64}}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.Build(ctx, m, false)
	if err != context.Canceled {
		t.Fatalf("Build with a cancelled context: %v, want context.Canceled", err)
	}
}
