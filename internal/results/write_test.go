package results

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// sampleRun is a small, fixed run: two contenders, two tags, one crash, fixed times.
func sampleRun() *Run {
	started := time.Date(2026, 11, 21, 6, 15, 0, 0, time.UTC)
	finished := started.Add(3 * time.Minute)
	code := 137
	tag := func(name string, sent, completed, late int64, rps float64, status, errs map[string]int64, resp, svc Latency) Tag {
		return Tag{
			TagStats: TagStats{Tag: name, Scheduled: sent, Sent: sent, Completed: completed, Late: late,
				MaxLateMs: 1.5, Status: status, Errors: errs},
			RPS: rps, Response: resp, Service: svc,
			Timeline: []Window{{T: 1, Count: completed, P50: resp.P50, P90: resp.P90, P99: resp.P99, Max: resp.Max}},
		}
	}
	fast := Latency{Count: 600, Mean: 1.234, Min: 0.5, P50: 1.1, P90: 2, P99: 4.5, P999: 9.75, Max: 12.345}
	slow := Latency{Count: 60, Mean: 10001.5, Min: 10000, P50: 10001, P90: 10002, P99: 10003.25, P999: 10004, Max: 10010}
	starved := Latency{Count: 590, Mean: 25000, Min: 3, P50: 24000, P90: 40000, P99: 59000, P999: 60000, Max: 60001}
	return &Run{
		Schema: SchemaVersion, ID: "20261121-061500-isolation", Command: []string{"arena", "run", "--quick"},
		Started: started, Finished: &finished, Status: "complete",
		Scenario: ScenarioInfo{Name: "isolation", Title: "Isolation", Study: "study 004", Preset: "seed", Quick: true, Repeat: 1,
			Levels: []Level{{Name: "seed", Load: "open loop", Env: map[string]string{"WORKER_THREADS": "11"},
				Streams: []StreamPlan{{Tag: "instant", Path: "/instant", Mode: "open", Rate: 10}}}},
			Notes: []string{"a note"}, Duration: 20, Timeout: 20},
		Env: Environment{Host: "lab", OS: "linux", Kernel: "6.1", CPUModel: "Test CPU", Cores: 2, MemoryGB: 7.5,
			GoVersion: "go1.26.8", JavaVersion: "21.0.2", ServerCPUs: "1", ClientCPUs: "0", HeapMB: 512, JavaOpts: "-Xms512m"},
		Contenders: []Contender{
			{Name: "spring-mvc", Stack: "Spring Boot", Model: "thread-per-request", Runtime: "java", Knobs: []string{"WORKER_THREADS"}, BuildHash: "0123456789abcdef", Verified: "passed"},
			{Name: "spring-webflux", Stack: "Spring Boot", Model: "reactive", Runtime: "java", Knobs: []string{}, BuildHash: "fedcba9876543210", Verified: "passed"},
		},
		Cells: []Cell{
			{
				Contender: "spring-mvc", Level: "seed", Repeat: 1, Env: map[string]string{"WORKER_THREADS": "11"}, Port: 40001,
				Started: started.Add(10 * time.Second), Seconds: 20.5,
				Outcome: Outcome{Status: OutcomeCrashed, Detail: "spring-mvc killed by killed", ExitCode: &code, Signal: "killed", LogTail: []string{"bye"}},
				Tags: []Tag{
					tag("instant", 200, 190, 3, 9.5, map[string]int64{"2xx": 180, "5xx": 7, "4xx": 3}, map[string]int64{"timeout": 6, "reset": 4}, starved, starved),
					tag("delayed", 200, 60, 0, 3, map[string]int64{"2xx": 60}, map[string]int64{}, slow, slow),
				},
				Server: Resources{Summary: Usage{CPUPctMean: 12.34567, RSSMBMax: 301.0004, ThreadsMax: 45, Samples: 80},
					Timeline: []Sample{{T: 0.25, CPUPct: 10, RSSMB: 300, Threads: 45, Procs: 1}}, CPUs: "1"},
				Client:      Resources{Summary: Usage{CPUPctMean: 95.5}, CPUs: "0"},
				ClientBound: true, ClientBoundWhy: "client CPU 96% of 1 core(s)", Hlog: "hlog/spring-mvc-seed-r1.hlog",
			},
			{
				Contender: "spring-webflux", Level: "seed", Repeat: 1, Env: map[string]string{}, Port: 40002,
				Started: started.Add(40 * time.Second), Seconds: 20,
				Outcome: Outcome{Status: OutcomeOK, Detail: "stopped in 5s"},
				Tags: []Tag{
					tag("instant", 200, 200, 0, 10, map[string]int64{"2xx": 200}, map[string]int64{}, fast, fast),
					tag("delayed", 200, 200, 0, 10, map[string]int64{"2xx": 200}, map[string]int64{}, slow, slow),
				},
				Server: Resources{Summary: Usage{CPUPctMean: 3.5, RSSMBMax: 250.25, ThreadsMax: 30}, CPUs: "1"},
				Client: Resources{Summary: Usage{CPUPctMean: 2}, CPUs: "0"},
			},
		},
		Summary:  []CellSummary{{Contender: "spring-webflux", Level: "seed", Repeats: 1, Outcomes: []string{"ok"}, Tags: []TagSummary{{Tag: "instant", Merged: fast}}}},
		Verdicts: []Verdict{{Contender: "spring-webflux", Level: "seed", Verdict: "isolated", Why: "fast"}},
		Claims:   []Claim{{ID: "b", Text: "claim", Verdict: "partly", Why: "some missing"}},
	}
}

func TestSaveLoadRoundtrip(t *testing.T) {
	dir := t.TempDir()
	run := sampleRun()
	if err := Save(run, dir); err != nil {
		t.Fatalf("Save: %v", err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{CSVFile, JSONFile}; !slices.Equal(names, want) {
		t.Errorf("files after Save: %v, want exactly %v (no temp files)", names, want)
	}
	for _, f := range []string{JSONFile, CSVFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v, want 0644", f, st.Mode().Perm())
		}
	}

	for _, path := range []string{dir, filepath.Join(dir, JSONFile)} {
		got, err := Load(path)
		if err != nil {
			t.Fatalf("Load(%s): %v", path, err)
		}
		if !reflect.DeepEqual(got, run) {
			a, _ := json.MarshalIndent(got, "", " ")
			b, _ := json.MarshalIndent(run, "", " ")
			t.Fatalf("Load(%s) differs from what was saved:\n%s\nwant\n%s", path, a, b)
		}
	}

	var csvBuf bytes.Buffer
	if err := WriteCSV(run, &csvBuf); err != nil {
		t.Fatal(err)
	}
	if raw, _ := os.ReadFile(filepath.Join(dir, CSVFile)); !bytes.Equal(raw, csvBuf.Bytes()) {
		t.Errorf("results.csv is not WriteCSV's output")
	}

	// Saving again replaces both files, still without leftovers.
	run.Status = "interrupted"
	run.Cells = run.Cells[:1]
	if err := Save(run, dir); err != nil {
		t.Fatalf("second Save: %v", err)
	}
	got, err := Load(dir)
	if err != nil || got.Status != "interrupted" || len(got.Cells) != 1 {
		t.Fatalf("Load after the second Save: %v, %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("%d files after the second Save, want 2", len(entries))
	}
}

func TestSaveIntoMissingFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "missing")
	if err := Save(sampleRun(), dir); err == nil {
		t.Fatal("Save into a missing folder succeeded")
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		path string
		want []string
	}{
		{"other schema", write("v0.json", `{"schema":"arena.results/v0","id":"x"}`), []string{`"arena.results/v0"`, `"` + SchemaVersion + `"`}},
		{"no schema", write("none.json", `{"id":"x"}`), []string{`schema ""`}},
		{"not JSON", write("bad.json", `{"schema":`), []string{"bad.json"}},
		{"missing file", filepath.Join(dir, "nope.json"), []string{"nope.json"}},
		{"folder without results", t.TempDir(), []string{JSONFile}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			run, err := Load(tt.path)
			if err == nil {
				t.Fatalf("Load = %+v, want an error", run)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

func TestWriteCSVGolden(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteCSV(sampleRun(), &buf); err != nil {
		t.Fatalf("WriteCSV: %v", err)
	}
	golden := filepath.Join("testdata", "results.golden.csv")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/results -run TestWriteCSVGolden -update to create it)", err)
	}
	if !bytes.Equal(buf.Bytes(), want) {
		t.Errorf("WriteCSV differs from %s (run with -update if the change is intended):\ngot:\n%s\nwant:\n%s", golden, buf.Bytes(), want)
	}
}

// The CSV's shape, independent of the golden file: one row per cell and tag, every row
// as wide as the header, and the counters summed as documented.
func TestWriteCSVRows(t *testing.T) {
	var buf bytes.Buffer
	run := sampleRun()
	if err := WriteCSV(run, &buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatalf("results.csv does not parse: %v", err)
	}
	if len(rows) != 1+4 || !slices.Equal(rows[0], CSVHeader) {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	col := map[string]int{}
	for i, h := range CSVHeader {
		col[h] = i
	}
	first := rows[1]
	for k, want := range map[string]string{
		"contender": "spring-mvc", "outcome": "crashed", "tag": "instant", "errors": "10", "error_pct": "5", "non_2xx": "10",
		"sent": "200", "late": "3", "rps": "9.5", "resp_p99_ms": "59000", "server_cpu_pct_mean": "12.346",
		"server_rss_mb_max": "301", "server_threads_max": "45", "client_bound": "true",
	} {
		if got := first[col[k]]; got != want {
			t.Errorf("row 1 %s = %q, want %q", k, got, want)
		}
	}
	if rows[4][col["contender"]] != "spring-webflux" || rows[4][col["tag"]] != "delayed" || rows[4][col["client_bound"]] != "false" {
		t.Errorf("last row %v", rows[4])
	}

	// A run without cells is just the header.
	buf.Reset()
	if err := WriteCSV(&Run{}, &buf); err != nil {
		t.Fatal(err)
	}
	if rows, _ := csv.NewReader(&buf).ReadAll(); len(rows) != 1 {
		t.Errorf("an empty run gives %d rows, want the header only", len(rows))
	}
}
