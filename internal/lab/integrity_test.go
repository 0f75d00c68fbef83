package lab

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	chatload "github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/faulty"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	streamload "github.com/arena-lab/arena/internal/stream"
	chatscenario "github.com/arena-lab/arena/scenarios/chat"
	streamscenario "github.com/arena-lab/arena/scenarios/stream"
)

// cellDir is a run's folder for cells run alone.
func cellDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, sub := range []string{"logs", "hlog"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// levelOf is a level of s's quick plan, its load shortened by shorten.
func levelOf(t *testing.T, s scenario.Scenario, name string, shorten func(scenario.Level) scenario.Level) scenario.Level {
	t.Helper()
	plan, err := s.Plan(scenario.Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	plan, err = plan.Filter([]string{name})
	if err != nil {
		t.Fatal(err)
	}
	return shorten(plan.Levels[0])
}

// judged is a run of cells at levels, summarised and judged by s, as the lab finishes one.
func judged(t *testing.T, s scenario.Scenario, levels []scenario.Level, cells []results.Cell) *results.Run {
	t.Helper()
	run := &results.Run{Cells: cells}
	for _, lv := range levels {
		run.Scenario.Levels = append(run.Scenario.Levels, scenario.Describe(lv))
	}
	for _, c := range cells {
		if !strings.Contains(strings.Join(contenderNames(run), ","), c.Contender) {
			run.Contenders = append(run.Contenders, results.Contender{Name: c.Contender})
		}
	}
	var err error
	if run.Summary, err = results.Summarise(run.Cells); err != nil {
		t.Fatal(err)
	}
	run.Verdicts, run.Claims = s.Judge(run)
	return run
}

func contenderNames(run *results.Run) []string {
	var out []string
	for _, c := range run.Contenders {
		out = append(out, c.Name)
	}
	return out
}

func verdictOf(run *results.Run, contender string) results.Verdict {
	for _, v := range run.Verdicts {
		if v.Contender == contender {
			return v
		}
	}
	return results.Verdict{}
}

// The lab's chat server, wrapped to send each member's last message twice, to leak one
// message to another room, or to drop one without a word, is driven by the chat scenario's
// own load in a real cell and judged by its own judge: faults, each counted apart. The same
// server unwrapped is complete.
func TestWrappedChatServersEndAsFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts contenders")
	}
	l := testLab(t, nil)
	level := levelOf(t, chatscenario.Scenario{}, "r2-u5", func(lv scenario.Level) scenario.Level {
		ld := lv.Load.(chatload.Load)
		ld.Messages, ld.JoinWait, ld.Linger = 30, 300*time.Millisecond, 5*time.Second
		lv.Load = ld
		return lv
	})
	dir := cellDir(t)
	want := map[faulty.Fault]map[string]int64{
		faulty.None:          nil,
		faulty.DuplicateLast: {results.FaultDuplicated: 10}, // every member's last message, caught in the grace
		faulty.LeakOne:       {results.FaultLeaked: 1},
		faulty.DropOne:       {results.FaultLost: 1},
	}
	var cells []results.Cell
	for _, fault := range []faulty.Fault{faulty.None, faulty.DuplicateLast, faulty.LeakOne, faulty.DropOne} {
		cell := l.runCell(context.Background(), cellPlan{m: wrapped(t, fault), level: level, repeat: 1}, dir, 0)
		if cell.Outcome.Status != results.OutcomeOK {
			t.Fatalf("%s: outcome %+v", fault, cell.Outcome)
		}
		if !equalCounts(cell.Faults, want[fault]) {
			t.Errorf("%s: faults %v, want %v", fault, cell.Faults, want[fault])
		}
		// a copy is no second delivery, nor a second latency
		d := cell.Tags[0]
		if delivered := d.Scheduled - want[fault][results.FaultLost]; d.Completed != delivered || d.Response.Count != delivered {
			t.Errorf("%s: %d deliveries, %d latencies; want %d of each", fault, d.Completed, d.Response.Count, delivered)
		}
		t.Logf("recorded %s: faults %v, %d of %d deliveries", fault, cell.Faults, d.Completed, d.Scheduled)
		cells = append(cells, cell)
	}
	run := judged(t, chatscenario.Scenario{}, []scenario.Level{level}, cells)
	for fault, faults := range want {
		v := verdictOf(run, "wrapped-"+string(fault))
		t.Logf("judged %s: %s (%s)", fault, v.Verdict, v.Why)
		switch {
		case faults == nil && v.Verdict != "complete" && !strings.HasPrefix(v.Verdict, "inconclusive"):
			// inconclusive: a busy machine's other work shared the cell's CPUs; either way, no faults
			t.Errorf("%s: verdict %+v, want complete", fault, v)
		case faults != nil && (v.Verdict != "faults" || !strings.Contains(v.Why, results.FormatFaults(faults))):
			t.Errorf("%s: verdict %+v, want faults naming %s", fault, v, results.FormatFaults(faults))
		}
	}
}

// The lab's stream producer, wrapped to send a message twice, to drop one without counting
// it, or to keep its back-pressure when told BACKPRESSURE=off, is driven by the stream
// scenario's own load in real cells (under the memory cap) and judged by its own judge:
// faults, never bounded. The producer unwrapped has none.
func TestWrappedStreamServersEndAsFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("starts contenders")
	}
	l := testLab(t, nil)
	// A few clients at a fixed rate, so that without back-pressure memory grows slowly, and
	// with it the 5000-message queues still overflow behind the buffers within seconds.
	shorten := func(lv scenario.Level) scenario.Level {
		ld := lv.Load.(streamload.Load)
		ld.Clients, ld.Rate, ld.Duration = 4, 20000, 3*time.Second
		if ld.Slow > 0 {
			ld.Slow, ld.ReadDelay = 4, 50*time.Millisecond
		}
		lv.Load = ld
		return lv
	}
	s := streamscenario.Scenario{}
	levels := map[string]scenario.Level{}
	for _, name := range []string{streamscenario.SlowOn, streamscenario.SlowOff, streamscenario.ThroughputOff} {
		levels[name] = levelOf(t, s, name, shorten)
	}
	dir := cellDir(t)
	cases := []struct {
		fault faulty.Fault
		level string
		kind  string // the fault the clients must catch; "" none
	}{
		{faulty.None, streamscenario.SlowOn, ""},
		{faulty.None, streamscenario.SlowOff, ""},
		{faulty.DuplicateLast, streamscenario.SlowOn, results.FaultDuplicated},
		{faulty.DropOne, streamscenario.ThroughputOff, results.FaultLost},
		{faulty.IgnoreBackpressureOff, streamscenario.SlowOff, results.FaultDroppedUnasked},
	}
	var cells []results.Cell
	for _, tt := range cases {
		cell := l.runCell(context.Background(), cellPlan{m: wrapped(t, tt.fault), level: levels[tt.level], repeat: 1}, dir, 0)
		f, measured := streamload.FiguresOf(cell)
		switch {
		case cell.Outcome.Status != results.OutcomeOK || !measured:
			t.Fatalf("%s at %s: outcome %+v", tt.fault, tt.level, cell.Outcome)
		case tt.kind == "" && len(cell.Faults) > 0:
			t.Errorf("%s at %s: faults %v, want none (figures %+v, server %+v)", tt.fault, tt.level, cell.Faults, f, f.Server)
		case tt.kind != "" && cell.Faults[tt.kind] == 0:
			t.Errorf("%s at %s: faults %v, want %s (figures %+v, server %+v)", tt.fault, tt.level, cell.Faults, tt.kind, f, f.Server)
		}
		if tt.kind == results.FaultLost && cell.Faults[results.FaultLost] != 4 {
			t.Errorf("dropped one message per client without counting: %d lost, want 4", cell.Faults[results.FaultLost])
		}
		if cell.Memory == nil {
			t.Errorf("%s at %s: no memory cap recorded", tt.fault, tt.level)
		}
		t.Logf("recorded %s at %s: faults %v, gaps %d, server dropped %d", tt.fault, tt.level, cell.Faults, f.Gaps, f.Server.Dropped)
		cells = append(cells, cell)
	}
	run := judged(t, s, []scenario.Level{levels[streamscenario.SlowOn], levels[streamscenario.SlowOff], levels[streamscenario.ThroughputOff]}, cells)
	for _, tt := range cases {
		v := verdictOf(run, "wrapped-"+string(tt.fault))
		t.Logf("judged %s: %s", tt.fault, v.Verdict)
		if faulted := v.Verdict == "faults"; faulted != (tt.fault != faulty.None) {
			t.Errorf("%s: verdict %+v", tt.fault, v)
		}
	}
	for _, c := range run.Claims {
		counted, _, _ := strings.Cut(c.Why, "not counted: ")
		for _, tt := range cases {
			if tt.fault != faulty.None && strings.Contains(counted, "wrapped-"+string(tt.fault)+" (") {
				t.Errorf("claim %s counts the faulty %s: %s", c.ID, tt.fault, c.Why)
			}
		}
	}
}

func equalCounts(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
