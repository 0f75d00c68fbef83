package lab

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// recordingExporter keeps what it is given; fail, when set, is its answer.
type recordingExporter struct {
	name  string
	fail  error
	block chan struct{} // when set, an export waits for it or its context's end
	mu    sync.Mutex
	cells []CellExport
}

func (e *recordingExporter) Name() string { return e.name }

func (e *recordingExporter) ExportCell(ctx context.Context, c CellExport) error {
	if e.block != nil {
		select {
		case <-e.block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.cells = append(e.cells, c)
	return e.fail
}

// Each saved cell reaches every exporter once, with the windows its .hlog holds on absolute
// time and the server's samples; an exporter that fails is a note on the run, which
// completes with every cell kept.
func TestEveryCellIsExportedAndAFailureIsANote(t *testing.T) {
	short(t)
	m := pyServer(t, "plain", "")
	l := testLab(t, nil)
	verified(t, l, m)
	good := &recordingExporter{name: "good"}
	bad := &recordingExporter{name: "bad", fail: errors.New("the receiver answered 400 Bad Request: out of bounds")}
	l.Exporters = []Exporter{good, bad}
	run, dir, err := l.Run(context.Background(), runOptions(m, probeScenario{d: 2 * time.Second}, t.TempDir(), 2))
	if err != nil || run.Status != results.RunComplete || len(run.Cells) != 2 {
		t.Fatalf("run %v, %d cells, err %v", run.Status, len(run.Cells), err)
	}
	if len(good.cells) != 2 || len(bad.cells) != 2 {
		t.Fatalf("exported %d and %d cells; want each of 2 once", len(good.cells), len(bad.cells))
	}
	for i, cell := range run.Cells {
		x := good.cells[i]
		if x.Run != run.ID || x.Scenario != "probe" || x.Contender != cell.Contender || x.Level != cell.Level || x.Repeat != cell.Repeat {
			t.Fatalf("cell %d exported as %s/%s %s %s r%d", i, x.Run, x.Scenario, x.Contender, x.Level, x.Repeat)
		}
		var n int64
		for k, w := range x.Windows {
			n += w.Hist.TotalCount()
			if w.Tag != "ready" || !w.End.After(w.Start) || w.Start.Before(x.Start.Add(-time.Second)) || (k > 0 && w.Start.Before(x.Windows[k-1].Start)) {
				t.Fatalf("window %d: %s from %s to %s, load from %s", k, w.Tag, w.Start, w.End, x.Start)
			}
		}
		if tag := cell.Tags[0]; n != tag.Response.Count || len(x.Windows) != len(tag.Timeline) {
			t.Fatalf("cell %d: %d windows of %d values; results hold %d windows of %d", i, len(x.Windows), n, len(tag.Timeline), tag.Response.Count)
		}
		if len(x.Server) == 0 || len(x.Server) != len(cell.Server.Timeline) {
			t.Fatalf("cell %d: %d server samples; results hold %d", i, len(x.Server), len(cell.Server.Timeline))
		}
	}
	saved, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(saved.Env.Notes, "\n")
	if !strings.Contains(notes, "export to bad: 2 of 2 cell(s) not sent (first: the receiver answered 400 Bad Request: out of bounds)") || strings.Contains(notes, "export to good") {
		t.Fatalf("notes %q; want the bad exporter's failure, and nothing of the good one", notes)
	}
}

// A receiver that hangs holds the run's end for exportWait at most: the cell is noted as
// not sent, the run completes.
func TestAHangingExportDelaysTheEndBoundedly(t *testing.T) {
	short(t)
	m := pyServer(t, "plain", "")
	l := testLab(t, nil)
	verified(t, l, m)
	defer func(w time.Duration) { exportWait = w }(exportWait)
	exportWait = time.Second
	hang := &recordingExporter{name: "hang", block: make(chan struct{})}
	l.Exporters = []Exporter{hang}
	began := time.Now()
	run, _, err := l.Run(context.Background(), runOptions(m, probeScenario{d: time.Second}, t.TempDir(), 1))
	if err != nil || run.Status != results.RunComplete {
		t.Fatalf("run %v, err %v", run.Status, err)
	}
	notes := strings.Join(run.Env.Notes, "\n")
	if !strings.Contains(notes, "export to hang: 1 of 1 cell(s) not sent") || !strings.Contains(notes, "still sending after 1s") {
		t.Fatalf("notes %q; want the hung export said", notes)
	}
	t.Logf("the run took %s with a hung exporter", time.Since(began).Round(time.Millisecond))
}
