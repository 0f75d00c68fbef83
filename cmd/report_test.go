package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestReportRejectsBadInput(t *testing.T) {
	setup(t)
	refused(t, []string{"report", "nosuch-run"}, `no run "nosuch-run"`)
	refused(t, []string{"report"}, "accepts 1 arg")
	refused(t, []string{"report", "a", "b"}, "accepts 1 arg")
}

// arena report finds a run by id, folder or results.json, judges it again with this
// arena's scenario, writes report.html beside it (or to -o) and prints where.
func TestReport(t *testing.T) {
	root := fixtureLab(t)
	started := time.Date(2026, 11, 21, 6, 15, 0, 0, time.UTC)
	isolation := saveRun(t, filepath.Join(root, "runs"), fixtureRun("20261121-061500-isolation", "isolation", started, "spring-mvc", "spring-webflux"))
	elsewhere := t.TempDir()
	unknown := saveRun(t, elsewhere, fixtureRun("20261121-070000-gone", "gone", started, "spring-mvc"))

	for _, tt := range []struct {
		name   string
		args   []string
		report string
		// rejudged: the saved verdicts are gone, judged again by the isolation scenario
		rejudged bool
	}{
		{"by id", []string{"20261121-061500-isolation"}, filepath.Join(isolation, "report.html"), true},
		{"by folder", []string{isolation}, filepath.Join(isolation, "report.html"), true},
		{"by results.json, to -o", []string{filepath.Join(isolation, "results.json"), "-o", filepath.Join(elsewhere, "r.html")}, filepath.Join(elsewhere, "r.html"), true},
		{"of a scenario this arena lacks", []string{unknown}, filepath.Join(unknown, "report.html"), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			os.Remove(tt.report)
			o := execute(t, append([]string{"report"}, tt.args...)...)
			if o.err != nil {
				t.Fatalf("arena report %s: %v", strings.Join(tt.args, " "), o.err)
			}
			if o.stdout != tt.report+"\n" || o.stderr != "" {
				t.Errorf("arena report printed %q and %q on stderr, want only the report's path %q", o.stdout, o.stderr, tt.report)
			}
			page, err := os.ReadFile(tt.report)
			if err != nil {
				t.Fatalf("no report: %v", err)
			}
			for _, want := range []string{"spring-mvc", "/* chart library */"} {
				if !strings.Contains(string(page), want) {
					t.Errorf("the report lacks %q", want)
				}
			}
			if kept := strings.Contains(string(page), savedVerdict); kept == tt.rejudged {
				t.Errorf("the report has the saved verdicts: %v, want %v", kept, !tt.rejudged)
			}
		})
	}
}

// A results.json another arena wrote, in a schema this one does not read, is refused.
func TestReportOfAnotherSchema(t *testing.T) {
	root := fixtureLab(t)
	run := fixtureRun("20261121-061500-isolation", "isolation", time.Now(), "spring-mvc")
	run.Schema = "arena/0"
	saveRun(t, filepath.Join(root, "runs"), run)
	refused(t, []string{"report", run.ID}, `no run "`+run.ID+`"`, `schema "arena/0"`)
	if _, err := os.Stat(filepath.Join(root, "runs", run.ID, "report.html")); err == nil {
		t.Error("a report was written anyway")
	}
}
