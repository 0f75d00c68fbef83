package main

// End-to-end: runtime "other" takes a contender in a language arena has no entry for with a
// folder and a manifest only. The fixture testdata/contenders/py-stdlib (Python's standard
// library, no build) is copied into a lab of its own, so that the lab's contenders are not
// touched and no other contender is verified.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

const otherFixture = "py-stdlib"

// otherLab makes a lab holding only the fixture (its manifest changed by edit) and returns its
// root: a lab root is a folder with contenders/ and scenarios/ (lab.FindRoot), and the
// scenarios are built into arena, so scenarios/ may be empty.
func otherLab(t *testing.T, edit func(manifest string) string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "contenders", otherFixture)
	if err := os.MkdirAll(filepath.Join(root, "scenarios"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(filepath.Join("testdata", "contenders", otherFixture))); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		path := filepath.Join(dir, "contender.toml")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(edit(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The fixture passes every HTTP check of verify, and list shows it, with no Go change.
func TestTheOtherRuntimeTakesAContenderWithoutGoChanges(t *testing.T) {
	e2e(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("the fixture needs python3 on PATH")
	}
	root := otherLab(t, nil)

	out, code := arenaAt(t, root, 2*time.Minute, "verify", otherFixture)
	if code != 0 {
		t.Fatalf("arena verify exited %d:\n%s", code, out)
	}
	if !strings.Contains(out, otherFixture+" (thread-per-request, ") {
		t.Errorf("verify's output has no header line for %s:\n%s", otherFixture, out)
	}
	if strings.Contains(out, "FAIL") {
		t.Fatalf("a check failed:\n%s", out)
	}
	// The contender's tally, "  http 115/115 ✓" alone on its line: HTTP only, every check passed,
	// and as many checks printed ok as counted.
	m := regexp.MustCompile(`(?m)^  http (\d+)/(\d+) ✓$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no tally line \"http N/N ✓\" (HTTP alone) in verify's output:\n%s", out)
	}
	passed, _ := strconv.Atoi(m[1])
	total, _ := strconv.Atoi(m[2])
	ok := len(regexp.MustCompile(`(?m)^  ok   `).FindAllString(out, -1))
	if passed != total || ok != total || total < 100 {
		t.Fatalf("http %d/%d with %d checks printed ok; want every one of the 100 or more passed:\n%s", passed, total, ok, out)
	}
	for _, c := range []string{
		"answers on BIND_ADDRESS 127.0.0.2", "three pipelined requests are answered in order",
		"/data/504: no answer in 2 s → 502", "downstream connections are kept alive",
		"exits within 10 s of SIGTERM (defaults", "exits within 10 s of SIGTERM (lab downstream",
	} {
		if !strings.Contains(out, "  ok   "+c) {
			t.Errorf("verify's output has no passed check %q", c)
		}
	}
	if !strings.Contains(out, "all 1 contender(s) keep the contract") {
		t.Errorf("verify's output does not end with the contract kept:\n%s", out)
	}
	if left := procsIn(t, filepath.Join(root, "contenders")); len(left) > 0 {
		t.Errorf("processes of the fixture left behind: %v", left)
	}

	// list finds it among the lab's contenders, with the runtime its manifest names.
	out, code = arenaAt(t, root, 30*time.Second, "list")
	if code != 0 {
		t.Fatalf("arena list exited %d:\n%s", code, out)
	}
	row := regexp.MustCompile(`(?m)^` + otherFixture + ` +thread-per-request +other +- +- +WORKER_THREADS,DOWNSTREAM_URL,BIND_ADDRESS +Python 3 standard library`)
	if !row.MatchString(out) {
		t.Errorf("arena list shows no row for %s with its model, runtime other (no version), knobs and stack:\n%s", otherFixture, out)
	}
}

// A command the manifest requires that is not on PATH is one clear error before anything is
// built or started.
func TestTheOtherRuntimeRefusesAMissingCommand(t *testing.T) {
	e2e(t)
	const missing = "arena-no-such-tool"
	root := otherLab(t, func(manifest string) string {
		edited := regexp.MustCompile(`(?m)^requires\s*=.*$`).ReplaceAllString(manifest, `requires = ["`+missing+`"]`)
		if edited == manifest {
			t.Fatalf("the fixture's manifest has no requires line to change:\n%s", manifest)
		}
		return edited
	})
	out, code := arenaAt(t, root, 30*time.Second, "verify", otherFixture)
	if code != 1 {
		t.Fatalf("arena verify with %s required exited %d; want 1:\n%s", missing, code, out)
	}
	want := "contender " + otherFixture + " (runtime other) needs " + missing + ", which is not on PATH"
	if !strings.Contains(out, want) {
		t.Errorf("the error does not say %q:\n%s", want, out)
	}
	if strings.Contains(out, "ready") || strings.Contains(out, otherFixture+" (thread-per-request") {
		t.Errorf("verify began before refusing:\n%s", out)
	}
	// Nothing ran: verify makes the lab's .arena/ (its logs, its builds) only once it begins.
	if _, err := os.Stat(filepath.Join(root, ".arena")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the lab has a .arena folder (%v): something ran before the refusal", err)
	}
	if left := procsIn(t, filepath.Join(root, "contenders")); len(left) > 0 {
		t.Errorf("processes of the fixture running: %v", left)
	}
}
