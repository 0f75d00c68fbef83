package main

// End-to-end: the gate for CI (issue 25) on the real binary and real contenders. The
// isolation study starves the blocking servlet at 11 request threads and not WebFlux, so
// `--fail-on fails` fails the one and passes the other, on TestIsolationStarvesTheSyncServletOnly's
// run (e2e_test.go), which it shares. compare's --fail-on-regression is tested on
// TestCompareTellsASettingApart's runs (e2e_reproduce_test.go), which it shares too.

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

// checkGate checks the gate of TestIsolationStarvesTheSyncServletOnly's run: spring-mvc's
// starved cell fails --fail-on fails, named with its figures in the output, summary.json and
// the JUnit file; spring-webflux's isolated cell is there and passes.
func checkGate(t *testing.T, log string, s gate.Summary, doc junitDoc) {
	t.Helper()
	if s.Result != gate.ResultFailed || s.Failed < 1 {
		t.Errorf("summary.json: result %s, %d failed", s.Result, s.Failed)
	}
	var starved, isolated bool
	for _, c := range doc.Suites[0].Cases {
		if c.Classname != "arena.isolation.cells" {
			continue
		}
		switch c.Name {
		case "spring-mvc/seed":
			starved = c.Failure != nil && c.Failure.Type == "fails" &&
				strings.HasPrefix(c.Failure.Message, "spring-mvc at seed: starved") && strings.Contains(c.Failure.Message, "instant p50")
		case "spring-webflux/seed":
			isolated = c.Failure == nil
		}
	}
	if !starved || !isolated || doc.Failures < 1 || doc.Tests != s.Passed+s.Failed+s.Skipped {
		t.Errorf("the JUnit file does not fail the starved cell and pass the isolated one: %+v", doc)
	}
	if !strings.Contains(log, "FAILED cell spring-mvc/seed (fails)") || strings.Contains(log, "FAILED cell spring-webflux") || !strings.Contains(log, "arena: ") {
		t.Errorf("the output does not say what failed:\n%s", log)
	}
}
