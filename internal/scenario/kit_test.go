package scenario

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

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
}

// Two figures a claim calls the same fail only apart beyond the tolerance and beyond the
// noise, and with no figure are untested, never failed: the twin reproduction's WebFlux annotated against functional (medians 1.17× apart,
// repeats overlapping) is alike; two reproductions of one code must not read otherwise on
// where the repeats happened to fall.
func TestAlikeFailsOnlyBeyondToleranceAndNoise(t *testing.T) {
	tol := Tolerance{Want: 1, Frac: 0.10, Words: "about the same"}
	cases := []struct {
		name    string
		a, b    []float64
		want    string
		whyHave string
	}{
		{"within the tolerance", []float64{3200, 3121, 2746}, []float64{3194, 3107, 3142}, "holds", "1.01 is within ±10 %"},
		{"apart, inside the noise", []float64{3935, 4290, 3759}, []float64{3374, 3280, 3924}, "holds", "1.17 is outside ±10 % of 1, the study's about the same; yet the repeats do not order them"},
		{"apart beyond the noise", []float64{3935, 4290, 3959}, []float64{3374, 3280, 3324}, "fails", "ordered beyond the noise (3959 vs 3324, U test P = 0.100"},
		{"one repeat each, 20 % apart", []float64{1200}, []float64{1000}, "fails", "more than 10 % apart"},
		{"one repeat each, 5 % apart", []float64{1050}, []float64{1000}, "holds", "1.05 is within"},
		{"no figure", nil, []float64{1000}, "untested", "no figure to compare (0 and 1"},
		{"a zero", []float64{0}, []float64{1000}, "untested", "no figure"},
	}
	for _, c := range cases {
		got, why := Alike(c.a, c.b, tol)
		if got != c.want || !strings.Contains(why, c.whyHave) {
			t.Errorf("%s: %s (%s); want %s with %q", c.name, got, why, c.want, c.whyHave)
		}
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
		passed, of int
		chance     float64
		verdict    string
		noted      bool
	}{
		{1, 8, 0.05, results.ClaimFails, true},
		{2, 8, 0.05, results.ClaimFails, true}, // 5.7 %
		{3, 8, 0.05, results.ClaimPartly, false},
		{8, 8, 0.05, results.ClaimHolds, false},
		{0, 8, 0.05, results.ClaimFails, false},
		{1, 3, 1.0 / 816, results.ClaimPartly, false},
		{1, 8, 0, results.ClaimPartly, false}, // no test of the noise: Count's reading
	} {
		verdict, note := CountOrders(tt.passed, tt.of, tt.chance)
		if verdict != tt.verdict || (note != "") != tt.noted {
			t.Errorf("%d of %d at %.4f: %s (%q), want %s, noted %v", tt.passed, tt.of, tt.chance, verdict, note, tt.verdict, tt.noted)
		}
	}
	if _, note := CountOrders(1, 8, 0.05); !strings.Contains(note, "1 of 8 is no more than chance gives (34 % of the time") {
		t.Errorf("note %q", note)
	}
}
