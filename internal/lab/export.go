package lab

import (
	"context"
	"fmt"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/results"
)

// Exporter sends a measured cell's figures to a system of the user's (a Prometheus, an
// OpenTelemetry receiver): internal/export's. The lab calls it once per cell, after the
// cell is saved, from a goroutine of its own; an error is a note on the run, never a lost
// result nor a failed run. An exporter may also have Notes() []string: what it did otherwise
// than asked (a receiver that took classic buckets only), added to the run's notes at its end.
type Exporter interface {
	// Name says what it sends to, for notes: "prometheus-rw http://127.0.0.1:9090/api/v1/write".
	Name() string
	ExportCell(ctx context.Context, c CellExport) error
}

// CellExport is one cell as exporters send it: who and what it measured, each tag's windows
// as the cell's .hlog holds them (the agents' shares merged exactly), and the server's probe
// samples, all on absolute time.
type CellExport struct {
	Run, Scenario, Level, Contender string
	Repeat                          int
	// Start is when the load began: the probe samples' T counts from it.
	Start time.Time
	// Windows are each tag's one-second windows, in tag order and, within a tag, time order.
	Windows []ExportWindow
	// Server are the contender's process tree's samples (CPU, RSS, threads), T from Start.
	Server []results.Sample
}

// ExportWindow is one tag's window: its latencies (ns, from intended send times, correct
// answers and timeouts, as the .hlog's), the attempts that ended in it without a correct
// answer, and of those the timeouts (in Hist too).
type ExportWindow struct {
	Tag              string
	Start, End       time.Time
	Hist             *hdrhistogram.Histogram
	Errors, Timeouts int64
}

// exportWait bounds how long the run's end waits for exports still under way: a receiver
// that hangs delays the results by this much at most.
var exportWait = 30 * time.Second

// exports carries a run's cells to the lab's exporters, one cell after another in a
// goroutine of its own, so that a slow receiver never holds a cell up; what fails is kept
// for the run's notes.
type exports struct {
	exporters []Exporter
	staged    *CellExport // the last drive's windows, until its cell is saved
	queue     chan CellExport
	stop      context.CancelFunc
	done      chan struct{}

	mu       sync.Mutex
	failed   map[string]int    // cells an exporter failed, by its name
	first    map[string]string // its first error
	sent     map[string]int
	reported map[string]bool // its first error printed already
}

// stageExport keeps a drive's merged windows for the exporters until its cell is saved;
// without exporters it keeps nothing.
func (l *Lab) stageExport(c cellPlan, m *measurement, merged *agent.Merged) {
	if len(l.Exporters) == 0 {
		return
	}
	if l.exports == nil {
		l.exports = newExports(l.Exporters)
	}
	l.exports.staged = &CellExport{Contender: c.m.Name, Level: c.level.Name, Repeat: c.repeat, Start: m.start,
		Windows: exportWindows(merged)}
}

// exportWindows are the merged windows of every tag, each with its errors: a tag's intervals
// and its timeline are made together, one window each, in the same order.
func exportWindows(merged *agent.Merged) []ExportWindow {
	errs := map[string][]results.Window{}
	for _, t := range merged.Tags {
		errs[t.Tag] = t.Timeline
	}
	seen := map[string]int{}
	var out []ExportWindow
	for _, iv := range merged.Intervals {
		w := ExportWindow{Tag: iv.Tag, Start: time.UnixMilli(iv.Hist.StartTimeMs()), End: time.UnixMilli(iv.Hist.EndTimeMs()), Hist: iv.Hist}
		if k := seen[iv.Tag]; k < len(errs[iv.Tag]) {
			w.Errors, w.Timeouts = errs[iv.Tag][k].Errors, errs[iv.Tag][k].Timeouts
		}
		seen[iv.Tag]++
		out = append(out, w)
	}
	return out
}

// exportCell hands the saved cell to the exporters, when its drive staged windows for it
// (a cell that never reached its load has none), and prints the first failure of each.
func (l *Lab) exportCell(run *results.Run, cell results.Cell) {
	x := l.exports
	if x == nil {
		return
	}
	for _, note := range x.newFailures() {
		l.Progress.Note(note)
	}
	s := x.staged
	x.staged = nil
	if s == nil || s.Contender != cell.Contender || s.Level != cell.Level || s.Repeat != cell.Repeat {
		return
	}
	s.Run, s.Scenario, s.Server = run.ID, run.Scenario.Name, cell.Server.Timeline
	x.start()
	x.queue <- *s
}

func newExports(exporters []Exporter) *exports {
	return &exports{exporters: exporters, failed: map[string]int{}, first: map[string]string{},
		sent: map[string]int{}, reported: map[string]bool{}}
}

// start begins the goroutine that sends, once.
func (x *exports) start() {
	if x.queue != nil {
		return
	}
	ctx, stop := context.WithCancel(context.Background()) // the user's Ctrl-C ends the run, not the sending of what it measured
	x.queue, x.stop, x.done = make(chan CellExport, 1024), stop, make(chan struct{})
	go func() {
		defer close(x.done)
		for c := range x.queue {
			for _, e := range x.exporters {
				x.record(e.Name(), e.ExportCell(ctx, c))
			}
		}
	}()
}

func (x *exports) record(name string, err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if err == nil {
		x.sent[name]++
		return
	}
	if x.failed[name] == 0 {
		x.first[name] = err.Error()
	}
	x.failed[name]++
}

// newFailures are the notes for exporters whose first failure was not printed yet.
func (x *exports) newFailures() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var notes []string
	for _, e := range x.exporters {
		if n := e.Name(); x.failed[n] > 0 && !x.reported[n] {
			x.reported[n] = true
			notes = append(notes, fmt.Sprintf("export to %s failed: %s; the run goes on, its results are kept", n, x.first[n]))
		}
	}
	return notes
}

// endExports waits, at most exportWait or until a second Ctrl-C, for the cells still being
// sent, then writes into the run's notes what each exporter failed to send, and prints what
// each sent.
func (l *Lab) endExports(run *results.Run) {
	x := l.exports
	l.exports = nil
	if x == nil || x.queue == nil {
		return
	}
	close(x.queue)
	timer := time.NewTimer(exportWait)
	defer timer.Stop()
	late := ""
	select {
	case <-x.done:
	case <-timer.C:
		late = fmt.Sprintf("still sending after %s", exportWait)
	case <-l.Hurry:
		late = "stopped by the user"
	}
	x.stop()
	<-x.done // the exporters' requests end with their context
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, e := range x.exporters {
		n := e.Name()
		if x.failed[n] > 0 {
			note := fmt.Sprintf("export to %s: %d of %d cell(s) not sent (first: %s)", n, x.failed[n], x.failed[n]+x.sent[n], x.first[n])
			if late != "" {
				note += "; " + late
			}
			run.Env.Notes = append(run.Env.Notes, note)
			l.Progress.Note(note)
		} else {
			l.Progress.Note(fmt.Sprintf("export to %s: %d cell(s) sent", n, x.sent[n]))
		}
		if noter, ok := e.(interface{ Notes() []string }); ok { // what an exporter did differently (classic buckets)
			run.Env.Notes = append(run.Env.Notes, noter.Notes()...)
		}
	}
}
