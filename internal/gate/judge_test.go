package gate

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

func mustParse(t *testing.T, failOn []string, thresholds ...string) Gate {
	t.Helper()
	g, err := Parse(failOn, thresholds)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// With no gate nothing fails: what is good passes, and what is bad (a starved cell, a claim
// that fails, partly holds or is untested) is skipped, never passed.
func TestJudgeWithoutAGateFailsNothing(t *testing.T) {
	checks := Gate{}.Judge(isolationRun(t))
	want := map[string]string{
		"cell spring-mvc/seed":                        Skipped,
		"cell spring-webflux/seed":                    Passed,
		"claim (a) The synchronous servlet degrades.": Passed,
		"claim (b) WebFlux stays isolated.":           Passed, // holds where tested
		"claim (c) /delayed compounds past 50 s.":     Skipped,
		"claim (d) /delayed stays at 10 s.":           Skipped,
		"claim (e) Every probe stays fast.":           Skipped,
	}
	if len(checks) != len(want) {
		t.Fatalf("%d checks, want %d: %+v", len(checks), len(want), checks)
	}
	got := byName(checks)
	for name, status := range want {
		if c := got[name]; c.Status != status || len(c.FailedOn) > 0 {
			t.Errorf("%s: %s (failed on %v), want %s", name, c.Status, c.FailedOn, status)
		}
	}
	mvc := got["cell spring-mvc/seed"]
	if !slices.Equal(mvc.Words, []string{FailFails}) || mvc.Verdict != "starved" || len(mvc.Streams) != 2 || mvc.Seconds != 40 {
		t.Errorf("spring-mvc's cell: %+v", mvc)
	}
	if !strings.HasPrefix(mvc.Message, "spring-mvc at seed: starved (instant p99 20.02 s); instant p50 3.00 s, p99 20.02 s, 9.50 requests/s, errors 10.0 % (20 of 200: 20 timeout)") {
		t.Errorf("spring-mvc's message: %s", mvc.Message)
	}
}

// --fail-on fails: the starved cell and the claim that fails; untested (untested here
// included) and partly name their own.
func TestJudgeFailOnVerdicts(t *testing.T) {
	run := isolationRun(t)
	cases := []struct {
		failOn []string
		failed []string
	}{
		{[]string{FailFails}, []string{"cell spring-mvc/seed", "claim (d) /delayed stays at 10 s."}},
		{[]string{FailUntested}, []string{"claim (c) /delayed compounds past 50 s."}},
		{[]string{FailPartly}, []string{"claim (e) Every probe stays fast."}},
		{[]string{FailCrashed, FailUnresponsive, FailFaults, FailErrors, FailInconclusive}, nil},
	}
	for _, c := range cases {
		var failed []string
		for _, ch := range FailedChecks(mustParse(t, c.failOn).Judge(run)) {
			failed = append(failed, ch.Kind+" "+ch.Name)
			if !slices.Equal(ch.FailedOn, c.failOn[:1]) {
				t.Errorf("--fail-on %v: %s failed on %v", c.failOn, ch.Name, ch.FailedOn)
			}
		}
		if !slices.Equal(failed, c.failed) {
			t.Errorf("--fail-on %v: failed %v, want %v", c.failOn, failed, c.failed)
		}
	}
}

// Each cell outcome word describes the cells it names, and fails them when asked.
func TestJudgeCellOutcomes(t *testing.T) {
	ok := func(contender string) results.Cell {
		return cell(contender, "seed", 1, results.OutcomeOK, tag(t, "instant", values{2 * time.Millisecond: 100}, nil, 10))
	}
	crashed := cell("oom", "seed", 1, results.OutcomeOutOfMemory, tag(t, "instant", values{2 * time.Millisecond: 50}, nil, 10))
	unready := cell("unready", "seed", 1, results.OutcomeUnready)
	silent := cell("silent", "seed", 1, results.OutcomeUnresponsive, tag(t, "instant", values{2 * time.Millisecond: 50}, nil, 10))
	faulty := ok("faulty")
	faulty.Faults = map[string]int64{results.FaultDuplicated: 3}
	failing := cell("failing", "seed", 1, results.OutcomeOK, tag(t, "instant", values{2 * time.Millisecond: 90}, map[string]int64{"status": 10}, 10))
	fewErrors := cell("few-errors", "seed", 1, results.OutcomeOK, tag(t, "instant", values{2 * time.Millisecond: 999}, map[string]int64{"reset": 1}, 10))
	bound := ok("client-bound")
	bound.ClientBound = true
	shared := ok("shared")
	shared.SharedCPU = true
	labErr := cell("lab-error", "seed", 1, results.OutcomeError)
	unsupported := cell("unsupported", "seed", 1, results.OutcomeUnsupported)
	run := fixtureRun(t, []results.Cell{crashed, unready, silent, faulty, failing, fewErrors, bound, shared, labErr, unsupported, ok("fine")},
		map[string][]string{"seed": {"instant"}}, nil)

	want := map[string][]string{
		"oom": {FailCrashed}, "unready": {FailCrashed}, "silent": {FailUnresponsive}, "faulty": {FailFaults},
		"failing": {FailErrors}, "few-errors": nil, "client-bound": {FailInconclusive}, "shared": {FailInconclusive},
		"lab-error": {FailInconclusive}, "unsupported": nil, "fine": nil,
	}
	all := mustParse(t, Words[3:])
	for _, c := range all.Judge(run) {
		if !slices.Equal(c.Words, want[c.Contender]) {
			t.Errorf("%s: words %v, want %v", c.Contender, c.Words, want[c.Contender])
		}
		status := Failed
		switch {
		case c.Contender == "unsupported":
			status = Skipped // not measured: nothing to judge
		case len(want[c.Contender]) == 0:
			status = Passed
		}
		if c.Status != status || !slices.Equal(c.FailedOn, want[c.Contender]) {
			t.Errorf("%s under --fail-on %v: %s on %v, want %s", c.Contender, all.FailOn, c.Status, c.FailedOn, status)
		}
	}
	// Asked only about crashes, a client-bound cell is skipped and a crashed one failed.
	got := byName(mustParse(t, []string{FailCrashed}).Judge(run))
	if got["cell client-bound/seed"].Status != Skipped || got["cell oom/seed"].Status != Failed || got["cell fine/seed"].Status != Passed {
		t.Errorf("--fail-on crashed: %+v", got)
	}
}

// A latency threshold is judged on the merged histograms' percentile, never on the
// repeats' percentiles averaged; it is judged at every contender and level measuring its
// stream, with the error rate beside.
func TestThresholdOnTheMergedHistograms(t *testing.T) {
	run := isolationRun(t)
	got := byName(mustParse(t, nil, "instant:p99<50ms", "instant:p50<=3.1s", "delayed:rps>=10").Judge(run))
	mvc := got["threshold instant:p99<50ms at spring-mvc/seed"]
	var merged, repeats float64
	for _, s := range run.Summary {
		if s.Contender == "spring-mvc" {
			merged, repeats = s.Tags[0].Merged.P99, s.Tags[0].P99.Median
		}
	}
	if mvc.Value == nil || *mvc.Value != merged || merged < 20000 || repeats > 13000 {
		t.Fatalf("spring-mvc's p99 judged %v; the merged histograms' is %v (the repeats' median %v)", mvc.Value, merged, repeats)
	}
	if mvc.Status != Failed || !slices.Equal(mvc.FailedOn, []string{KindThreshold}) || *mvc.Limit != 50 || mvc.Unit != "ms" || *mvc.ErrorPct != 10 {
		t.Errorf("spring-mvc: %+v", mvc)
	}
	if want := "spring-mvc at seed: instant p99 20.02 s, bound < 50 ms; errors 10.0 % (20 of 200: 20 timeout): past it"; mvc.Message != want {
		t.Errorf("message\n%s\nwant\n%s", mvc.Message, want)
	}
	for name, status := range map[string]string{
		"threshold instant:p99<50ms at spring-webflux/seed": Passed,
		"threshold instant:p50<=3.1s at spring-mvc/seed":    Passed, // timeouts are in the latency, at the time they waited
		"threshold delayed:rps>=10 at spring-mvc/seed":      Passed,
		"threshold delayed:rps>=10 at spring-webflux/seed":  Passed,
	} {
		if got[name].Status != status {
			t.Errorf("%s: %s (%s), want %s", name, got[name].Status, got[name].Message, status)
		}
	}
}

// errors without a stream is over every stream together; with one, over that stream.
func TestErrorsThreshold(t *testing.T) {
	run := isolationRun(t) // spring-mvc: 20 timeouts of 200 instant, none of 200 delayed
	got := byName(mustParse(t, nil, "errors<=5%", "instant:errors<5%").Judge(run))
	every := got["threshold errors<=5% at spring-mvc/seed"]
	if every.Status != Passed || *every.Value != 5 {
		t.Errorf("every stream: %+v", every)
	}
	instant := got["threshold instant:errors<5% at spring-mvc/seed"]
	if instant.Status != Failed || *instant.Value != 10 || !strings.Contains(instant.Message, "instant errors 10.0 % (20 of 200: 20 timeout), bound < 5.0 %: past it") {
		t.Errorf("instant: %+v", instant)
	}
	if c := got["threshold errors<=5% at spring-webflux/seed"]; c.Status != Passed || *c.Value != 0 {
		t.Errorf("spring-webflux: %+v", c)
	}
}

// A stream that failed requests (a wrong answer, a reset) has no latency for them: its
// latency bound is no pass unless a threshold bounds its errors. A repeat that did not end
// ok leaves its requests out of the merged figure: no pass either.
func TestALatencyThresholdNeverHidesFailures(t *testing.T) {
	resets := cell("node", "seed", 1, results.OutcomeOK, tag(t, "instant", values{2 * time.Millisecond: 990}, map[string]int64{"reset": 10}, 10))
	crashedToo := []results.Cell{
		cell("vertx", "seed", 1, results.OutcomeOK, tag(t, "instant", values{2 * time.Millisecond: 100}, nil, 10)),
		cell("vertx", "seed", 2, results.OutcomeCrashed, tag(t, "instant", values{2 * time.Millisecond: 10}, nil, 10)),
	}
	run := fixtureRun(t, append([]results.Cell{resets}, crashedToo...), map[string][]string{"seed": {"instant"}}, nil)

	got := byName(mustParse(t, nil, "instant:p99<50ms").Judge(run))
	node := got["threshold instant:p99<50ms at node/seed"]
	if node.Status != Failed || !strings.Contains(node.Message, "1.0 % of its requests failed (10 reset), which no p99 shows: no pass unless a threshold bounds instant's errors (e.g. instant:errors<1%)") {
		t.Errorf("node: %+v", node)
	}
	vertx := got["threshold instant:p99<50ms at vertx/seed"]
	if vertx.Status != Failed || !strings.Contains(vertx.Message, "repeats ended crashed: the figure covers only those that ended ok") {
		t.Errorf("vertx: %+v", vertx)
	}
	// Bounding the errors lets the latency be judged on its own, and the errors by their bound.
	got = byName(mustParse(t, nil, "instant:p99<50ms", "instant:errors<2%").Judge(run))
	if c := got["threshold instant:p99<50ms at node/seed"]; c.Status != Passed || *c.ErrorPct != 1 {
		t.Errorf("node with its errors bounded: %+v", c)
	}
	if c := got["threshold instant:errors<2% at node/seed"]; c.Status != Passed {
		t.Errorf("node's errors: %+v", c)
	}
}

// A threshold applies at the levels that measure its stream; a cell not measured skips
// it; a cell that measured no answer fails it.
func TestThresholdWhereItsStreamIs(t *testing.T) {
	run := fixtureRun(t, []results.Cell{
		cell("netty", "sleep-c200", 1, results.OutcomeOK, tag(t, "sleep", values{100 * time.Millisecond: 100}, nil, 1900)),
		cell("netty", "data-c200", 1, results.OutcomeOK, tag(t, "data", values{50 * time.Millisecond: 100}, nil, 3800)),
		cell("node", "sleep-c200", 1, results.OutcomeUnsupported),
		cell("vertx", "sleep-c200", 1, results.OutcomeOK, tag(t, "sleep", nil, map[string]int64{"refused": 100}, 0)),
	}, map[string][]string{"sleep-c200": {"sleep"}, "data-c200": {"data"}}, nil)
	checks := mustParse(t, nil, "sleep:rps>1000").Judge(run)
	got := byName(checks)
	if _, ok := got["threshold sleep:rps>1000 at netty/data-c200"]; ok {
		t.Error("a threshold on sleep judged at data-c200, which does not measure it")
	}
	if c := got["threshold sleep:rps>1000 at netty/sleep-c200"]; c.Status != Passed || *c.Value != 1900 || c.Unit != "requests/s" {
		t.Errorf("netty: %+v", c)
	}
	if c := got["threshold sleep:rps>1000 at node/sleep-c200"]; c.Status != Skipped || c.Message != "node at sleep-c200: not measured (unsupported)" {
		t.Errorf("node: %+v", c)
	}
	if c := got["threshold sleep:rps>1000 at vertx/sleep-c200"]; c.Status != Failed || !strings.Contains(c.Message, "sleep: no answer measured, errors 100.0 % (100 of 100: 100 refused): no figure to judge") {
		t.Errorf("vertx: %+v", c)
	}
}

func TestCountAndSummary(t *testing.T) {
	run := isolationRun(t)
	g := mustParse(t, []string{FailFails}, "instant:p99<50ms")
	s := NewSummary(run, g, g.Judge(run))
	if s.Schema != SummarySchema || s.Result != ResultFailed || s.Passed != 4 || s.Failed != 3 || s.Skipped != 2 ||
		!slices.Equal(s.FailOn, []string{"fails"}) || !slices.Equal(s.Thresholds, []string{"instant:p99<50ms"}) {
		t.Errorf("summary: %+v", s)
	}
	run.Status = results.RunInterrupted
	if s := NewSummary(run, g, g.Judge(run)); s.Result != ResultInterrupted {
		t.Errorf("an interrupted run's result: %s", s.Result)
	}
	if s := NewSummary(&results.Run{Status: results.RunComplete}, Gate{}, nil); s.Result != ResultPassed || s.Checks == nil || s.FailOn == nil || s.Thresholds == nil {
		t.Errorf("an empty run's summary: %+v", s)
	}
}
