package gate

import (
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// values are response times, each recorded so many times.
type values map[time.Duration]int64

// tag is a repeat's tag whose response (and service) times are vals, with errs attempts
// that got no correct answer by kind, at rps.
func tag(t *testing.T, name string, vals values, errs map[string]int64, rps float64) results.Tag {
	t.Helper()
	h := results.NewHistogram()
	for v, n := range vals {
		if err := h.RecordValues(int64(v), n); err != nil {
			t.Fatal(err)
		}
	}
	enc, err := results.EncodeHist(h)
	if err != nil {
		t.Fatal(err)
	}
	var failed int64
	for _, n := range errs {
		failed += n
	}
	if errs == nil {
		errs = map[string]int64{}
	}
	return results.Tag{
		TagStats: results.TagStats{Tag: name, Sent: h.TotalCount() + failed - errs[results.ErrKindTimeout], Completed: h.TotalCount() - errs[results.ErrKindTimeout],
			Status: map[string]int64{"2xx": h.TotalCount()}, Errors: errs},
		RPS: rps, Response: results.LatencyOf(h), Service: results.LatencyOf(h), ResponseHist: enc, ServiceHist: enc,
	}
}

// cell is one repeat of contender at level, ended status.
func cell(contender, level string, repeat int, status string, tags ...results.Tag) results.Cell {
	return results.Cell{Contender: contender, Level: level, Repeat: repeat, Seconds: 20, Outcome: results.Outcome{Status: status}, Tags: tags}
}

// fixtureRun is a run of cells, summarised as the lab summarises them, with the plan's
// levels measuring streams and the verdicts and claims given.
func fixtureRun(t *testing.T, cells []results.Cell, levels map[string][]string, verdicts []results.Verdict, claims ...results.Claim) *results.Run {
	t.Helper()
	sum, err := results.Summarise(cells)
	if err != nil {
		t.Fatal(err)
	}
	run := &results.Run{Schema: results.SchemaVersion, ID: "20261123-100000-isolation", Status: results.RunComplete,
		Started:  time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC),
		Scenario: results.ScenarioInfo{Name: "isolation", Preset: "seed", Quick: true, Repeat: 2},
		Env:      results.Environment{Host: "lab"},
		Cells:    cells, Summary: sum, Verdicts: verdicts, Claims: claims}
	for _, name := range []string{"seed", "sleep-c200", "data-c200"} {
		if streams, ok := levels[name]; ok {
			l := results.Level{Name: name}
			for _, s := range streams {
				l.Streams = append(l.Streams, results.StreamPlan{Tag: s})
			}
			run.Scenario.Levels = append(run.Scenario.Levels, l)
		}
	}
	return run
}

// isolationRun is study 004 in small: spring-mvc starved (its fast paths waiting to the 20 s
// timeout in one repeat, slow in the other), spring-webflux isolated; the study's claims in
// each of their verdicts.
func isolationRun(t *testing.T) *results.Run {
	t.Helper()
	starved := func(r int, p99 time.Duration) results.Cell {
		return cell("spring-mvc", "seed", r, results.OutcomeOK,
			tag(t, "instant", values{5 * time.Millisecond: 10, 3 * time.Second: 80, p99: 10}, map[string]int64{results.ErrKindTimeout: 10}, 9.5),
			tag(t, "delayed", values{10 * time.Second: 100}, nil, 10))
	}
	isolated := func(r int) results.Cell {
		return cell("spring-webflux", "seed", r, results.OutcomeOK,
			tag(t, "instant", values{2 * time.Millisecond: 95, 8 * time.Millisecond: 5}, nil, 10),
			tag(t, "delayed", values{10 * time.Second: 100}, nil, 10))
	}
	return fixtureRun(t, []results.Cell{starved(1, 20*time.Second), isolated(1), starved(2, 4*time.Second), isolated(2)},
		map[string][]string{"seed": {"instant", "delayed"}},
		[]results.Verdict{
			{Contender: "spring-mvc", Level: "seed", Verdict: "starved", Tone: results.Bad, Why: "instant p99 20.02 s"},
			{Contender: "spring-webflux", Level: "seed", Verdict: "isolated", Tone: results.Good, Why: "instant p99 8 ms"},
		},
		results.Claim{ID: "a", Text: "The synchronous servlet degrades.", Verdict: results.ClaimHolds, Why: "starved"},
		results.Claim{ID: "b", Text: "WebFlux stays isolated.", Verdict: results.ClaimHoldsWhereTested, Why: "spring-webflux isolated; untested: the rest"},
		results.Claim{ID: "c", Text: "/delayed compounds past 50 s.", Verdict: results.ClaimUntestedHere, Why: "needs ≥ 50 seconds of load, this run gave 20"},
		results.Claim{ID: "d", Text: "/delayed stays at 10 s.", Verdict: results.ClaimFails, Why: "spring-webflux /delayed p99 12 s"},
		results.Claim{ID: "e", Text: "Every probe stays fast.", Verdict: results.ClaimPartly, Why: "liveness fast, readiness slow"},
	)
}

// byName indexes checks by kind and name.
func byName(checks []Check) map[string]Check {
	m := map[string]Check{}
	for _, c := range checks {
		m[c.Kind+" "+c.Name] = c
	}
	return m
}
