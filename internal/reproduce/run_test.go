package reproduce

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
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
				Manifests: []*contender.Manifest{{Name: "netty"}}, Out: io.Discard, Check: func(results.RunSpec) error { return nil }}
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

// TestResumeRefusesAnotherLab: a reproduction whose steps so far ran with another heap is not
// carried on, even where every step left is new, unless forced; the refusal names the heap
// and leaves the reproduction as it was.
func TestResumeRefusesAnotherLab(t *testing.T) {
	dir := t.TempDir()
	l := &lab.Lab{Root: t.TempDir(), Settings: contender.Settings{HeapMB: 512}, ServerCPUs: []int{1}, ClientCPUs: []int{0}}
	prev := &results.Run{Schema: results.SchemaVersion, ID: "r1", Status: results.RunComplete,
		Env: lab.Environment(l.Root, contender.Settings{HeapMB: 1024}, l.ServerCPUs, l.ClientCPUs)}
	if err := os.MkdirAll(filepath.Join(dir, "r1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.Save(prev, filepath.Join(dir, "r1")); err != nil {
		t.Fatal(err)
	}
	rep := func() *results.Reproduction {
		return &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-x", Status: results.RunInterrupted,
			Steps: []results.Step{{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "sleep"}, Run: "r1", Status: results.RunComplete}}}
	}
	r := Runner{Lab: l, Out: io.Discard}
	refused := rep()
	err := r.Run(context.Background(), refused, dir)
	if err == nil || !strings.Contains(err.Error(), "heap_mb: 1024 → 512") || !strings.Contains(err.Error(), "--force-resume") {
		t.Fatalf("resumed with another heap: %v; want a refusal naming it", err)
	}
	if refused.Status != results.RunInterrupted {
		t.Errorf("a refused resume left the reproduction %s, want it as it was", refused.Status)
	}
	// One that ended complete has nothing to carry on: resuming it renders its findings again,
	// with this arena's rules, and measures nothing.
	done := rep()
	done.Status = results.RunComplete
	if err := r.Run(context.Background(), done, dir); err != nil || done.Status != results.RunComplete {
		t.Errorf("a finished reproduction resumed in another lab: %v, %s; want nothing to do", err, done.Status)
	}
	r.ForceResume = true
	if forced := rep(); r.Run(context.Background(), forced, dir) != nil || forced.Status != results.RunComplete {
		t.Errorf("forced: %s", forced.Status)
	}
}
