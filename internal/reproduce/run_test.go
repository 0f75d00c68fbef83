package reproduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
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

// tree lists every file and folder under root with its size and time: what a refused
// resume must leave as it was.
func tree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fmt.Sprintf("%v %d %s", info.Mode(), info.Size(), info.ModTime())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestResumeRefusesCraftedSteps: a reproduction whose step names its run by a path, carries
// a target, or has a spec arena run would refuse, is refused before anything is written
// (the reproduction's record included) or run, and nothing appears in or beside its folder.
func TestResumeRefusesCraftedSteps(t *testing.T) {
	step := func(edit func(*results.Step)) *results.Reproduction {
		st := results.Step{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "sleep", Preset: "seed", Contenders: []string{"netty"}},
			Status: results.RunInterrupted}
		edit(&st)
		return &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-x", Status: results.RunInterrupted, Repeat: 3,
			Steps: []results.Step{{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "sleep"}, Run: "r0", Status: results.RunComplete}, st}}
	}
	var checked []results.RunSpec
	refusePort := func(spec results.RunSpec) error {
		checked = append(checked, spec)
		if spec.Port != 0 && spec.Port < 1024 {
			return fmt.Errorf("--port %d: give 1024 to 65535", spec.Port)
		}
		return nil
	}
	for _, tt := range []struct {
		name  string
		rep   *results.Reproduction
		check func(results.RunSpec) error
		want  string
	}{
		{"a run id that climbs out", step(func(st *results.Step) { st.Run = "../../outside" }), refusePort, `step 2: id "../../outside"`},
		{"an absolute run id", step(func(st *results.Step) { st.Run = "/tmp/outside" }), refusePort, `step 2: id "/tmp/outside"`},
		{"a spec id that climbs out", step(func(st *results.Step) { st.ID = ".." }), refusePort, `step 2: id ".."`},
		{"the reproduction's own id", func() *results.Reproduction {
			rep := step(func(*results.Step) {})
			rep.ID = "../x"
			return rep
		}(), refusePort, `reproduction: id "../x"`},
		{"a target elsewhere", step(func(st *results.Step) {
			st.Contenders, st.Target = nil, &results.Target{Name: "t", URL: "http://127.0.0.2:19080", Addr: "127.0.0.1:19080"}
		}), refusePort, "step 2: a target (http://127.0.0.2:19080)"},
		{"a spec arena run refuses", step(func(st *results.Step) { st.Port = 80 }), refusePort, "step 2 (sleep): --port 80"},
		{"no check at all", step(func(*results.Step) {}), nil, "no check for the steps' specs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "reproduce-x")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			before := tree(t, parent)
			found := false
			r := Runner{Find: func(string) (scenario.Scenario, error) { found = true; return nil, errors.New("not to be run") },
				Manifests: []*contender.Manifest{{Name: "netty"}}, Out: io.Discard, Check: tt.check}
			err := r.Run(context.Background(), tt.rep, dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("resumed: %v; want a refusal with %q", err, tt.want)
			}
			if tt.rep.Status != results.RunInterrupted || found {
				t.Errorf("the refused reproduction went on: status %s, a scenario looked up: %v", tt.rep.Status, found)
			}
			if after := tree(t, parent); !maps.Equal(before, after) {
				t.Errorf("a refused resume wrote: before %v, after %v", before, after)
			}
		})
	}
	// The spec checked is the step's as it would run: its repeats, and its run's id.
	if len(checked) == 0 {
		t.Fatal("no spec was checked")
	}
	if last := checked[len(checked)-1]; last.Repeat != 3 || last.Port != 80 || last.Scenario != "sleep" {
		t.Errorf("the spec checked: %+v; want the step's, with the reproduction's 3 repeats", last)
	}
}

// TestResumeRefusesAnotherRunsResults: a step's folder whose results.json names another run
// (or a path) is not carried on: the lab would reopen the folder that id names.
func TestResumeRefusesAnotherRunsResults(t *testing.T) {
	for id, want := range map[string]string{"r2": "holds run r2, not the step's r1", "../../outside": `id "../../outside"`} {
		t.Run(id, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, "reproduce-x")
			file := filepath.Join(dir, "r1", results.JSONFile)
			if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
				t.Fatal(err)
			}
			body := `{"schema": "arena.results/v2", "id": "` + id + `", "status": "interrupted"}`
			if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-x", Status: results.RunInterrupted,
				Steps: []results.Step{{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "sleep", Contenders: []string{"netty"}},
					Run: "r1", Status: results.RunInterrupted}}}
			r := Runner{Find: func(string) (scenario.Scenario, error) { return nil, nil },
				Manifests: []*contender.Manifest{{Name: "netty"}}, Out: io.Discard, Check: func(results.RunSpec) error { return nil }}
			err := r.Run(context.Background(), rep, dir)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("resumed over %s: %v; want %q", body, err, want)
			}
			entries, _ := os.ReadDir(parent)
			if len(entries) != 1 {
				t.Errorf("beside the reproduction's folder: %v", entries)
			}
		})
	}
}
