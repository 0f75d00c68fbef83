// Package schemadoc checks results.json against its documentation, docs/results.md: every
// key a run writes must be named there in backquotes. Only tests import it.
package schemadoc

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"
)

// Check fails t for every key of the JSON document raw (named what in the message) that the
// documentation at docPath does not name.
func Check(t testing.TB, what string, raw []byte, docPath string) {
	t.Helper()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	missing, err := Undocumented(raw, doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range missing {
		t.Errorf("%s can hold the key %q, which %s does not document", what, k, docPath)
	}
}

// Undocumented lists the keys of the JSON document raw that doc does not name as `key`,
// sorted; map keys that are data rather than schema (status classes, error kinds, contract
// variables) are not asked for.
func Undocumented(raw, doc []byte) ([]string, error) {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	var walk func(x any, in string)
	walk = func(x any, in string) {
		switch x := x.(type) {
		case map[string]any:
			for k, y := range x {
				if !slices.Contains(dataMaps, in) {
					keys[k] = true
				}
				walk(y, in+"."+k)
			}
		case []any:
			for _, y := range x {
				walk(y, in+"[]")
			}
		}
	}
	walk(v, "")
	var missing []string
	for k := range keys {
		if !dynamic(k) && !bytes.Contains(doc, []byte("`"+k+"`")) {
			missing = append(missing, k)
		}
	}
	slices.Sort(missing)
	return missing, nil
}

// dataMaps are the objects, by their path in results.json, whose keys are data: a cell's
// server threads and processes counted by name, as the running process named them.
var dataMaps = []string{".cells[].runtime.threads", ".cells[].runtime.processes"}

// dynamic: map keys that are data, not schema.
func dynamic(k string) bool {
	switch k {
	case "2xx", "3xx", "4xx", "5xx", "other", "timeout", "refused", "reset", "closed",
		"missing", "duplicated", "out-of-order", "connect", // chat delivery faults
		"malformed", // stream delivery faults
		"WORKER_THREADS", "DOWNSTREAM_URL", "BACKPRESSURE", "PPROF_ADDR", "BIND_ADDRESS", "PORT":
		return true
	}
	return false
}
