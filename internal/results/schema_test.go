package results_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	chatload "github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/results/schemadoc"
	streamload "github.com/arena-lab/arena/internal/stream"
)

// fullSpec has every field of a run spec set.
var fullSpec = results.RunSpec{Scenario: "s", Preset: "seed", Quick: true, DurationS: 10, TimeoutS: 5, Levels: []string{"l"},
	Contenders: []string{"x"}, Repeat: 3, Env: map[string]string{"WORKER_THREADS": "11"}, Profile: true, Port: 8080,
	ServerCPUs: "1", ClientCPUs: "0", HeapMB: 512, Rebuild: true, Reverify: true, ID: "r",
	Target: &results.Target{Name: "target", URL: "http://127.0.0.1:8080", Addr: "127.0.0.1:8080", Pid: 42,
		Env: map[string]string{"WORKER_THREADS": "11"}, Knobs: []string{"WORKER_THREADS"}, SkipVerify: true}}

// everyKindOfRun has a cell of every kind of load a scenario plans (an open loop with a
// late send, a closed loop over the lab's downstream, chat deliveries with faults, a
// capped /stream push with its figures) and every optional field set, so that its JSON
// holds every key results.json can hold.
func everyKindOfRun(t *testing.T) *results.Run {
	t.Helper()
	started := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	code := 137
	stopped := 3.5
	carriers := 1
	tag := func(name string) results.Tag {
		h := results.NewHistogram()
		_ = h.RecordValue(int64(2 * time.Millisecond))
		enc, err := results.EncodeHist(h)
		if err != nil {
			t.Fatal(err)
		}
		return results.Tag{
			TagStats: results.TagStats{Tag: name, Scheduled: 10, Sent: 10, Completed: 9, Late: 1, MaxLateMs: 12,
				Status: map[string]int64{"2xx": 9}, Errors: map[string]int64{"timeout": 1}},
			RPS: 9, Response: results.LatencyOf(h), Service: results.LatencyOf(h),
			Timeline:     []results.Window{{T: 1, Count: 9, Errors: 1, P50: 2, P90: 2, P99: 2, Max: 2}},
			ResponseHist: enc, ServiceHist: enc,
		}
	}
	usage := results.Resources{CPUs: "1", Summary: results.UsageOf([]results.Sample{
		{T: 0.25, CPUPct: 50, UserPct: 40, SysPct: 10, RSSMB: 100, Threads: 20, Procs: 1, FDs: 30, VolCSPerS: 5, InvCSPerS: 1},
		{T: 0.5, CPUPct: 60, UserPct: 50, SysPct: 10, RSSMB: 110, Threads: 21, Procs: 1, FDs: 31, VolCSPerS: 6, InvCSPerS: 2},
	}, 0, 0)}
	usage.Timeline = []results.Sample{{T: 0.25, CPUPct: 50, UserPct: 40, SysPct: 10, RSSMB: 100, Threads: 20, Procs: 1, FDs: 30, VolCSPerS: 5, InvCSPerS: 1}}
	finished := started.Add(time.Hour)
	run := &results.Run{
		Schema: results.SchemaVersion, ID: "20261123-090000-every", Command: []string{"arena", "run"},
		Started: started, Finished: &finished, Status: results.RunComplete,
		Spec: &fullSpec, ForcedResume: []string{"heap_mb: 512 → 1024"},
		Scenario: results.ScenarioInfo{Name: "every", Title: "t", Study: "s", Preset: "seed", Quick: true, Repeat: 1,
			Duration: 20, Timeout: 20, Notes: []string{"n"},
			Headline: []results.Headline{{Figure: "p99", Tag: "instant", Per: results.PerFirst, Label: "/instant p99", Unit: "ms"}},
			Levels: []results.Level{{Name: "l", Group: "g", X: 1, XName: "connections", Downstream: true, DownstreamDelayMs: 50,
				Load: "open loop", Env: map[string]string{"WORKER_THREADS": "11"},
				Streams: []results.StreamPlan{{Tag: "instant", Path: "/instant", Mode: "open", Rate: 10, Connections: 1, Requests: 10}}}}},
		Env: results.Environment{Host: "h", OS: "o", Kernel: "k", CPUModel: "c", Cores: 2, MemoryGB: 24, GoVersion: "go",
			JavaVersion: "25", JavaHome: "/jdk", NodeVersion: "v20", ServerCPUs: "1", ClientCPUs: "0", HeapMB: 512,
			JavaOpts: "-Xmx512m", ArenaRev: "abc", Notes: []string{"n"}},
		Contenders: []results.Contender{{Name: "x", Description: "d", Stack: "s", Model: "m", Runtime: "go",
			Knobs: []string{"BACKPRESSURE"}, Notes: "n", BuildHash: "h", Verified: "passed", Target: "http://127.0.0.1:8080"}},
		Verdicts: []results.Verdict{{Contender: "x", Level: "l", Verdict: "bounded", Tone: results.Good, Why: "w"}},
		Claims:   []results.Claim{{ID: "a", Text: "t", Verdict: results.ClaimHolds, Why: "w"}},
	}
	cell := results.Cell{Contender: "x", Level: "l", Repeat: 1, Env: map[string]string{"BACKPRESSURE": "on"}, Port: 8080,
		Started: started, Seconds: 20, Tags: []results.Tag{tag("instant"), tag("delivery")},
		Server: usage, Client: usage, Downstream: &usage, ClientBound: true, ClientBoundWhy: "w",
		SharedCPU: true, SharedCPUWhy: "w", Interference: &results.Interference{ServerOtherPct: 12, ServerStealPct: 1, ClientOtherPct: 3},
		Hlog: "hlog/x.hlog", HlogError: "read-only",
		Outcome: results.Outcome{Status: results.OutcomeUnresponsive, Detail: "d", ExitCode: &code, Signal: "killed", LogTail: []string{"l"},
			Killed: true, StoppedAnswering: &stopped},
		Memory: &results.Memory{CapMB: 1024, By: "heap", Why: "no cgroup", MaxUsedMB: 900, OOMKills: 1},
		Runtime: &results.Runtime{JVM: &results.JVM{Pid: 7, Collector: "Serial", InitialHeapMB: 512, MaxHeapMB: 512,
			ActiveProcessorCountFlag: -1, Processors: 1, VirtualThreadParallelism: 1, Carriers: &carriers},
			Threads: map[string]int{"ForkJoinPool--worker-": 2}, Processes: map[string]int{"java": 1}, Unread: map[string]string{"threads": "gone"}},
		Heap: &results.Heap{Log: "logs/x-l-r1.gc.log", Collections: 2, FullCollections: 1, PauseMsTotal: 3, PauseMsMax: 2, MaxAfterMB: 40,
			EndAfterMB: 30, ThinnedS: 0.25, Unread: "u", Timeline: []results.HeapPoint{{T: 1, BeforeMB: 150, AfterMB: 40, HeapMB: 494, PauseMs: 2, Full: true}}},
	}
	stats := streamload.Stats{Clients: 1, Generated: 10, Sent: 9, Dropped: 1}
	if err := cell.PutFigures(&streamload.Figures{Clients: 1, Connected: 1, SlowClients: 1, ReadDelayMs: 200, Rate: 0,
		Size: 250, Delivered: 9, PerSecond: 9, Seconds: 1, CutShort: true, PerClient: results.SpreadOf([]float64{9}), Gaps: 2,
		Malformed: 1, OutOfOrder: 1, Duplicated: 1, ClosedEarly: 1, Lossless: true, Server: &stats,
		StatsTimeline: []streamload.StatsSample{{T: 1, OK: true, Stats: stats}}, StatsFailed: 1, Responsive: true}); err != nil {
		t.Fatal(err)
	}
	chat := cell
	chat.Figures, chat.Numbers, chat.Faults = nil, nil, nil
	if err := chat.PutFigures(&chatload.Figures{Members: 2, Lost: 1, Duplicated: 1, Reordered: 1, Leaked: 1, CutShort: true}); err != nil {
		t.Fatal(err)
	}
	steady := results.Cell{Contender: "x", Level: "l", Repeat: 2, Started: started, Outcome: results.Outcome{Status: results.OutcomeOK}}
	if err := steady.PutFigures(load.SteadyFigures{Settled: true, WarmupS: 25, Windows: []float64{900, 1000, 1010, 1005}, SpreadPct: 1}); err != nil {
		t.Fatal(err)
	}
	steady.Unverified, steady.Server.Unprobed = true, results.NoServerProcess // a target run with --skip-verify, no --target-pid
	run.Cells = []results.Cell{cell, chat, steady}
	var err error
	if run.Summary, err = results.Summarise(run.Cells); err != nil {
		t.Fatal(err)
	}
	run.Summary[0].Noisy, run.Summary[0].NoisyWhy = true, []string{"w"}
	return run
}

// Every key results.json can hold is documented in docs/results.md.
func TestEveryKeyIsDocumented(t *testing.T) {
	allDocumented(t, "results.json", everyKindOfRun(t))
}

// allDocumented checks that every key of v as JSON is documented in docs/results.md.
func allDocumented(t *testing.T, file string, v any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	schemadoc.Check(t, file, raw, "../../docs/results.md")
}

// Every key reproduction.json can hold is documented in docs/results.md.
func TestEveryReproductionKeyIsDocumented(t *testing.T) {
	started := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	rep := results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-x", Command: []string{"arena"}, Started: started, Finished: &started,
		Status: results.RunComplete, Repeat: 1, Only: []string{"studies"}, Quick: true, Notes: []string{"n"},
		Steps: []results.Step{{Part: results.PartStudies, RunSpec: fullSpec,
			Why: "w", EstimateS: 60, Run: "r", Status: results.RunComplete, Forced: []string{"heap_mb: 512 → 1024"}}}}
	allDocumented(t, "reproduction.json", rep)
}

// A reproduction's record round-trips through its folder, and a record of another schema is
// refused.
func TestReproductionRoundTrip(t *testing.T) {
	dir := t.TempDir()
	rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-x", Repeat: 2,
		Steps: []results.Step{{Part: results.PartMatrix, RunSpec: results.RunSpec{Scenario: "sleep", Contenders: []string{"netty"}}, Run: "r"}}}
	if err := results.SaveReproduction(rep, dir); err != nil {
		t.Fatal(err)
	}
	back, err := results.LoadReproduction(dir)
	if err != nil || back.Steps[0].Run != "r" || back.Repeat != 2 {
		t.Fatalf("back: %+v, %v", back, err)
	}
	rep.Schema = "arena.reproduction/v0"
	if err := results.SaveReproduction(rep, dir); err != nil {
		t.Fatal(err)
	}
	if _, err := results.LoadReproduction(dir); err == nil || !strings.Contains(err.Error(), `schema "arena.reproduction/v0"`) {
		t.Errorf("another schema: %v", err)
	}
}

// A load's figures go into the cell under their kind and come back; their numbers are
// summarised over every repeat the load ran in, a crashed one included.
func TestFiguresRoundTripAndSummarise(t *testing.T) {
	cell := func(rate float64, status string) results.Cell {
		c := results.Cell{Contender: "x", Level: "l", Outcome: results.Outcome{Status: status}}
		if err := c.PutFigures(&streamload.Figures{PerSecond: rate, Seconds: 10, Responsive: true}); err != nil {
			t.Fatal(err)
		}
		return c
	}
	cells := []results.Cell{cell(100, results.OutcomeOK), cell(300, results.OutcomeCrashed), cell(200, results.OutcomeOK),
		cell(999, results.OutcomeInterrupted)}
	f, ok := streamload.FiguresOf(cells[1])
	if !ok || f.PerSecond != 300 || !f.Responsive {
		t.Fatalf("figures back: %+v %v", f, ok)
	}
	if _, ok := streamload.FiguresOf(results.Cell{}); ok {
		t.Fatal("a cell without figures has some")
	}
	sum, err := results.Summarise(cells)
	if err != nil {
		t.Fatal(err)
	}
	got := sum[0].Numbers[streamload.NumberDelivered]
	if got.Median != 200 || got.Min != 100 || got.Max != 300 {
		t.Fatalf("delivered spread %+v; want 100..300 around 200 (the interrupted repeat left out)", got)
	}
}

// A v1 file (written before loads kept their own figures) still loads: its cells' stream
// field becomes their figures and numbers, and the summary has the numbers' medians.
func TestLoadReadsSchemaV1(t *testing.T) {
	run, err := results.Load("testdata/v1-stream.json")
	if err != nil {
		t.Fatal(err)
	}
	if run.Schema != results.SchemaVersion || len(run.Cells) != 2 {
		t.Fatalf("schema %q, %d cells", run.Schema, len(run.Cells))
	}
	f, ok := streamload.FiguresOf(run.Cells[1])
	if !ok || f.PerSecond != 1_000_000 || f.Server == nil || f.Server.Dropped != 3_000_000 || f.PerClient.Max != 21000 {
		t.Fatalf("figures of a v1 cell: %+v %v", f, ok)
	}
	if n := run.Cells[0].Numbers; n[streamload.NumberDelivered] != 900_000 || n[streamload.NumberDropped] != 3_600_000 {
		t.Fatalf("numbers of a v1 cell: %v", n)
	}
	if got := run.Summary[0].Numbers[streamload.NumberDelivered]; got.Median != 950_000 || got.Min != 900_000 || got.Max != 1_000_000 {
		t.Fatalf("summary of a v1 run: %+v", got)
	}
}
