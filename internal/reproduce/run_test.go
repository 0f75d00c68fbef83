package reproduce

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// TestResumeStopsAtAnUnreadableRun: a step's results.json that cannot be read (cut, or of a
// newer schema) stops the resume with an error naming the file, and the file is left as it
// was; a step whose run never saved one begins again.
func TestResumeStopsAtAnUnreadableRun(t *testing.T) {
	for name, body := range map[string]string{
		"newer schema": `{"schema": "arena.results/v9", "id": "r1"}`,
		"cut":          `{"schema": "arena.results/v2", "id": "r1", "cells": [`,
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "r1", results.JSONFile)
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-x", Status: results.RunInterrupted,
				Steps: []results.Step{{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "sleep", Preset: "seed", Contenders: []string{"netty"}},
					Run: "r1", Status: results.RunInterrupted}}}
			r := Runner{Find: func(string) (scenario.Scenario, error) { return nil, nil },
				Manifests: []*contender.Manifest{{Name: "netty"}}, Out: io.Discard}
			err := r.Run(context.Background(), rep, dir)
			if err == nil || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "step 1") {
				t.Fatalf("resuming over an unreadable %s: %v; want an error naming it", file, err)
			}
			if got, _ := os.ReadFile(file); string(got) != body {
				t.Errorf("the unreadable results.json was overwritten: %q", got)
			}
			if rep.Status != results.RunFailed {
				t.Errorf("the reproduction is %s, want failed", rep.Status)
			}
		})
	}
	if prev, err := begun(t.TempDir(), 0, "never-saved"); prev != nil || err != nil {
		t.Errorf("a run that never saved its results: %v, %v; want it begun again", prev, err)
	}
}
