package main

// End-to-end: the gate for CI (issue 25) on the real binary and real contenders. The
// isolation study starves the blocking servlet at 11 request threads and not WebFlux, so
// `--fail-on fails` fails the one and passes the other. compare's --fail-on-regression is
// tested on TestCompareTellsASettingApart's runs (e2e_reproduce_test.go), which it shares.

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/gate"
	"github.com/arena-lab/arena/internal/results/schemadoc"
)

// junitDoc is what a CI viewer reads of a JUnit file.
type junitDoc struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Suites   []struct {
		Name  string `xml:"name,attr"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
			} `xml:"failure"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}

func readJUnit(t *testing.T, path string) junitDoc {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc junitDoc
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, raw)
	}
	return doc
}

// readSummary reads the run's summary.json and checks every key of it is documented.
func readSummary(t *testing.T, runDir string) gate.Summary {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(runDir, gate.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	schemadoc.Check(t, gate.SummaryFile, raw, "docs/results.md")
	s, err := gate.LoadSummary(runDir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// isolationGate runs isolation's quick form on contender with 11 request threads and
// --fail-on fails, and returns its exit status, output, summary and JUnit file.
func isolationGate(t *testing.T, contender string) (int, string, gate.Summary, junitDoc) {
	t.Helper()
	out := t.TempDir()
	junit := filepath.Join(t.TempDir(), "junit.xml")
	log, code := arena(t, 10*time.Minute, "run", "isolation", "--quick", "--duration", "5s", "--contenders", contender,
		"--env", "WORKER_THREADS=11", "--fail-on", "fails", "--junit", junit, "--out", out)
	run := loadOnlyRun(t, out)
	if run.Status != "complete" {
		t.Fatalf("status %s:\n%s", run.Status, log)
	}
	return code, log, readSummary(t, filepath.Join(out, run.ID)), readJUnit(t, junit)
}

// spring-mvc starves at 11 request threads: its cell fails --fail-on fails (exit 2), and
// the JUnit file names it, its figures in the message.
func TestGateFailsTheStarvedCell(t *testing.T) {
	e2e(t)
	code, log, s, doc := isolationGate(t, "spring-mvc")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (a check failed):\n%s", code, log)
	}
	if s.Result != gate.ResultFailed || s.Failed < 1 {
		t.Errorf("summary.json: result %s, %d failed", s.Result, s.Failed)
	}
	var starved bool
	for _, c := range doc.Suites[0].Cases {
		if c.Name == "spring-mvc/seed" && c.Classname == "arena.isolation.cells" && c.Failure != nil &&
			c.Failure.Type == "fails" && strings.HasPrefix(c.Failure.Message, "spring-mvc at seed: starved") && strings.Contains(c.Failure.Message, "instant p50") {
			starved = true
		}
	}
	if !starved || doc.Failures < 1 || doc.Tests != s.Passed+s.Failed+s.Skipped {
		t.Errorf("the JUnit file does not fail the starved cell: %+v", doc)
	}
	if !strings.Contains(log, "FAILED cell spring-mvc/seed (fails)") || !strings.Contains(log, "arena: ") {
		t.Errorf("the output does not say what failed:\n%s", log)
	}
}

// WebFlux stays isolated at 11 request threads: nothing fails, exit 0.
func TestGatePassesTheIsolatedCell(t *testing.T) {
	e2e(t)
	code, log, s, doc := isolationGate(t, "spring-webflux")
	if code != 0 {
		t.Fatalf("exit %d, want 0:\n%s", code, log)
	}
	if s.Result != gate.ResultPassed || s.Failed != 0 || doc.Failures != 0 {
		t.Errorf("summary.json %s with %d failed, JUnit %d failures:\n%s", s.Result, s.Failed, doc.Failures, log)
	}
}
