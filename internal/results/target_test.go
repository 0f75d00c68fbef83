package results

import (
	"bytes"
	"encoding/csv"
	"testing"
)

// A cell without server resources (a target given without its pid) adds no zeros to the
// server's figures: the summary takes them from the repeats that have them and says why
// they are missing, the CSV leaves them empty; a repeat's unverified mark carries over.
func TestUnprobedServerHasNoFigures(t *testing.T) {
	probed := Cell{Contender: "t", Level: "l", Repeat: 1, Outcome: Outcome{Status: OutcomeOK},
		Server: Resources{Summary: Usage{CPUPctMean: 50, RSSMBMax: 100, ThreadsMax: 10}}}
	unprobed := Cell{Contender: "t", Level: "l", Repeat: 2, Outcome: Outcome{Status: OutcomeOK}, Unverified: true,
		Server: Resources{Unprobed: NoServerProcess}}
	sum, err := Summarise([]Cell{probed, unprobed})
	if err != nil {
		t.Fatal(err)
	}
	s := sum[0]
	if s.CPUPct.Median != 50 || s.RSSMB.Median != 100 || s.Threads.Median != 10 || s.ServerUnprobed != NoServerProcess || !s.Unverified {
		t.Errorf("summary %+v; want the probed repeat's figures alone, why the other has none, unverified", s)
	}
	sum, err = Summarise([]Cell{unprobed})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := FigureOf(sum[0], "cpu_pct", ""); ok || sum[0].RSSMB.Median != 0 {
		t.Errorf("no server resources read as a figure: %+v", sum[0])
	}
	var buf bytes.Buffer
	unprobed.Tags = []Tag{{TagStats: TagStats{Tag: "instant", Sent: 1}}}
	if err := WriteCSV(&Run{Scenario: ScenarioInfo{Name: "s"}, Cells: []Cell{unprobed}}, &buf); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("csv: %v, %d rows", err, len(rows))
	}
	for i, col := range rows[0] {
		if col == "server_cpu_pct_mean" || col == "server_rss_mb_max" || col == "server_threads_max" {
			if rows[1][i] != "" {
				t.Errorf("csv %s = %q; want empty, never a zero", col, rows[1][i])
			}
		}
	}
}

// A target's description is part of what a run measured: another name, address or what it
// was started with is a difference; none on both sides is none.
func TestTargetDifferences(t *testing.T) {
	a := &Target{Name: "mine", Addr: "127.0.0.1:8080", Env: map[string]string{"WORKER_THREADS": "11"}, Knobs: []string{"WORKER_THREADS"}}
	b := *a
	b.Env = map[string]string{"WORKER_THREADS": "200"}
	if d := (RunSpec{Target: a}).Differences(RunSpec{Target: &b}); len(d) != 1 {
		t.Errorf("differences %q; want the target's", d)
	}
	if d := (RunSpec{Target: a}).Differences(RunSpec{Target: a}); len(d) != 0 {
		t.Errorf("differences %q; want none", d)
	}
	if d := (RunSpec{}).Differences(RunSpec{}); len(d) != 0 {
		t.Errorf("differences %q between no targets", d)
	}
}
