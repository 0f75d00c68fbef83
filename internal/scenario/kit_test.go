package scenario

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/compare"
	"github.com/arena-lab/arena/internal/results"
)

// kitScenario is the least a Scenario is, for the kit's tests.
type kitScenario struct{ presets []string }

func (k kitScenario) Name() string                                            { return "kit" }
func (k kitScenario) Title() string                                           { return "" }
func (k kitScenario) Study() string                                           { return "" }
func (k kitScenario) Presets() []string                                       { return k.presets }
func (k kitScenario) Plan(Options) (Plan, error)                              { return Plan{}, nil }
func (k kitScenario) Judge(*results.Run) ([]results.Verdict, []results.Claim) { return nil, nil }

func TestResolvePresets(t *testing.T) {
	sc := kitScenario{presets: []string{"seed", "scale"}}
	r, err := Options{}.Resolve(sc)
	if err != nil || r.Preset != "seed" {
		t.Fatalf("no preset: %q, %v; want the first, seed", r.Preset, err)
	}
	if r, err := (Options{Preset: "scale", Quick: true}).Resolve(sc); err != nil || r.Preset != "scale" || !r.Quick {
		t.Fatalf("scale: %+v, %v", r, err)
	}
	_, err = Options{Preset: "huge"}.Resolve(sc)
	if err == nil || !strings.Contains(err.Error(), `kit has no preset "huge" (presets: seed, scale)`) {
		t.Fatalf("unknown preset: %v", err)
	}
}

func TestResolveOverrides(t *testing.T) {
	sc := kitScenario{presets: []string{"seed"}}
	r, _ := Options{}.Resolve(sc)
	if r.Duration(time.Minute) != time.Minute || r.Timeout(5*time.Second) != 5*time.Second || r.Overridden() {
		t.Fatalf("no flags must keep the preset's: %v %v %v", r.Duration(time.Minute), r.Timeout(5*time.Second), r.Overridden())
	}
	r, _ = Options{Duration: 12 * time.Second, Timeout: 3 * time.Second}.Resolve(sc)
	if r.Duration(time.Minute) != 12*time.Second || r.Timeout(5*time.Second) != 3*time.Second || !r.Overridden() {
		t.Fatalf("flags must win: %v %v", r.Duration(time.Minute), r.Timeout(5*time.Second))
	}
}

func TestWordsCarryTheirTone(t *testing.T) {
	v := Word{Text: "bounded", Tone: results.Good}.Verdict("netty", "slow-on", "why")
	if v.Verdict != "bounded" || v.Tone != results.Good || v.Contender != "netty" || v.Level != "slow-on" || v.Why != "why" {
		t.Fatalf("%+v", v)
	}
	if o := Outcome(results.OutcomeCrashed); o.Tone != results.Bad || o.Text != "crashed" {
		t.Fatalf("a crash reads %+v", o)
	}
}

// TestOneRuleForEveryClaim: Count and Combine are one rule, over every split of parts.
func TestOneRuleForEveryClaim(t *testing.T) {
	for of := 0; of <= 5; of++ {
		for passed := 0; passed <= of; passed++ {
			var parts []Part
			for i := 0; i < of; i++ {
				v := results.ClaimFails
				if i < passed {
					v = results.ClaimHolds
				}
				parts = append(parts, Part{Verdict: v, Why: "x"})
			}
			if got, want := Combine(results.Claim{}, parts...).Verdict, Count(passed, of); got != want {
				t.Errorf("%d of %d: Combine says %q, Count %q", passed, of, got, want)
			}
		}
	}
	cases := []struct {
		parts []string
		want  string
	}{
		{[]string{results.ClaimHolds, results.ClaimHolds}, results.ClaimHolds},
		{[]string{results.ClaimHolds, results.ClaimUntested}, results.ClaimHoldsWhereTested},
		{[]string{results.ClaimFails, results.ClaimUntested}, results.ClaimFails},
		{[]string{results.ClaimHolds, results.ClaimFails, results.ClaimUntested}, results.ClaimPartly},
		{[]string{results.ClaimPartly}, results.ClaimPartly},
		{[]string{results.ClaimUntested, results.ClaimUntestedHere}, results.ClaimUntestedHere},
		{nil, results.ClaimUntested},
		// not shown is neither evidence for nor against
		{[]string{results.ClaimNotShown, results.ClaimNotShown}, results.ClaimNotShown},
		{[]string{results.ClaimNotShown, results.ClaimUntested}, results.ClaimNotShown},
		{[]string{results.ClaimHolds, results.ClaimNotShown}, results.ClaimHoldsWhereTested},
		{[]string{results.ClaimHolds, results.ClaimNotShown, results.ClaimUntestedHere}, results.ClaimHoldsWhereTested},
		{[]string{results.ClaimFails, results.ClaimNotShown}, results.ClaimFails},
		{[]string{results.ClaimHolds, results.ClaimFails, results.ClaimNotShown}, results.ClaimPartly},
	}
	for _, c := range cases {
		var parts []Part
		for _, v := range c.parts {
			parts = append(parts, Part{Verdict: v, Why: v})
		}
		if got := Combine(results.Claim{}, parts...).Verdict; got != c.want {
			t.Errorf("%v: %q, want %q", c.parts, got, c.want)
		}
	}
}

func TestCompareOrdersOnlyBeyondTheNoise(t *testing.T) {
	cases := []struct {
		a, b []float64
		want Order
	}{
		{[]float64{100}, []float64{105}, Tie},                       // one repeat, 5 % apart
		{[]float64{100}, []float64{120}, Below},                     // one repeat, 20 % apart
		{[]float64{100, 101, 102}, []float64{110, 111, 112}, Below}, // every repeat below
		{[]float64{100, 112, 102}, []float64{110, 101, 111}, Tie},   // overlapping repeats
		{[]float64{300, 310, 305, 299}, []float64{100, 90, 95, 99}, Above},
	}
	for _, c := range cases {
		if got, why := Compare(c.a, c.b); got != c.want {
			t.Errorf("%v vs %v: %v (%s), want %v", c.a, c.b, got, why, c.want)
		}
	}
	// The words a reader checks, never a P value as "beyond the noise".
	for _, c := range []struct {
		a, b []float64
		want string
	}{
		{[]float64{100, 101, 102}, []float64{110, 111, 112}, "101 vs 111, complete separation, 3 against 3: 1 in 20 by chance"},
		{[]float64{100, 112, 102}, []float64{110, 101, 111}, "102 vs 110, not separated: the repeats overlap (U test P = 1.00 over 3 against 3)"},
		{[]float64{1, 2, 3, 4, 5, 7}, []float64{6, 8, 9, 10, 11, 12}, "U test P = 0.004 over 6 against 6 repeats (below 0.05)"},
	} {
		if _, why := Compare(c.a, c.b); !strings.Contains(why, c.want) || strings.Contains(why, "beyond the noise") {
			t.Errorf("%v vs %v: %q, want %q", c.a, c.b, why, c.want)
		}
	}
}

// The evidence rule over synthetic repeats, for an order claim ("a above b") and a sameness
// claim ("a and b alike", ±10 %) each: a tie, an order, a reversal, an equivalence inside and
// outside the tolerance, and an interval across its edge. Only what the repeats separate is
// shown either way; a tie is never fails and never holds.
func TestOneSymmetricRule(t *testing.T) {
	same := Tolerance{Want: 1, Frac: 0.10, Words: "about the same", Source: "arena's choice"}
	tie := [2][]float64{{100, 112, 102}, {110, 101, 111}}
	order := [2][]float64{{120, 121, 122}, {100, 101, 102}}
	reversal := [2][]float64{order[1], order[0]}
	inside := [2][]float64{{102, 100, 98}, {100, 100, 100}}
	outside := [2][]float64{{200, 210, 220}, {100, 100, 100}}
	across := [2][]float64{{1, 2, 4}, {1, 2, 4}}
	for _, c := range []struct {
		name         string
		ab           [2][]float64
		order, alike string
		alikeWhyHas  string
	}{
		{"a tie", tie, results.ClaimNotShown, results.ClaimNotShown, "across the edge of ±10 %"},
		{"an order", order, results.ClaimHolds, results.ClaimFails, "wholly outside ±10 %"},
		{"a reversal", reversal, results.ClaimFails, results.ClaimFails, "wholly outside"},
		{"alike inside the tolerance", inside, results.ClaimNotShown, results.ClaimHolds, "ratio 1, 90 % interval 0.98–1.02 (3 against 3 repeats), inside ±10 % (0.909–1.1) (arena's choice)"},
		{"apart outside the tolerance", outside, results.ClaimHolds, results.ClaimFails, "ratio 2.1, 90 % interval 2–2.2"},
		{"an interval across the edge", across, results.ClaimNotShown, results.ClaimNotShown, "ratio 1, 90 % interval 0.25–4"},
	} {
		if p := OrderPart(c.ab[0], c.ab[1], Above, "a above b"); p.Verdict != c.order {
			t.Errorf("%s, order claim: %s (%s), want %s", c.name, p.Verdict, p.Why, c.order)
		}
		if v, why := Alike(c.ab[0], c.ab[1], same); v != c.alike || !strings.Contains(why, c.alikeWhyHas) {
			t.Errorf("%s, sameness claim: %s (%s), want %s with %q", c.name, v, why, c.alike, c.alikeWhyHas)
		}
	}
	// A magnitude is judged on its interval, not its median.
	twoAndAHalf := Tolerance{Want: 2.5, Frac: 0.20, Words: "2.54×", Source: "seeds/002 lines 228, 102"}
	for _, c := range []struct {
		a, b []float64
		want string
	}{
		{[]float64{220, 230, 240}, []float64{100, 100, 100}, results.ClaimHolds},    // 2.2–2.4 inside 2.0–3.0
		{[]float64{150, 160, 170}, []float64{100, 100, 100}, results.ClaimFails},    // 1.5–1.7
		{[]float64{163, 168, 209}, []float64{100, 100, 100}, results.ClaimNotShown}, // median 1.68 outside, range 1.63–2.09 touches the band
	} {
		if v, why := Alike(c.a, c.b, twoAndAHalf); v != c.want {
			t.Errorf("%v over %v against 2.5 ± 20 %%: %s (%s), want %s", c.a, c.b, v, why, c.want)
		}
	}
	// Too few repeats for a 90 % interval: not shown, never held on a median.
	if v, why := Alike([]float64{1050}, []float64{1000}, same); v != results.ClaimNotShown || !strings.Contains(why, "1 against 1 repeats give no 90 % interval") {
		t.Errorf("one repeat each: %s (%s)", v, why)
	}
	if v, _ := Alike(nil, []float64{1000}, same); v != results.ClaimUntested {
		t.Errorf("no figure: %s", v)
	}
}

// The interval's math against hand-computed values: Hodges-Lehmann is the median of the
// pairwise ratios; Moses' interval takes the k-th of them from each end, k from the exact U
// distribution: 3 against 3, [min, max], 1 − 2/20 = 90 %; 5 against 5, P(U ≤ 4) = 12/252, so
// the 5th from each end and 1 − 24/252 = 90.5 %.
func TestRatioInterval(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	r, ok := RatioOf([]float64{1, 2, 4}, []float64{1, 2, 4})
	// pairwise: 1/4, 1/2, 1/2, 1, 1, 1, 2, 2, 4
	if !ok || !r.Enough || !near(r.Est, 1) || !near(r.Lo, 0.25) || !near(r.Hi, 4) || !near(r.Coverage, 0.9) {
		t.Errorf("3 against 3: %+v", r)
	}
	a := []float64{10, 20, 30, 40, 50}
	b := []float64{1, 2, 3, 4, 5}
	// pairwise a/b, sorted: 2, 2.5, 3.33, 4, 5, 5, 6, 6.67, 7.5, 8, 10, 10, 10, 10, 10(13th = the median), ...; 5th 5, 21st 20
	r, _ = RatioOf(a, b)
	if !r.Enough || !near(r.Est, 10) || !near(r.Lo, 5) || !near(r.Hi, 20) || !near(r.Coverage, 1-24.0/252) {
		t.Errorf("5 against 5: %#v", r)
	}
	if k, tail := mosesRank(5, 5); k != 5 || !near(tail, 12.0/252) {
		t.Errorf("mosesRank(5, 5) = %d, %.4f", k, tail)
	}
	// P(U = 0) is the least one-sided P a U test gives: compare.LeastP's half, for every size.
	for n := 1; n <= 8; n++ {
		for m := 1; m <= 8; m++ {
			if got, want := uDistribution(n, m)[0], compare.LeastP(n, m)/2; !near(got, want) && want < 0.5 {
				t.Errorf("P(U = 0) for %d against %d: %.5f, want %.5f", n, m, got, want)
			}
		}
	}
	if r, _ := RatioOf([]float64{2, 3}, []float64{1, 2}); r.Enough || !near(r.Coverage, 1-2.0/6) {
		t.Errorf("2 against 2 give no 90 %% interval: %+v", r)
	}
}

func TestAtConditionsLeavesAClaimUntestedHere(t *testing.T) {
	run := &results.Run{Env: results.Environment{ServerCPUs: "1"}}
	c, ok := AtConditions(results.Claim{ID: "b", Verdict: results.ClaimFails, Why: "node 12 ms vs cluster 20 ms"}, run, ServerCores(8, "seeds/000 line 5"))
	if ok || c.Verdict != results.ClaimUntestedHere || !strings.Contains(c.Why, "needs ≥ 8 server cores (seeds/000 line 5), this run gave 1") || !strings.Contains(c.Why, "node 12 ms") {
		t.Fatalf("%+v", c)
	}
	if len(c.Conditions) != 1 || c.Conditions[0].Given != 1 || c.Conditions[0].Met {
		t.Fatalf("conditions %+v", c.Conditions)
	}
	run.Env.ServerCPUs = "0-3,8-11"
	if c, ok := AtConditions(results.Claim{}, run, ServerCores(8, "s")); !ok || c.Conditions[0].Given != 8 {
		t.Fatalf("8 cores: %+v", c)
	}
}

func TestAFailingCellIsUnjudged(t *testing.T) {
	cs := results.CellSummary{Tags: []results.TagSummary{{Tag: "instant", Sent: 1000, Errors: 600, ErrKinds: map[string]int64{"status": 500, "timeout": 100}}}}
	w, why, unjudged := Unjudged(cs)
	if !unjudged || w != Failing || !strings.Contains(why, "50.0 % of 1000 requests failed") {
		t.Fatalf("%v %q %v", w, why, unjudged)
	}
	cs.Tags[0].ErrKinds = map[string]int64{"timeout": 600}
	if _, _, unjudged := Unjudged(cs); unjudged {
		t.Fatal("timeouts are slowness, in the latency: not failures")
	}
}

// A fast endpoint stays fast only with correct answers whose p99 is under the bound and no
// failed request; a tag that need not be fast is not judged.
func TestFastEndpoints(t *testing.T) {
	tag := func(name string, count int64, p99 float64, errs int64) results.TagSummary {
		return results.TagSummary{Tag: name, Merged: results.Latency{Count: count, P99: p99}, Errors: errs}
	}
	cs := results.CellSummary{Tags: []results.TagSummary{
		tag("instant", 100, 4, 0),
		tag("liveness", 100, 4, 3),     // fast, but three failed
		tag("readiness", 100, 100, 0),  // at the bound
		tag("probe", 0, 0, 0),          // no correct answer
		tag("delayed", 100, 10_000, 0), // slow work, not judged
	}}
	slow, fine := FastEndpoints(cs, []string{"instant", "liveness", "readiness", "probe"}, 100*time.Millisecond)
	if want := []string{"liveness p99 4.00 ms (3 errors)", "readiness p99 100 ms", "probe p99 0.00 ms"}; !slices.Equal(slow, want) {
		t.Errorf("slow %q; want %q", slow, want)
	}
	if want := []string{"instant p99 4.00 ms"}; !slices.Equal(fine, want) {
		t.Errorf("fine %q; want %q", fine, want)
	}
}

// An order found at a few of many levels, no more than chance gives, is no order: with three
// repeats a side each level orders falsely 1 time in 20 (complete separation), so 1 or 2 of 8
// is chance and 3 of 8 is not; against five rivals at once, far rarer.
func TestCountOrdersBeyondChance(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-3 }
	for _, tt := range []struct {
		n    int
		ms   []int
		want float64
	}{
		{3, []int{3}, 0.05}, {5, []int{5}, 0.025}, {2, []int{3}, 0}, {3, nil, 0},
		{3, []int{3, 3, 3, 3, 3}, 1.0 / 816}, // C(18, 3)
		{5, []int{5, 5}, 0.025},              // the U test's alpha, not separation, orders 5 a side
	} {
		if got := FalseRank(tt.n, tt.ms); !near(got, tt.want) {
			t.Errorf("FalseRank(%d, %v) = %.4f, want %.4f", tt.n, tt.ms, got, tt.want)
		}
	}
	if got := OrdersByChance(1, 8, 0.05); !near(got, 1-math.Pow(0.95, 8)) {
		t.Errorf("1 of 8 by chance: %.4f", got)
	}
	for _, tt := range []struct {
		held, reversed, of int
		chance             float64
		verdict            string
		noted              bool
	}{
		{1, 0, 8, 0.05, results.ClaimNotShown, true},
		{2, 0, 8, 0.05, results.ClaimNotShown, true}, // 5.7 %
		{3, 0, 8, 0.05, results.ClaimHoldsWhereTested, false},
		{8, 0, 8, 0.05, results.ClaimHolds, false},
		{0, 0, 8, 0.05, results.ClaimNotShown, false}, // eight ties: nothing shown, nothing failed
		{0, 8, 8, 0.05, results.ClaimFails, false},
		{3, 1, 8, 0.05, results.ClaimHoldsWhereTested, true}, // the one reversal is chance's
		{3, 3, 8, 0.05, results.ClaimPartly, false},
		{1, 0, 3, 1.0 / 816, results.ClaimHoldsWhereTested, false},
		{1, 0, 8, 0, results.ClaimHoldsWhereTested, false}, // no test of the noise: Tally's reading
	} {
		verdict, note := CountOrders(tt.held, tt.reversed, tt.of, tt.chance)
		if verdict != tt.verdict || (note != "") != tt.noted {
			t.Errorf("%d+%d of %d at %.4f: %s (%q), want %s, noted %v", tt.held, tt.reversed, tt.of, tt.chance, verdict, note, tt.verdict, tt.noted)
		}
	}
	if _, note := CountOrders(1, 0, 8, 0.05); !strings.Contains(note, "1 of 8 ordered the claim's way is no more than chance gives (34 % of the time") {
		t.Errorf("note %q", note)
	}
}

// A part that holds where tested is held and not all of it: the claim cannot hold whole.
func TestCombineHoldsWhereTestedParts(t *testing.T) {
	for _, c := range []struct {
		parts []string
		want  string
	}{
		{[]string{results.ClaimHoldsWhereTested, results.ClaimHolds}, results.ClaimHoldsWhereTested},
		{[]string{results.ClaimHoldsWhereTested, results.ClaimFails}, results.ClaimPartly},
		{[]string{results.ClaimHoldsWhereTested}, results.ClaimHoldsWhereTested},
	} {
		var parts []Part
		for _, v := range c.parts {
			parts = append(parts, Part{Verdict: v, Why: v})
		}
		if got := Combine(results.Claim{}, parts...); got.Verdict != c.want || strings.Contains(got.Why, "not shown: ") {
			t.Errorf("%v: %q (%s), want %q", c.parts, got.Verdict, got.Why, c.want)
		}
	}
}

// A figure put at a value is judged on its median's interval: the k-th repeat from each end,
// k from the binomial: 5 repeats [min, max] at 1 − 2/32; 8 repeats the 2nd from each end at
// 1 − 2·9/256 (P(at most 1 of 8 below the median) = 9/256 ≤ 5 %, at most 2: 37/256 is not);
// 3 repeats give no 90 % interval.
func TestNearOnTheMediansInterval(t *testing.T) {
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if m, _ := MedianOf([]float64{5, 1, 4, 2, 3}); !m.Enough || m.Est != 3 || m.Lo != 1 || m.Hi != 5 || !near(m.Coverage, 1-2.0/32) {
		t.Errorf("5 repeats: %+v", m)
	}
	if m, _ := MedianOf([]float64{1, 2, 3, 4, 5, 6, 7, 8}); !m.Enough || m.Est != 4.5 || m.Lo != 2 || m.Hi != 7 || !near(m.Coverage, 1-18.0/256) {
		t.Errorf("8 repeats: %+v", m)
	}
	if m, _ := MedianOf([]float64{1, 2, 3}); m.Enough || !near(m.Coverage, 0.75) {
		t.Errorf("3 repeats: %+v", m)
	}
	wait := Tolerance{Want: 101, Frac: 0.15, Source: "arena's choice"}
	for _, c := range []struct {
		v      []float64
		want   string
		whyHas string
	}{
		{[]float64{100, 101, 102, 103, 101}, results.ClaimHolds, "median 101 ms, 93 % interval 100–103 (5 repeats), inside 101 ± 15 % (85.8–116)"},
		{[]float64{200, 201, 202, 203, 201}, results.ClaimFails, "wholly outside"},
		{[]float64{100, 101, 102, 103, 130}, results.ClaimNotShown, "across the edge"},
		{[]float64{101, 101, 101}, results.ClaimNotShown, "3 repeats give no 90 % interval for the median (5 do)"},
		{nil, results.ClaimUntested, "no figure"},
	} {
		if v, why := Near(c.v, wait, "ms"); v != c.want || !strings.Contains(why, c.whyHas) {
			t.Errorf("%v: %s (%s), want %s with %q", c.v, v, why, c.want, c.whyHas)
		}
	}
}

// Counts read each place's verdict as Tally does: a tie's "not shown", an untested here or
// any other word is undecided, never held nor failed.
func TestCountsReadEachPlaceAsTallyDoes(t *testing.T) {
	var n Counts
	for _, v := range []string{results.ClaimHolds, results.ClaimHolds, results.ClaimNotShown, results.ClaimUntestedHere} {
		n.Add(v)
	}
	if n.Held != 2 || n.Failed != 0 || n.NotShown != 2 || n.Of() != 4 || n.Verdict() != results.ClaimHoldsWhereTested {
		t.Errorf("%+v reads %q; want 2 held, 2 not shown: %q", n, n.Verdict(), results.ClaimHoldsWhereTested)
	}
	n.Add(results.ClaimFails)
	if n.Verdict() != results.ClaimPartly {
		t.Errorf("%+v reads %q; want partly", n, n.Verdict())
	}
}
