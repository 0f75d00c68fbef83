package lab

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	chatload "github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/faulty"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	streamload "github.com/arena-lab/arena/internal/stream"
	chatscenario "github.com/arena-lab/arena/scenarios/chat"
	downstreamscenario "github.com/arena-lab/arena/scenarios/downstream"
	"github.com/arena-lab/arena/scenarios/isolation"
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

// The contract's plain HTTP paths, wrapped to answer /instant and the probes with a fast
// 503 while /delayed waits, or /data/1 with an empty 200, are driven through real cells by
// the isolation and downstream scenarios' own loads on the real engine, summarised and judged
// as the lab finishes a run: their wrong answers are counted by kind (status, body), and
// they are failing (errors), never isolated nor ranked by their requests/s. The same
// servers unwrapped are isolated, and ranked. (The fixture's /data/{id} answers the study's
// record itself, so the self level needs no /resources/dataN.json of it.)
func TestWrappedHTTPServersAreNeverIsolatedOrRanked(t *testing.T) {
	if testing.Short() {
		t.Skip("starts contenders")
	}
	l := testLab(t, nil)
	dir := cellDir(t)
	// disturbed: the machine's other work or a busy client left no verdict on the server;
	// what the control must then read instead of its good word.
	disturbed := func(v results.Verdict) bool { return strings.HasPrefix(v.Verdict, "inconclusive") }

	// Isolation: the seed level for 4 s, each request allowed 2 s (so /delayed, 10 s, times
	// out: no failure), after its warm-ups.
	iso := isolation.Scenario{}
	isoLevel := levelOf(t, iso, "seed", func(lv scenario.Level) scenario.Level {
		ld := lv.Load.(load.OpenLoop)
		ld.Duration, ld.Timeout, ld.Drain = 4*time.Second, 2*time.Second, 2*time.Second
		lv.Load = ld
		return lv
	})
	fast := []string{isolation.TagInstant, isolation.TagLiveness, isolation.TagReadiness}
	var isoCells []results.Cell
	for _, fault := range []faulty.Fault{faulty.None, faulty.Unavailable503} {
		cell := l.runCell(context.Background(), cellPlan{m: wrapped(t, fault), level: isoLevel, repeat: 1}, dir, 0)
		if cell.Outcome.Status != results.OutcomeOK {
			t.Fatalf("%s: outcome %+v", fault, cell.Outcome)
		}
		for _, tg := range cell.Tags {
			t.Logf("recorded %s at %s: %s sent %d, correct %d, errors %v, status %v", fault, isoLevel.Name, tg.Tag, tg.Sent, tg.Completed, tg.Errors, tg.Status)
			if tg.Errors[load.ErrBody] > 0 {
				t.Errorf("%s: %s has %d body errors, want none", fault, tg.Tag, tg.Errors[load.ErrBody])
			}
			if !slices.Contains(fast, tg.Tag) {
				continue
			}
			switch {
			case tg.Sent == 0:
				t.Errorf("%s: %s sent nothing", fault, tg.Tag)
			case fault == faulty.None && (len(tg.Errors) > 0 || tg.Completed != tg.Sent):
				t.Errorf("%s: %s answered %d of %d correctly, errors %v; want every one", fault, tg.Tag, tg.Completed, tg.Sent, tg.Errors)
			case fault == faulty.Unavailable503 && tg.Errors[load.ErrStatus] == 0:
				t.Errorf("%s: %s counted no status errors (errors %v)", fault, tg.Tag, tg.Errors)
			case fault == faulty.Unavailable503 && tg.Tag == isolation.TagInstant && tg.Errors[load.ErrStatus]*2 < tg.Sent:
				// every /instant after the first /delayed is shed: nearly all of them
				t.Errorf("%s: /instant shed only %d of %d", fault, tg.Errors[load.ErrStatus], tg.Sent)
			}
		}
		t.Logf("%s: client-bound %v (%s), shared CPU %v (%s)", fault, cell.ClientBound, cell.ClientBoundWhy, cell.SharedCPU, cell.SharedCPUWhy)
		isoCells = append(isoCells, cell)
	}
	// As recorded, then as on a quiet machine: on this shared one the control's cell is often
	// client-bound or shared (no verdict on the server), which would leave its good word and
	// the fault's place beside it untested.
	for _, as := range []string{"as recorded", "on a quiet machine"} {
		cells := isoCells
		if as != "as recorded" {
			cells = quiet(isoCells)
		}
		run := judgedAt(t, iso, "seed", []scenario.Level{isoLevel}, cells)
		none, shed := verdictOf(run, "wrapped-"+string(faulty.None)), verdictOf(run, "wrapped-"+string(faulty.Unavailable503))
		t.Logf("judged %s, %s: %s (%s)", as, faulty.None, none.Verdict, none.Why)
		t.Logf("judged %s, %s: %s (%s)", as, faulty.Unavailable503, shed.Verdict, shed.Why)
		switch {
		case none.Verdict == isolation.Isolated.Text:
		case as == "as recorded" && disturbed(none):
		case as != "as recorded" && none.Verdict == isolation.Starved.Text && (isoCells[0].ClientBound || isoCells[0].SharedCPU):
			// its latency counts the busy client's late sends (intended times): slow, not failing
		default:
			t.Errorf("%s, the unwrapped server: %+v, want isolated", as, none)
		}
		if shed.Verdict != scenario.Failing.Text || shed.Tone != results.Bad || !strings.Contains(shed.Why, load.ErrStatus) {
			t.Errorf("%s, the 503 server: %+v, want %s naming its wrong statuses", as, shed, scenario.Failing.Text)
		}
		for _, c := range run.Claims {
			if strings.Contains(c.Why, shed.Contender+" isolated") {
				t.Errorf("%s, claim %s counts the 503 server isolated: %s", as, c.ID, c.Why)
			}
		}
	}

	// Downstream: the self level (the study's form), 2,000 requests of warm-up and 3,000
	// measured over its 100 connections.
	ds := downstreamscenario.Scenario{}
	shorten := func(ld load.ClosedLoop, n int64) load.ClosedLoop {
		ld.Requests, ld.Timeout, ld.Duration, ld.Expect = n, 2*time.Second, 20*time.Second, 2*time.Second
		return ld
	}
	dsLevel := levelOf(t, ds, downstreamscenario.LevelSelf, func(lv scenario.Level) scenario.Level {
		lv.Load = shorten(lv.Load.(load.ClosedLoop), 3000)
		lv.Warmup = []load.Load{shorten(lv.Warmup[0].(load.ClosedLoop), 2000)}
		return lv
	})
	if dsLevel.Downstream != nil {
		t.Fatalf("level %s has the lab's downstream: the study's form is its own", dsLevel.Name)
	}
	var dsCells []results.Cell
	for _, fault := range []faulty.Fault{faulty.None, faulty.EmptyData} {
		cell := l.runCell(context.Background(), cellPlan{m: wrapped(t, fault), level: dsLevel, repeat: 1}, dir, 0)
		if cell.Outcome.Status != results.OutcomeOK || len(cell.Tags) != 1 {
			t.Fatalf("%s: outcome %+v, %d tags", fault, cell.Outcome, len(cell.Tags))
		}
		tg := cell.Tags[0]
		t.Logf("recorded %s at %s: %s sent %d, correct %d (%.0f/s), errors %v, status %v", fault, dsLevel.Name, tg.Tag, tg.Sent, tg.Completed, tg.RPS, tg.Errors, tg.Status)
		switch {
		case tg.Sent != 3000:
			t.Errorf("%s: sent %d, want 3000", fault, tg.Sent)
		case fault == faulty.None && (len(tg.Errors) > 0 || tg.Completed != tg.Sent || tg.RPS <= 0):
			t.Errorf("%s: %d of %d correct (%.0f/s), errors %v; want every one", fault, tg.Completed, tg.Sent, tg.RPS, tg.Errors)
		case fault == faulty.EmptyData && (tg.Completed != 0 || tg.RPS != 0 || tg.Errors[load.ErrBody] != tg.Sent || tg.Status["2xx"] != tg.Sent):
			// every answer a fast 200, and not one of them correct: no requests/s to rank
			t.Errorf("%s: %d correct (%.0f/s), errors %v, status %v; want all %d 200s body errors", fault, tg.Completed, tg.RPS, tg.Errors, tg.Status, tg.Sent)
		}
		t.Logf("%s: client-bound %v (%s), shared CPU %v (%s)", fault, cell.ClientBound, cell.ClientBoundWhy, cell.SharedCPU, cell.SharedCPUWhy)
		dsCells = append(dsCells, cell)
	}
	for _, as := range []string{"as recorded", "on a quiet machine"} {
		cells := dsCells
		if as != "as recorded" {
			cells = quiet(dsCells)
		}
		run := judgedAt(t, ds, "seed", []scenario.Level{dsLevel}, cells)
		none, empty := verdictOf(run, "wrapped-"+string(faulty.None)), verdictOf(run, "wrapped-"+string(faulty.EmptyData))
		t.Logf("judged %s, %s: %s (%s)", as, faulty.None, none.Verdict, none.Why)
		t.Logf("judged %s, %s: %s (%s)", as, faulty.EmptyData, empty.Verdict, empty.Why)
		if none.Verdict != "fastest" && !(as == "as recorded" && disturbed(none)) {
			t.Errorf("%s, the unwrapped server: %+v, want fastest", as, none)
		}
		if empty.Verdict != scenario.Failing.Text || empty.Tone != results.Bad || !strings.Contains(empty.Why, load.ErrBody) || !strings.Contains(empty.Why, "not ranked") {
			t.Errorf("%s, the empty-data server: %+v, want %s on its bodies, not ranked", as, empty, scenario.Failing.Text)
		}
		// placed nowhere: no verdict beside it measures against it, no claim counts it
		for _, v := range run.Verdicts {
			if v.Contender != empty.Contender && strings.Contains(v.Why, empty.Contender) {
				t.Errorf("%s, %s's verdict places the empty-data server: %+v", as, v.Contender, v)
			}
		}
		for _, c := range run.Claims {
			if strings.Contains(c.Why, empty.Contender) {
				t.Errorf("%s, claim %s names the empty-data server: %s", as, c.ID, c.Why)
			}
		}
	}
}

// quiet is cells as a machine with no other work would have recorded them: neither
// client-bound nor sharing the server's CPUs, their figures as measured.
func quiet(cells []results.Cell) []results.Cell {
	out := slices.Clone(cells)
	for i := range out {
		out[i].ClientBound, out[i].ClientBoundWhy = false, ""
		out[i].SharedCPU, out[i].SharedCPUWhy = false, ""
	}
	return out
}

// judgedAt is judged, for a run of preset: the scenarios judge their study's claims at the
// study's preset only.
func judgedAt(t *testing.T, s scenario.Scenario, preset string, levels []scenario.Level, cells []results.Cell) *results.Run {
	t.Helper()
	run := judged(t, s, levels, cells)
	run.Scenario.Preset = preset
	run.Verdicts, run.Claims = s.Judge(run)
	return run
}
