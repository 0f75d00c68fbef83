package cmd

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/gate"
	"github.com/arena-lab/arena/internal/results"
)

// --fail-on, --threshold and --junit are read before anything runs: a word it does not
// know, a threshold it cannot read or on a stream the run does not measure, a JUnit file
// with no folder to go in.
func TestRunRefusesBadGateInput(t *testing.T) {
	setup(t)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"unknown word", []string{"isolation", "--fail-on", "fails,starved"}, []string{`--fail-on "starved": not a word it knows; give any of fails, partly, untested, crashed, unresponsive, faults, errors, inconclusive`}},
		{"threshold without a stream", []string{"isolation", "--threshold", "p99<50ms"}, []string{`--threshold "p99<50ms": name the stream whose p99 it bounds`}},
		{"threshold without a unit", []string{"isolation", "--threshold", "instant:p99<50"}, []string{`"50" is no latency`}},
		{"threshold of no figure", []string{"isolation", "--threshold", "instant:p95<50ms"}, []string{`no figure "p95"`}},
		{"stream of another scenario", []string{"isolation", "--threshold", "sleep:p99<50ms"},
			[]string{`--threshold "sleep:p99<50ms": no stream "sleep" in this run; its streams: instant, delayed, liveness, readiness`}},
		{"stream of a level not run", []string{"sleep", "--levels", "sleep-c200", "--threshold", "data:rps>5000"},
			[]string{`no stream "data" in this run; its streams: sleep`}},
		{"junit nowhere", []string{"isolation", "--junit", "/nonexistent/arena/junit.xml"}, []string{"--junit /nonexistent/arena/junit.xml: no folder /nonexistent/arena to write it in"}},
		{"junit a folder", []string{"isolation", "--junit", os.TempDir()}, []string{"a folder; name a file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			refused(t, append(append([]string{"run"}, tt.args...), "--out", out), tt.want...)
			noWork(t, out)
		})
	}
}

func TestReproduceRefusesBadGateInput(t *testing.T) {
	setup(t)
	refused(t, []string{"reproduce", "--dry-run", "--fail-on", "nosuch"}, `--fail-on "nosuch": not a word it knows`)
	refused(t, []string{"reproduce", "--dry-run", "--only", "isolation", "--contenders", "spring-mvc", "--threshold", "sleep:p99<1s"}, `--threshold "sleep:p99<1s": no stream "sleep" in this run; its streams: instant, delayed, liveness, readiness`)
	refused(t, []string{"reproduce", "--dry-run", "--junit", "/nonexistent/arena/junit.xml"}, "no folder /nonexistent/arena")
	// A stream of any scenario the reproduction runs will do.
	if o := execute(t, "reproduce", "--dry-run", "--only", "isolation,sleep", "--contenders", "spring-mvc", "--threshold", "sleep:p99<1s", "--threshold", "instant:p99<50ms"); o.err != nil {
		t.Errorf("thresholds on the streams of two scenarios: %v", o.err)
	}
}

// starvedRun is a finished isolation run: spring-mvc starved at its one level, with the
// figures of its /instant; spring-webflux isolated.
func starvedRun(id string) *results.Run {
	run := fixtureRun(id, "isolation", time.Date(2026, 11, 23, 9, 31, 0, 0, time.UTC), "spring-mvc", "spring-webflux")
	run.Scenario.Levels[0].Streams = []results.StreamPlan{{Tag: "instant"}}
	run.Summary = []results.CellSummary{
		{Contender: "spring-mvc", Level: "study", Repeats: 1, Outcomes: []string{results.OutcomeOK},
			Tags: []results.TagSummary{{Tag: "instant", Merged: results.Latency{Count: 200, P50: 3000, P99: 20020}, RPS: results.Spread{Median: 9.5}, Sent: 200, Errors: 20, ErrKinds: map[string]int64{"timeout": 20}, ErrorPct: 10}}},
		{Contender: "spring-webflux", Level: "study", Repeats: 1, Outcomes: []string{results.OutcomeOK},
			Tags: []results.TagSummary{{Tag: "instant", Merged: results.Latency{Count: 200, P50: 2, P99: 8}, RPS: results.Spread{Median: 10}, Sent: 200}}},
	}
	run.Verdicts = []results.Verdict{
		{Contender: "spring-mvc", Level: "study", Verdict: "starved", Tone: results.Bad, Why: "instant p99 20.02 s"},
		{Contender: "spring-webflux", Level: "study", Verdict: "isolated", Tone: results.Good, Why: "instant p99 8 ms"},
	}
	run.Claims = []results.Claim{{ID: "a", Text: "The synchronous servlet degrades.", Verdict: results.ClaimHolds, Why: "starved"},
		{ID: "c", Text: "/delayed compounds.", Verdict: results.ClaimUntestedHere, Why: "needs 50 s of load"}}
	return run
}

// A run's end judged: summary.json beside results.json, the failed checks on stdout, the
// JUnit file, and the error that makes the exit status: a failed check's alone, the run's
// own (interrupted, or failed) before it.
func TestAfterRunJudgesTheRun(t *testing.T) {
	dir := t.TempDir()
	run := starvedRun("20261123-093100-isolation")
	junit := filepath.Join(t.TempDir(), "junit.xml")
	gf := gateFlags{failOn: []string{"fails"}, thresholds: []string{"instant:p99<50ms"}, junit: junit}
	if err := gf.parse(); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := gf.afterRun(run, dir, nil, &stdout, &stderr)
	var failed *gateFailed
	if !errors.As(err, &failed) || err.Error() != "2 of 6 checks failed (--fail-on fails; --threshold instant:p99<50ms): cell spring-mvc/study; threshold instant:p99<50ms at spring-mvc/study" {
		t.Fatalf("error %v", err)
	}
	for _, want := range []string{
		"Checks (--fail-on fails; --threshold instant:p99<50ms): 3 passed, 2 failed, 1 skipped",
		"  FAILED cell spring-mvc/study (fails)\n      spring-mvc at study: starved (instant p99 20.02 s); instant p50 3.00 s, p99 20.02 s, 9.50 requests/s, errors 10.0 % (20 of 200: 20 timeout)",
		"  FAILED threshold instant:p99<50ms at spring-mvc/study (threshold)",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
		}
	}
	if stderr.String() != "junit:   "+junit+"\n" {
		t.Errorf("stderr %q", stderr.String())
	}
	s, err := gate.LoadSummary(dir)
	if err != nil || s.Result != gate.ResultFailed || s.Failed != 2 || s.Run != run.ID {
		t.Errorf("summary.json: %+v, %v", s, err)
	}
	raw, err := os.ReadFile(junit)
	if err != nil || !bytes.Contains(raw, []byte(`<testcase name="spring-mvc/study" classname="arena.isolation.cells"`)) {
		t.Errorf("junit: %v\n%s", err, raw)
	}

	// The run's own end comes first: interrupted (130) or failed (1), never 2.
	for _, runErr := range []error{errInterrupted, errors.New("report: not written")} {
		err := gf.afterRun(run, dir, runErr, &stdout, &stderr)
		if !errors.Is(err, runErr) || errors.As(err, &failed) {
			t.Errorf("after %v: %v", runErr, err)
		}
	}
	// Nothing measured: nothing judged, no summary.
	empty := t.TempDir()
	if err := gf.afterRun(nil, "", errors.New("nothing measured"), &stdout, &stderr); err == nil || err.Error() != "nothing measured" {
		t.Errorf("nothing measured: %v", err)
	}
	if _, err := os.Stat(filepath.Join(empty, gate.SummaryFile)); err == nil {
		t.Error("a summary of nothing")
	}
}

// Without a gate a run's summary.json is written all the same and nothing more is printed.
func TestAfterRunWithoutAGate(t *testing.T) {
	dir := t.TempDir()
	var gf gateFlags
	if err := gf.parse(); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := gf.afterRun(starvedRun("20261123-093100-isolation"), dir, nil, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if stdout.Len() > 0 || stderr.Len() > 0 {
		t.Errorf("printed %q %q", stdout.String(), stderr.String())
	}
	if s, err := gate.LoadSummary(dir); err != nil || s.Result != gate.ResultPassed || s.Skipped != 2 {
		t.Errorf("summary.json: %+v, %v", s, err)
	}
}

// reproductionLab is a lab with a finished reproduction of one isolation run, spring-mvc
// starved in it; it returns the reproduction's folder.
func reproductionLab(t *testing.T) string {
	t.Helper()
	root := fixtureLab(t)
	dir := filepath.Join(root, "runs", "reproduce-20261123-093000")
	run := starvedRun("20261123-093100-isolation")
	saveRun(t, dir, run)
	rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-20261123-093000", Command: []string{"arena", "reproduce"},
		Started: run.Started, Status: results.RunComplete, Repeat: 1,
		Steps: []results.Step{{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "isolation", Preset: "study", Contenders: []string{"spring-mvc", "spring-webflux"}},
			Run: run.ID, Status: results.RunComplete}}}
	if err := results.SaveReproduction(rep, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// The exit status, end to end through runArena on saved runs (nothing measured): 2 when a
// check failed, 0 when none did, 1 on bad input.
func TestExitStatusOfAGate(t *testing.T) {
	dir := reproductionLab(t)
	junit := filepath.Join(t.TempDir(), "junit.xml")
	cases := []struct {
		args []string
		want int
	}{
		{[]string{"reproduce", "--resume", dir, "--fail-on", "fails", "--junit", junit}, exitFailed},
		{[]string{"reproduce", "--resume", dir, "--fail-on", "untested"}, exitFailed},
		{[]string{"reproduce", "--resume", dir, "--fail-on", "crashed,unresponsive,faults,errors,inconclusive,partly"}, 0},
		{[]string{"reproduce", "--resume", dir, "--threshold", "errors<20%"}, 0},
		{[]string{"reproduce", "--resume", dir, "--threshold", "errors<5%"}, exitFailed},
		{[]string{"reproduce", "--resume", dir}, 0},
		{[]string{"reproduce", "--resume", dir, "--fail-on", "starved"}, exitError},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		if code := runArena(context.Background(), c.args, &stdout, &stderr); code != c.want {
			t.Errorf("arena %s: exit %d, want %d\n%s%s", strings.Join(c.args, " "), code, c.want, stdout.String(), stderr.String())
		}
		if c.want == exitFailed && !strings.Contains(stderr.String(), "arena: 1 of ") {
			t.Errorf("arena %s: stderr does not say what failed:\n%s", strings.Join(c.args, " "), stderr.String())
		}
	}
	raw, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Name  string `xml:"name,attr"`
			Cases []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Failures != 1 || len(doc.Suites) != 1 || doc.Suites[0].Name != "20261123-093100-isolation" ||
		doc.Suites[0].Cases[0].Name != "spring-mvc/study" || doc.Suites[0].Cases[0].Failure == nil ||
		!strings.HasPrefix(doc.Suites[0].Cases[0].Failure.Message, "spring-mvc at study: starved") {
		t.Errorf("junit:\n%s", raw)
	}
	if s, err := gate.LoadSummary(filepath.Join(dir, "20261123-093100-isolation")); err != nil || s.Run != "20261123-093100-isolation" {
		t.Errorf("the reproduction's run has no summary.json: %v", err)
	}
}

// arena compare --fail-on-regression: 2 on a significant change past the threshold in the
// wrong direction, named; 0 on a run against itself; 1 when it could never fail.
func TestCompareFailOnRegression(t *testing.T) {
	runs := compareLab(t)
	saveRun(t, runs, compareRun("20261123-103000-isolation", "isolation", nil, 9, 9, 9))
	junit := filepath.Join(t.TempDir(), "compare.xml")
	page := filepath.Join(t.TempDir(), "page.html")
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := runArena(context.Background(), append([]string{"compare"}, append(args, "-o", page)...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, stdout, stderr := run("20261123-100000-sleep", "20261123-101000-sleep", "--fail-on-regression", "--junit", junit)
	if code != exitFailed {
		t.Fatalf("a 94 %% drop: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"Regressions (--fail-on-regression: significant at p < 0.05 and worse by more than 10 %): 0 passed, 4 failed, 0 skipped",
		"  FAILED change spring-mvc/study sleep requests/s (regression)\n      spring-mvc at study: worse by 94.48 %, past 10 %: sleep 1985 ±0% → 110 ±1% (requests/s), p=0.008 n=5+5",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "arena: 4 of 4 checks failed (--fail-on-regression: significant at p < 0.05 and worse by more than 10 %): change spring-mvc/study sleep requests/s;") {
		t.Errorf("stderr:\n%s", stderr)
	}
	if raw, err := os.ReadFile(junit); err != nil || !bytes.Contains(raw, []byte(`failures="4"`)) {
		t.Errorf("junit: %v\n%s", err, raw)
	}
	if code, out, errOut := run("20261123-100000-sleep", "20261123-100000-sleep", "--fail-on-regression"); code != 0 {
		t.Errorf("a run against itself: exit %d\n%s%s", code, out, errOut)
	}
	// B faster than A is no regression; a threshold past the drop lets it through.
	if code, out, errOut := run("20261123-101000-sleep", "20261123-100000-sleep", "--fail-on-regression"); code != 0 {
		t.Errorf("an improvement: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := run("20261123-100000-sleep", "20261123-101000-sleep", "--fail-on-regression", "--threshold", "5%"); code != exitFailed {
		t.Errorf("--threshold 5%%: exit %d\n%s", code, errOut)
	}
	if code, _, _ := run("20261123-100000-sleep", "20261123-101000-sleep", "--fail-on-regression", "--threshold", "2000%"); code != 0 {
		t.Errorf("--threshold 2000%%: exit %d", code)
	}
	// Three repeats a side can never reach p < 0.05: refused, rather than a gate that cannot fail.
	code, _, stderr = run("20261123-102000-isolation", "20261123-103000-isolation", "--fail-on-regression")
	if code != exitError || !strings.Contains(stderr, "arena: --fail-on-regression cannot fail on these runs: with 3 and 3 repeats the least P a U test can give is 0.100") {
		t.Errorf("3 + 3 repeats: exit %d\n%s", code, stderr)
	}
	// Without --fail-on-regression the exit status is the comparison's, whatever changed.
	if code, _, _ := run("20261123-100000-sleep", "20261123-101000-sleep", "--junit", junit); code != 0 {
		t.Errorf("no --fail-on-regression: exit %d", code)
	}
	if raw, _ := os.ReadFile(junit); !bytes.Contains(raw, []byte(`failures="0"`)) || !bytes.Contains(raw, []byte(`skipped="4"`)) {
		t.Errorf("junit without --fail-on-regression:\n%s", raw)
	}
}

func TestCompareRefusesBadGateInput(t *testing.T) {
	compareLab(t)
	refused(t, []string{"compare", "20261123-100000-sleep", "20261123-101000-sleep", "--threshold", "5%"}, "--threshold goes with --fail-on-regression")
	refused(t, []string{"compare", "20261123-100000-sleep", "20261123-101000-sleep", "--fail-on-regression", "--threshold", "lots"}, `--threshold "lots": give the change allowed in per cent`)
	refused(t, []string{"compare", "20261123-100000-sleep", "20261123-101000-sleep", "--junit", "/nonexistent/arena/c.xml"}, "no folder /nonexistent/arena")
}

// The exit statuses are said in the help of every command that gates.
func TestExitStatusInHelp(t *testing.T) {
	setup(t)
	for _, c := range []string{"run", "reproduce", "compare"} {
		o := execute(t, c, "--help")
		for _, want := range []string{"Exit status: 0 when", "1 when the\ncommand itself failed", "2 when a check\nfailed", "130 when interrupted"} {
			if !strings.Contains(o.stdout, want) {
				t.Errorf("arena %s --help lacks %q", c, want)
			}
		}
	}
}
