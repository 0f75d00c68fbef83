package report

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// A JVM cell's heap after each collection is drawn dashed beside its RSS, with the legend
// that says why; a JVM cell whose load had no collection says so under the chart instead.
func TestRenderDrawsTheHeapBesideRSS(t *testing.T) {
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
	page := render(t, run, []byte("/* chart library */"))
	level := section(t, page, "level-0")
	for _, want := range []string{"a JVM's heap after GC (live data)", "its RSS stays flat", fast + ": no collection during the load"} {
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
