package report

import (
	"html"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// matrixCells are the matrix section's cells by contender, in column order.
func matrixCells(t *testing.T, page string) map[string][]string {
	t.Helper()
	rows := map[string][]string{}
	for _, tr := range regexp.MustCompile(`(?s)<tr><th scope="row">([^<]*)(?:<div class="hint model">[^<]*</div>)?</th>(.*?)</tr>`).FindAllStringSubmatch(sectionByID(t, page, "matrix"), -1) {
		for _, td := range regexp.MustCompile(`(?s)<td class="mcell[^"]*">(.*?)</td>`).FindAllStringSubmatch(tr[2], -1) {
			rows[tr[1]] = append(rows[tr[1]], html.UnescapeString(td[1]))
		}
	}
	return rows
}

// After a newer run of one contender, the other keeps its cell from the older run that
// measured it, dated and linked; a cell of a build older than the contender's current one
// is marked stale; a run of another preset is a column of its own.
func TestMatrixTakesEachContendersLatestRun(t *testing.T) {
	older := fixtureRun() // fast and slow, 2025-11-20
	newer := fixtureRun()
	newer.ID, newer.Started = "20251122-090000-isolation", older.Started.Add(43*time.Hour)
	newer.Contenders, newer.Cells, newer.Summary, newer.Verdicts = keepOnly(newer, fast)
	other := fixtureRun()
	other.ID, other.Scenario.Preset = "20251121-090000-isolation", "default"
	o := MatrixOptions{
		Reports: map[string]string{older.ID: older.ID + "/report.html"},
		Builds:  map[string]string{slow: "a-new-build", fast: newer.Contenders[0].BuildHash},
	}
	var buf strings.Builder
	if err := RenderMatrix([]*results.Run{older, newer, other}, o, []byte("/* lib */"), &buf); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	head := regexp.MustCompile(`(?s)<thead>.*?</thead>`).FindString(sectionByID(t, page, "matrix"))
	if strings.Count(head, `<th scope="col">`) != 2 || !strings.Contains(head, "default") || !strings.Contains(head, "study") {
		t.Fatalf("want one column per preset, default and study: %s", head)
	}
	cells := matrixCells(t, page)
	study := func(c string) string { return cells[c][1] } // columns by preset: default, study
	if c := study(fast); !strings.Contains(c, "2025-11-22") || strings.Contains(c, "<a ") || strings.Contains(c, "stale") {
		t.Errorf("%s's cell is not from the newer run, unlinked (it has no report) and current:\n%s", fast, c)
	}
	if c := study(slow); !strings.Contains(c, `<a href="`+older.ID+`/report.html">2025-11-20</a>`) || !strings.Contains(c, ">stale<") || strings.Contains(c, "not run") {
		t.Errorf("%s's cell is not the older run's, linked, dated and stale:\n%s", slow, c)
	}
	if !strings.Contains(sectionByID(t, page, "matrix"), "from 2 run(s)") {
		t.Error("the study column does not say its cells come from two runs")
	}
	if !strings.Contains(page, `class="alert"`) || !strings.Contains(page, "older build") {
		t.Error("the page does not explain the stale marks")
	}
	if m := sectionByID(t, page, "matrix"); !strings.Contains(m, `<th scope="row">`+slow+`<div class="hint model">thread per request</div></th>`) {
		t.Errorf("%s's row does not say its model", slow)
	}
	runs := sectionByID(t, page, "runs")
	if a, b := strings.Index(runs, newer.ID), strings.Index(runs, older.ID); a < 0 || b < 0 || a > b {
		t.Errorf("the runs table does not list the runs cells come from, newest first")
	}
}

// keepOnly is the run's records of one contender.
func keepOnly(run *results.Run, name string) ([]results.Contender, []results.Cell, []results.CellSummary, []results.Verdict) {
	m := results.Merge(map[string]*results.Run{name: run}, []string{name})
	return m.Contenders, m.Cells, m.Summary, m.Verdicts
}

// A contender that answered a tenth of its requests wrongly is shown failing wherever its
// figures are: its error rate beside them, out of the bars, never ranked; the others show
// their error rate, 0 %.
func TestFailingCellIsShownFailing(t *testing.T) {
	run := fixtureDownstream()
	for i := range run.Summary {
		if s := &run.Summary[i]; s.Contender == "vertx" && s.Level == "self" {
			s.Tags[0].Sent, s.Tags[0].Errors, s.Tags[0].ErrKinds, s.Tags[0].ErrorPct = 30000, 3000, map[string]int64{"status": 3000}, 10
		} else {
			s.Tags[0].Sent = 30000
		}
	}
	page := render(t, run, []byte("/* chart library */"))
	tp := sectionByID(t, page, "throughput")
	if !strings.Contains(tp, "not ranked: failing (errors) (data: 10.0 % of requests failed)") || !strings.Contains(tp, "10.0 %") || !strings.Contains(tp, "<th>errors</th>") {
		t.Errorf("the throughput table does not show vertx failing at self:\n%s", tp)
	}
	if v := chartDataOf(t, page).Bars[2].Series[0].Values[0]; v != nil {
		t.Errorf("vertx's failing requests/s is drawn as a bar: %v", v)
	}
	level := sectionByID(t, page, "level-0")
	if !strings.Contains(level, "Error rate") || !strings.Contains(level, ">failing (errors)</span>") || !strings.Contains(level, "0 %") {
		t.Errorf("level self's figures lack the error rate or the failing mark")
	}

	m := sectionByID(t, renderMatrix(t, []*results.Run{run}, []byte("/* lib */")), "matrix")
	cells := matrixCells(t, m)
	if c := strings.Join(cells["vertx"], ""); !strings.Contains(c, "· 10.0 % errors") || !strings.Contains(c, ">failing (errors)</span>") {
		t.Errorf("vertx's matrix cell is not shown failing:\n%s", c)
	}
	if c := strings.Join(cells["spring-webflux"], ""); !strings.Contains(c, "· 0 % errors") || strings.Contains(c, "failing (errors)") {
		t.Errorf("spring-webflux's matrix cell:\n%s", c)
	}
}
