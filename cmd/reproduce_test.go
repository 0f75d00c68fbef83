package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

func TestReproduceRejectsBadInput(t *testing.T) {
	setup(t)
	saved := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
		want []string
	}{
		{"repeat 0", []string{"--repeat", "0"}, []string{"--repeat 0: give 1 to 100"}},
		{"matrix repeat 0", []string{"--matrix-repeat", "0"}, []string{"--matrix-repeat 0: give 1 to 100"}},
		{"an argument", []string{"isolation"}, []string{`unknown command "isolation"`}},
		{"unknown --only", []string{"--only", "isolaton"}, []string{`--only "isolaton": give scenarios or parts (studies, matrix, isolation`}},
		{"unknown contender", []string{"--contenders", "nosuch"}, []string{`no contender "nosuch"`}},
		{"nothing to run", []string{"--only", "studies", "--contenders", "go-nethttp"}, []string{"nothing to reproduce"}},
		{"resume with a plan", []string{"--resume", saved, "--repeat", "2"}, []string{"--resume carries on a reproduction with its own plan: drop --repeat"}},
		{"resume with --only", []string{"--resume", saved, "--only", "sleep"}, []string{"drop --only"}},
		{"add without resume", []string{"--add", "database"}, []string{"--add goes with --resume"}},
		{"resume of no reproduction", []string{"--resume", saved}, []string{`no reproduction "` + saved + `"`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			args := append([]string{"reproduce"}, tt.args...)
			if !strings.Contains(strings.Join(tt.args, " "), "--resume") {
				args = append(args, "--out", out)
			}
			refused(t, args, tt.want...)
			noWork(t, out)
		})
	}
}

// --dry-run prints the plan and its ETA, and runs and writes nothing.
func TestReproduceDryRun(t *testing.T) {
	setup(t)
	out := t.TempDir()
	// The default: 3 repeats a cell of the studies' forms, 1 of the matrix.
	o := execute(t, "reproduce", "--dry-run", "--only", "downstream", "--contenders", "vertx,spring-webflux,go-nethttp", "--out", out)
	if o.err != nil {
		t.Fatal(o.err)
	}
	for _, want := range []string{
		"arena reproduce: 3 runs, 3 repeat(s) a cell of the studies' forms, 1 of the matrix, in " + filepath.Join(out, "reproduce-"),
		"studies · downstream (seed, ×3) · spring-webflux, vertx  (about ",
		"studies · downstream (steady, levels self, ×3) · spring-webflux, vertx",
		"matrix · downstream (seed, quick, ×1) · go-nethttp",
		"ETA ",
	} {
		if !strings.Contains(o.stdout, want) {
			t.Errorf("the plan lacks %q:\n%s", want, o.stdout)
		}
	}
	if o.stderr != "" {
		t.Errorf("a dry run wrote to stderr: %q", o.stderr)
	}
	noWork(t, out)
}

// --resume of a finished reproduction runs nothing again and renders its findings, and the
// Markdown where asked.
func TestReproduceResumeOfAFinishedOneRendersItsFindings(t *testing.T) {
	root := fixtureLab(t)
	dir := filepath.Join(root, "runs", "reproduce-20261123-093000")
	day := time.Date(2026, 11, 23, 9, 30, 0, 0, time.UTC)
	run := fixtureRun("20261123-093100-isolation", "isolation", day, "spring-mvc", "spring-webflux")
	saveRun(t, dir, run)
	rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-20261123-093000", Command: []string{"arena", "reproduce"},
		Started: day, Status: results.RunInterrupted, Repeat: 1,
		Steps: []results.Step{{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "isolation", Preset: "study", Contenders: []string{"spring-mvc", "spring-webflux"}},
			Run: run.ID, Status: results.RunComplete}}}
	if err := results.SaveReproduction(rep, dir); err != nil {
		t.Fatal(err)
	}
	md := filepath.Join(t.TempDir(), "findings.md")
	o := execute(t, "reproduce", "--resume", dir, "--markdown", md)
	if o.err != nil {
		t.Fatalf("arena reproduce --resume: %v\n%s", o.err, o.stderr)
	}
	if !strings.Contains(o.stderr, "[step 1/1] studies · isolation (study) · spring-mvc, spring-webflux: complete, run "+run.ID) ||
		!strings.Contains(o.stderr, "findings:     "+filepath.Join(dir, "findings.html")) {
		t.Errorf("stderr:\n%s", o.stderr)
	}
	page, err := os.ReadFile(filepath.Join(dir, "findings.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"arena findings", run.ID + "/report.html", `id="study-isolation"`, `id="matrix"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the findings page lacks %q", want)
		}
	}
	text, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(text), "# Findings") || !strings.Contains(string(text), "`"+run.ID+"`") {
		t.Errorf("markdown:\n%s", text)
	}
	again, err := results.LoadReproduction(dir)
	if err != nil || again.Status != results.RunComplete || again.Finished == nil {
		t.Errorf("the record after a resume with nothing left: %+v, %v", again, err)
	}
}
