package cmd

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// action is a composite action's action.yml, every key it may use: parsed strictly, so that
// a misspelt key fails here rather than on GitHub.
type action struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Inputs      map[string]struct {
		Description string  `json:"description"`
		Default     *string `json:"default"`
		Required    bool    `json:"required"`
	} `json:"inputs"`
	Outputs map[string]struct {
		Description string `json:"description"`
		Value       string `json:"value"`
	} `json:"outputs"`
	Runs struct {
		Using string       `json:"using"`
		Steps []actionStep `json:"steps"`
	} `json:"runs"`
}

type actionStep struct {
	ID               string            `json:"id"`
	Name             string            `json:"name"`
	If               string            `json:"if"`
	Uses             string            `json:"uses"`
	Run              string            `json:"run"`
	Shell            string            `json:"shell"`
	WorkingDirectory string            `json:"working-directory"`
	With             map[string]string `json:"with"`
	Env              map[string]string `json:"env"`
}

const actionPath = "../.github/actions/arena/action.yml"

func readAction(t *testing.T) action {
	t.Helper()
	raw, err := os.ReadFile(actionPath)
	if err != nil {
		t.Fatal(err)
	}
	var a action
	if err := yaml.UnmarshalStrict(raw, &a); err != nil {
		t.Fatalf("%s: %v", actionPath, err)
	}
	return a
}

// The GitHub Action (which cannot run here) holds together: a composite action whose every
// script step names its shell, as GitHub requires; the inputs the README and docs/ci.md
// show; the report and the JUnit file uploaded if: always(), so that a failed check (exit 2)
// still leaves them.
func TestActionIsACompositeThatKeepsTheReportAlways(t *testing.T) {
	a := readAction(t)
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q, want composite", a.Runs.Using)
	}
	for _, in := range []string{"scenario", "contenders", "args", "fail-on", "junit"} {
		if _, ok := a.Inputs[in]; !ok {
			t.Errorf("no input %q", in)
		}
	}
	uploads := 0
	for _, s := range a.Runs.Steps {
		if s.Run != "" && s.Shell == "" {
			t.Errorf("step %q runs a script without a shell: a composite action's step must name one", s.Name)
		}
		if !strings.HasPrefix(s.Uses, "actions/upload-artifact@") {
			continue
		}
		uploads++
		if cond := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(s.If, "${{"), "}}")); cond != "always()" {
			t.Errorf("upload step %q runs if %q: want always(), or a failed check loses its report", s.Name, s.If)
		}
		if run := stepWithID(a, "run"); run == nil || s.With["path"] != run.Env["ARTIFACT_DIR"] {
			t.Errorf("upload step %q keeps %q: not the folder the arena step fills (ARTIFACT_DIR)", s.Name, s.With["path"])
		}
	}
	if uploads == 0 {
		t.Fatal("no actions/upload-artifact step")
	}
}

// stepWithID is the action's step with id, or nil.
func stepWithID(a action, id string) *actionStep {
	for i := range a.Runs.Steps {
		if a.Runs.Steps[i].ID == id {
			return &a.Runs.Steps[i]
		}
	}
	return nil
}

// standIn is an arena that records its arguments, writes what a run writes (the run's
// report, summary and logs, the JUnit file) and exits with $STATUS.
const standIn = `#!/bin/sh
for a in "$@"; do printf '%s\n' "$a"; done > "$(dirname "$0")/argv"
mkdir -p "runs/$RUN_ID/logs" && echo log > "runs/$RUN_ID/logs/a.log"
echo report > "runs/$RUN_ID/report.html" && echo '{}' > "runs/$RUN_ID/summary.json"
echo '<testsuites/>' > "$JUNIT"
exit "$STATUS"
`

// The action's arena step, run by bash as GitHub runs it, with a stand-in arena: every flag
// it passes is one `arena run` parses (its own flag set), the args input arrives split on
// spaces, the report, summary, logs and JUnit file are copied where the upload step looks,
// and arena's exit status is the step's, and its output, whatever it is.
func TestActionPassesArenaRunsFlagsAndItsExitStatus(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	step := stepWithID(readAction(t), "run")
	if step == nil {
		t.Fatal("no step with id run")
	}
	for _, status := range []int{0, 1, 2, 130} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "arena"), []byte(standIn), 0o755); err != nil {
			t.Fatal(err)
		}
		outputs, kept := filepath.Join(dir, "outputs"), filepath.Join(t.TempDir(), "arena-artifact")
		sh := exec.Command(bash, "--noprofile", "--norc", "-eo", "pipefail", "-c", step.Run) // as GitHub runs shell: bash
		sh.Dir = dir
		sh.Env = append(os.Environ(), "STATUS="+strconv.Itoa(status), "GITHUB_OUTPUT="+outputs, "ARTIFACT_DIR="+kept,
			"SCENARIO=isolation", "CONTENDERS=spring-mvc,spring-webflux", "FAIL_ON=fails,crashed", "JUNIT=out/junit.xml",
			"ARGS=--threshold instant:p99<50ms  --duration 10s", "RUN_ID=ci-1-1-arena")
		var stderr bytes.Buffer
		sh.Stderr = &stderr
		err := sh.Run()
		got := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			got = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if got != status {
			t.Errorf("arena exited %d, the step %d (%s)", status, got, stderr.String())
		}
		outs, _ := os.ReadFile(outputs)
		if !strings.Contains(string(outs), "exit-status="+strconv.Itoa(status)+"\n") || !strings.Contains(string(outs), "run-dir=runs/ci-1-1-arena\n") {
			t.Errorf("step outputs %q: want exit-status=%d and the run's folder", outs, status)
		}
		for _, f := range []string{"report.html", "summary.json", "logs/a.log", "junit.xml"} {
			if _, err := os.Stat(filepath.Join(kept, f)); err != nil {
				t.Errorf("exit %d: the artifact's folder lacks %s: %v", status, f, err)
			}
		}
		raw, err := os.ReadFile(filepath.Join(dir, "argv"))
		if err != nil {
			t.Fatalf("the stand-in arena was not run: %v (%s)", err, stderr.String())
		}
		checkRunArgs(t, strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n"))
	}
}

// checkRunArgs parses argv with arena run's own flags: an unknown flag, or a value a flag
// refuses, fails; what the action was given must arrive as given.
func checkRunArgs(t *testing.T, argv []string) {
	t.Helper()
	if len(argv) < 2 || argv[0] != "run" || argv[1] != "isolation" {
		t.Fatalf("argv %q: want run isolation …", argv)
	}
	run := newRunCmd()
	if err := run.ParseFlags(argv[1:]); err != nil {
		t.Fatalf("arena run refuses the action's flags %q: %v", argv, err)
	}
	f := run.Flags()
	for name, want := range map[string]string{"quick": "true", "id": "ci-1-1-arena", "fail-on": "[fails,crashed]",
		"junit": "out/junit.xml", "contenders": "[spring-mvc,spring-webflux]", "threshold": "[instant:p99<50ms]", "duration": "10s", "no-live": "true"} {
		if got := f.Lookup(name).Value.String(); got != want {
			t.Errorf("--%s is %q, want %q (argv %q)", name, got, want, argv)
		}
	}
}

// docs/ci.md's workflow uses the action with inputs it has, and every flag the README's and
// docs/ci.md's example lines (those that begin with ./arena run) give `arena run` is one it
// parses.
func TestCIDocsUseTheActionAsItIs(t *testing.T) {
	a := readAction(t)
	raw, err := os.ReadFile("../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(raw, -1)
	if len(blocks) == 0 {
		t.Fatal("docs/ci.md has no yaml block")
	}
	var workflow struct {
		Jobs map[string]struct {
			Steps []actionStep `json:"steps"`
		} `json:"jobs"`
	}
	if err := yaml.Unmarshal(blocks[0][1], &workflow); err != nil {
		t.Fatalf("docs/ci.md's workflow: %v", err)
	}
	uses := 0
	for job, j := range workflow.Jobs {
		for _, s := range j.Steps {
			if s.Uses != "./.github/actions/arena" {
				continue
			}
			uses++
			for in := range s.With {
				if _, ok := a.Inputs[in]; !ok {
					t.Errorf("job %s gives the action input %q, which it does not have", job, in)
				}
			}
			for in, spec := range a.Inputs {
				if _, given := s.With[in]; spec.Required && !given {
					t.Errorf("job %s does not give the action's required input %q", job, in)
				}
			}
		}
	}
	if uses == 0 {
		t.Fatal("docs/ci.md's workflow does not use ./.github/actions/arena")
	}
	for _, doc := range []string{"../docs/ci.md", "../README.md"} {
		text, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range regexp.MustCompile(`(?m)^\./arena run [^\n#]*`).FindAll(text, -1) {
			args := strings.Fields(strings.TrimPrefix(string(line), "./arena "))
			args = slices.DeleteFunc(args, func(a string) bool { return strings.HasPrefix(a, "<") || a == "\\" })
			for i := range args {
				args[i] = strings.Trim(args[i], "'`")
			}
			if err := newRunCmd().ParseFlags(args[1:]); err != nil {
				t.Errorf("%s: `%s`: %v", doc, line, err)
			}
		}
	}
}
