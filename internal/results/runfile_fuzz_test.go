package results

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runDirInside fails unless every id, joined as a run's folder onto a runs folder, stays in
// it: what each reader of run files does with the ids it read.
func runDirInside(t *testing.T, ids ...string) {
	t.Helper()
	const runs = "/lab/runs"
	for _, id := range ids {
		if err := CheckID(id); err != nil {
			t.Fatalf("an accepted file holds the id %q: %v", id, err)
		}
		dir, err := RunDir(runs, id)
		if rel, relErr := filepath.Rel(runs, dir); err != nil || relErr != nil || !filepath.IsLocal(rel) {
			t.Fatalf("id %q: its folder %q (%v) is not inside %s", id, dir, err, runs)
		}
	}
}

// FuzzLoad holds results.json's reader (Load, past reading the file: parseRun) to this: it
// never panics, whatever the bytes; a file it accepts has a run id of the id form, and its
// spec's id too when it has one, so that every folder or file named after them (a resumed
// run's, compare's page) stays in the folder it is joined onto.
func FuzzLoad(f *testing.F) {
	if v1, err := os.ReadFile(filepath.Join("testdata", "v1-stream.json")); err == nil {
		f.Add(v1)
	} else {
		f.Fatal(err)
	}
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	saved, err := json.Marshal(&Run{Schema: SchemaVersion, ID: "20261128-120000-sleep", Started: now, Status: RunComplete,
		Spec:  &RunSpec{Scenario: "sleep", Contenders: []string{"netty"}, ID: "20261128-120000-sleep"},
		Cells: []Cell{{Contender: "netty", Level: "l1", Repeat: 1, Started: now, Outcome: Outcome{Status: OutcomeOK}}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(saved)
	for _, raw := range []string{
		`{"schema": "arena.results/v2", "id": "../../outside"}`,
		`{"schema": "arena.results/v2", "id": "r1", "spec": {"id": "/tmp/x"}}`,
		`{"schema": "arena.results/v1", "id": "r1", "cells": [{"stream": {"delivered_per_s": 1e308, "server": {"dropped": 3}}}]}`,
		`{"schema": "arena.results/v2", "id": "r\u002f..", "cells": null}`,
	} {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		run, err := parseRun(raw, JSONFile)
		if err != nil {
			if run != nil {
				t.Fatalf("an error (%v) and a run", err)
			}
			return
		}
		ids := []string{run.ID}
		if run.Spec != nil && run.Spec.ID != "" {
			ids = append(ids, run.Spec.ID)
		}
		runDirInside(t, ids...)
		if run.Schema != SchemaVersion {
			t.Fatalf("an accepted file reads as schema %q, not %q", run.Schema, SchemaVersion)
		}
	})
}

// FuzzLoadReproduction holds reproduction.json's reader (LoadReproduction, past reading the
// file: parseReproduction) to this: it never panics; a record it accepts has its own id, and
// every step's run id and spec id that it has, of the id form, so that no step's folder (its
// run, its summary.json, the findings' links) is outside the reproduction's.
func FuzzLoadReproduction(f *testing.F) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	saved, err := json.Marshal(&Reproduction{Schema: ReproductionSchema, ID: "reproduce-20261128-120000", Started: now, Status: RunInterrupted,
		Steps: []Step{
			{Part: PartStudies, RunSpec: RunSpec{Scenario: "sleep", Preset: "seed", Contenders: []string{"netty"}, Repeat: 3}, Run: "20261128-120100-sleep", Status: RunComplete},
			{Part: PartMatrix, RunSpec: RunSpec{Scenario: "stream", Quick: true, Contenders: []string{"vertx"}}},
		}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(saved)
	step := `{"part": "studies", "scenario": "sleep", "contenders": ["netty"]`
	for _, raw := range []string{
		`{"schema": "arena.reproduction/v1", "id": "..", "steps": []}`,
		`{"schema": "arena.reproduction/v1", "id": "reproduce-1", "steps": [` + step + `, "run": "../../outside"}]}`,
		`{"schema": "arena.reproduction/v1", "id": "reproduce-1", "steps": [` + step + `, "id": "/abs", "run": "r1"}]}`,
		`{"schema": "arena.reproduction/v1", "id": "reproduce-1", "steps": [` + step + `, "target": {"name": "t", "url": "http://10.0.0.9:80", "addr": "10.0.0.9:80", "knobs": null}}]}`,
	} {
		f.Add([]byte(raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rep, err := parseReproduction(raw, ReproductionFile)
		if err != nil {
			if rep != nil {
				t.Fatalf("an error (%v) and a reproduction", err)
			}
			return
		}
		ids := []string{rep.ID}
		for _, st := range rep.Steps {
			for _, id := range []string{st.Run, st.ID} {
				if id != "" {
					ids = append(ids, id)
				}
			}
		}
		runDirInside(t, ids...)
		if rep.Schema != ReproductionSchema || strings.ContainsAny(rep.ID, `/\`) {
			t.Fatalf("an accepted record of schema %q, id %q", rep.Schema, rep.ID)
		}
	})
}
