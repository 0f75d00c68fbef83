package report

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
	streamload "github.com/arena-lab/arena/internal/stream"
	streamscenario "github.com/arena-lab/arena/scenarios/stream"
)

// fixtureStream is a stream-like run: two contenders × four levels; without back-pressure
// under slow readers, undertow runs out of memory at its cap.
func fixtureStream(t *testing.T) *results.Run {
	start := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	finished := start.Add(10 * time.Minute)
	run := &results.Run{
		Schema: results.SchemaVersion, ID: "20261121-090000-stream", Command: []string{"arena", "run", "stream", "--quick"},
		Started: start, Finished: &finished, Status: "complete", Env: fixtureEnv(),
		Scenario:   results.ScenarioInfo{Name: "stream", Title: "Stream", Study: "study 003", Preset: "default", Quick: true, Repeat: 1, Headline: headlineOf(streamscenario.Scenario{})},
		Contenders: []results.Contender{{Name: "undertow", Verified: "passed"}, {Name: "netty", Verified: "passed"}},
	}
	for _, lv := range []string{"throughput-on", "throughput-off", "slow-on", "slow-off"} {
		run.Scenario.Levels = append(run.Scenario.Levels, results.Level{Name: lv, Load: "push", Env: map[string]string{"BACKPRESSURE": lv[strings.LastIndex(lv, "-")+1:]},
			Streams: []results.StreamPlan{{Tag: "stream", Path: "/stream?rate=0&size=250", Mode: "push", Connections: 50}}})
	}
	for ci, name := range []string{"undertow", "netty"} {
		for _, lv := range run.Scenario.Levels {
			slow, off := strings.HasPrefix(lv.Name, "slow"), lv.Env["BACKPRESSURE"] == "off"
			c := results.Cell{Contender: name, Level: lv.Name, Repeat: 1, Env: lv.Env, Started: start, Seconds: 10,
				Outcome: results.Outcome{Status: results.OutcomeOK},
				Memory:  &results.Memory{CapMB: 1024, By: "cgroup", MaxUsedMB: 400}}
			f := &streamload.Figures{Clients: 50, Connected: 50, Size: 250, PerSecond: 500000 + float64(ci)*100000, Seconds: 10, Delivered: 5000000,
				PerClient: results.Spread{Min: 9000, Median: 10000, Max: 11000}, Responsive: true,
				Server: &streamload.Stats{Generated: 9000000, Sent: 5000000, Dropped: 4000000}}
			if slow {
				f.SlowClients, f.PerSecond, f.ReadDelayMs = 50, 250, 200
			}
			for i := 0; i <= 40; i++ {
				rss := 300.0
				if slow && off {
					rss += float64(i) * 20
				}
				c.Server.Timeline = append(c.Server.Timeline, results.Sample{T: float64(i) / 4, RSSMB: rss, CPUPct: 90})
				c.Server.Summary.RSSMBMax = max(c.Server.Summary.RSSMBMax, rss)
			}
			if slow && off && name == "undertow" {
				c.Outcome = results.Outcome{Status: results.OutcomeOutOfMemory, Detail: "killed at the cap", Signal: "killed"}
				c.Memory.OOMKills, c.Memory.MaxUsedMB, f.Responsive = 1, 1024, false
			}
			if err := c.PutFigures(f); err != nil {
				t.Fatal(err)
			}
			run.Cells = append(run.Cells, c)
		}
	}
	var err error
	if run.Summary, err = results.Summarise(run.Cells); err != nil {
		t.Fatal(err)
	}
	return run
}

func TestRenderStream(t *testing.T) {
	page := render(t, fixtureStream(t), []byte("/* chart library */"))
	s := sectionByID(t, page, "stream")
	if n := chartCount(s); n != 2 {
		t.Errorf("%d charts in the stream section, want throughput and memory", n)
	}
	for _, want := range []string{"out-of-memory", "1 OOM kill(s)", "unresponsive at the end", "4000000", "1024 MB cap"} {
		if !strings.Contains(s, want) {
			t.Errorf("stream section lacks %q", want)
		}
	}
	data := chartDataOf(t, page)
	if data.StreamRSS == nil || len(data.StreamRSS.Lines) != 4 || data.StreamRSS.CapMB != 1024 {
		t.Fatalf("stream memory data: %+v", data.StreamRSS)
	}
	dashed := 0
	for _, l := range data.StreamRSS.Lines {
		if l.Dash == "dashed" {
			dashed++
		}
	}
	if dashed != 2 {
		t.Errorf("%d dashed lines, want the two without back-pressure", dashed)
	}
	bars := data.Bars[len(data.Bars)-1]
	if bars.Unit != "messages/s" || len(bars.Series) != 2 || bars.Series[0].Name != "throughput-on" || len(bars.Categories) != 2 {
		t.Errorf("throughput bars: %+v", bars)
	}
	if data.Levels[2].CapMB != 1024 {
		t.Errorf("a level's memory chart has no cap: %+v", data.Levels[2].CapMB)
	}
	if strings.Contains(render(t, fixtureSleep(), []byte("x")), `id="stream"`) {
		t.Error("a run without /stream cells has a stream section")
	}
}

func TestChromiumDrawsStream(t *testing.T) {
	t.Parallel()
	browserCheck(t, "stream", func(lib, out string) error { return WriteFile(fixtureStream(t), lib, out) })
}

func TestMatrixShowsDeliveredAndMemory(t *testing.T) {
	page := renderMatrix(t, append(fixtureMatrixRuns(), fixtureStream(t)), []byte("/* chart library */"))
	for _, want := range []string{"delivered messages/s per level, server RSS peak per level", "600000 messages/s, server RSS peak 300 MB", "out-of-memory: slow-off r1"} {
		if !strings.Contains(page, want) {
			t.Errorf("matrix lacks %q", want)
		}
	}
}

// faultyStream is the stream fixture with netty caught duplicating at throughput-off, killed
// after SIGTERM in one cell, and one cell capped by its heap alone.
func faultyStream(t *testing.T) *results.Run {
	run := fixtureStream(t)
	for i := range run.Cells {
		c := &run.Cells[i]
		switch {
		case c.Contender == "netty" && c.Level == "throughput-off":
			c.Faults = map[string]int64{results.FaultDuplicated: 3}
		case c.Contender == "netty" && c.Level == "slow-on":
			c.Outcome.Killed = true
		case c.Contender == "undertow" && c.Level == "slow-on":
			c.Memory = &results.Memory{CapMB: 512, By: results.MemoryByHeap, Why: "no cgroup-v1 memory controller"}
		}
	}
	var err error
	if run.Summary, err = results.Summarise(run.Cells); err != nil {
		t.Fatal(err)
	}
	return run
}

// A cell with delivery faults is marked in the report (the header, its own section, the
// figures, the stream table) and its rate is left out of the bars, its label marked; a
// contender killed after SIGTERM is said so; a cap that was the heap's alone is said so.
func TestRenderMarksIntegrityFaults(t *testing.T) {
	page := render(t, faultyStream(t), []byte("/* chart library */"))
	integrity := sectionByID(t, page, "integrity")
	for _, want := range []string{"netty", "throughput-off", "3 duplicated"} {
		if !strings.Contains(integrity, want) {
			t.Errorf("integrity section lacks %q", want)
		}
	}
	for _, want := range []string{"1 cell(s) had delivery faults", "Memory cap: no memory cgroup could be made", "no cgroup-v1 memory controller",
		"Delivery faults: 3 duplicated; not ranked", "killed after SIGTERM"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if s := sectionByID(t, page, "stream"); !strings.Contains(s, `<span class="alert">3 duplicated</span>`) {
		t.Error("the stream table does not mark the faulty cell")
	}
	bars := chartDataOf(t, page).Bars
	b := bars[len(bars)-1]
	netty := slices.Index(b.Categories, "netty")
	off := slices.IndexFunc(b.Series, func(s barSeries) bool { return s.Name == "throughput-off" })
	if netty < 0 || off < 0 || b.Series[off].Values[netty] != nil || b.Series[0].Values[netty] == nil {
		t.Fatalf("bars %+v; want netty's throughput-off left out, its throughput-on kept", b)
	}
	if len(b.Unranked) != len(b.Categories) || !strings.Contains(b.Unranked[netty], "throughput-off: delivery faults (3 duplicated), not ranked") || b.Unranked[1-netty] != "" {
		t.Errorf("unranked %q", b.Unranked)
	}
	if clean := render(t, fixtureStream(t), []byte("x")); strings.Contains(clean, `id="integrity"`) || strings.Contains(clean, "killed after SIGTERM") {
		t.Error("a run without faults or kills is marked")
	}
}

func TestMatrixMarksIntegrityFaults(t *testing.T) {
	page := renderMatrix(t, []*results.Run{faultyStream(t)}, []byte("/* chart library */"))
	for _, want := range []string{"delivery faults at throughput-off: 3 duplicated: not ranked", "killed after SIGTERM: slow-on r1"} {
		if !strings.Contains(page, want) {
			t.Errorf("matrix lacks %q", want)
		}
	}
	b := chartDataOf(t, page).Bars[0]
	netty := slices.Index(b.Categories, "netty")
	if b.Unranked == nil || !strings.Contains(b.Unranked[netty], "not ranked") {
		t.Errorf("matrix bars %+v: netty's faulty figure is not left out", b)
	}
}

func TestChromiumDrawsMarkedBars(t *testing.T) {
	t.Parallel()
	browserCheck(t, "faulty-stream", func(lib, out string) error { return WriteFile(faultyStream(t), lib, out) })
}
