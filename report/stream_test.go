package report

import (
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/results"
)

// fixtureStream is a stream-like run: two contenders × four levels; without back-pressure
// under slow readers, undertow runs out of memory at its cap.
func fixtureStream(t *testing.T) *results.Run {
	start := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	finished := start.Add(10 * time.Minute)
	run := &results.Run{
		Schema: results.SchemaVersion, ID: "20261121-090000-stream", Command: []string{"arena", "run", "stream", "--quick"},
		Started: start, Finished: &finished, Status: "complete", Env: fixtureEnv(),
		Scenario:   results.ScenarioInfo{Name: "stream", Title: "Stream", Study: "study 003", Preset: "default", Quick: true, Repeat: 1},
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
				Memory:  &results.Memory{CapMB: 1024, By: "cgroup", MaxUsedMB: 400},
				Stream: &results.Stream{Clients: 50, Connected: 50, Size: 250, PerSecond: 500000 + float64(ci)*100000, Delivered: 5000000,
					PerClient: results.Spread{Min: 9000, Median: 10000, Max: 11000}, Responsive: true,
					Server: &results.StreamStats{Generated: 9000000, Sent: 5000000, Dropped: 4000000}}}
			if slow {
				c.Stream.SlowClients, c.Stream.PerSecond, c.Stream.ReadDelayMs = 50, 250, 200
			}
			for i := 0; i <= 40; i++ {
				rss := 300.0
				if slow && off {
					rss += float64(i) * 20
				}
				c.Server.Timeline = append(c.Server.Timeline, probe.Sample{T: float64(i) / 4, RSSMB: rss, CPUPct: 90})
				c.Server.Summary.RSSMBMax = max(c.Server.Summary.RSSMBMax, rss)
			}
			if slow && off && name == "undertow" {
				c.Outcome = results.Outcome{Status: results.OutcomeOutOfMemory, Detail: "killed at the cap", Signal: "killed"}
				c.Memory.OOMKills, c.Memory.MaxUsedMB, c.Stream.Responsive = 1, 1024, false
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
	for _, want := range []string{"delivered messages/s and the server", "600000 msg/s, RSS 300 MB", "out-of-memory: slow-off r1"} {
		if !strings.Contains(page, want) {
			t.Errorf("matrix lacks %q", want)
		}
	}
}
