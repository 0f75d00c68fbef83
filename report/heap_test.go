package report

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// heapRun is the fixture run with a heap for each contender's first repeat: the slow one's
// with two collections, the fast one's without any during its load.
func heapRun() *results.Run {
	run := fixtureRun()
	for i := range run.Cells {
		c := &run.Cells[i]
		switch {
		case c.Repeat != 1:
		case c.Contender == slow:
			c.Heap = &results.Heap{Log: "logs/x.gc.log", Collections: 2, MaxAfterMB: 60, EndAfterMB: 55,
				Timeline: []results.HeapPoint{{T: 3.2, BeforeMB: 180, AfterMB: 60}, {T: 9.7, BeforeMB: 190, AfterMB: 55}}}
		case c.Contender == fast:
			c.Heap = &results.Heap{Log: "logs/y.gc.log", Unread: "no collection during the load (1 in the log outside it): no heap after a collection to read"}
		}
	}
	return run
}

// A JVM cell's heap after each collection is drawn dashed beside its RSS, with the legend
// that says why; a JVM cell whose load had no collection says so under the chart instead.
func TestRenderDrawsTheHeapBesideRSS(t *testing.T) {
	page := render(t, heapRun(), []byte("/* chart library */"))
	level := section(t, page, "level-0")
	for _, want := range []string{"a JVM's heap after GC (live data)", "then stays flat, whatever its live data does", fast + ": no collection during the load"} {
		if !strings.Contains(level, want) {
			t.Errorf("the level lacks %q", want)
		}
	}
	blob := regexp.MustCompile(`(?s)<script type="application/json" id="arena-data">(.*?)</script>`).FindStringSubmatch(page)
	if blob == nil {
		t.Fatal("no chart data")
	}
	var data chartData
	if err := json.Unmarshal([]byte(blob[1]), &data); err != nil {
		t.Fatal(err)
	}
	heap := data.Levels[0].Lines["heap"]
	if len(heap) != 1 || heap[0].Name != slow+" heap after GC" || heap[0].Dash != "dashed" || len(heap[0].Points) != 2 ||
		heap[0].Points[1][0] != 9.7 || heap[0].Points[1][1] != 55.0 {
		t.Fatalf("heap lines %+v; want the slow contender's two collections, dashed", heap)
	}

	// Without any heap the chart and its legend are as before.
	plain := section(t, render(t, fixtureRun(), []byte("/* chart library */")), "level-0")
	if strings.Contains(plain, "heap after GC") {
		t.Error("a run without heaps speaks of one")
	}
}

// The browser draws the heap line on the memory chart, named in its legend.
func TestChromiumDrawsTheHeap(t *testing.T) {
	page := browserCheck(t, "report", func(lib, out string) error { return WriteFile(heapRun(), lib, out) })
	drawn := false
	for _, c := range page.charts {
		if c.kind == "rss" {
			drawn = c.drawing && strings.Contains(c.text.String(), slow+" heap after GC")
		}
	}
	if !drawn {
		t.Error("the memory chart does not draw the heap after GC")
	}
}
