package findings

import (
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// p99 is a figure of the study's, 56 s, measured as the median and the top of its repeats (ms).
func p99(median, low float64) Figure {
	return Figure{Published: scenario.Published{What: "sync servlet, /instant, p99", Theirs: "56 s"},
		Ours: Value{Spread: results.Spread{Median: median, Min: low, Max: median}, Measured: true, Unit: "ms"}}
}

// Two reproductions' claims are set side by side, study by study: alike where both read a
// claim the same, otherwise with both reasons, and a claim one of them lacks is absent there,
// never counted alike.
func TestAgreeSetsEveryClaimBesideItsTwin(t *testing.T) {
	findingsOf := func(id, rev string, claims map[string][]Claim) *Findings {
		f := &Findings{Reproduction: &results.Reproduction{ID: id, Started: time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC), Status: results.RunComplete, Repeat: 3},
			Env: results.Environment{ArenaRev: rev}, JudgedBy: "8dde661"}
		for _, sc := range []string{"isolation", "chat", "database"} {
			if cs, ok := claims[sc]; ok {
				f.Studies = append(f.Studies, Study{Scenario: sc, Claims: cs})
			}
		}
		return f
	}
	a := findingsOf("reproduce-a", "d17e12e", map[string][]Claim{
		"isolation": {{ID: "a", Text: "sync starves", Verdict: results.ClaimHolds, Figures: []Figure{p99(60030, 59990), {Published: scenario.Published{What: "only in A"}}}},
			{ID: "b", Text: "async isolated", Verdict: results.ClaimHolds}},
		"chat": {{ID: "a", Text: "bus costs | CPU", Verdict: results.ClaimPartly, Why: "2 of 3 parts hold"},
			{ID: "arena-2", Text: "every model", Verdict: results.ClaimHolds, Basis: BasisEvery}},
	})
	b := findingsOf("reproduce-b", "d17e12e", map[string][]Claim{
		"isolation": {{ID: "a", Text: "sync starves", Verdict: results.ClaimHolds, Figures: []Figure{p99(58000, 58000)}},
			{ID: "b", Text: "async isolated", Verdict: results.ClaimHolds}},
		"chat": {{ID: "a", Text: "bus costs | CPU", Verdict: results.ClaimFails, Why: "1 of 3 parts holds"},
			{ID: "arena-2", Text: "every model", Verdict: results.ClaimUntested, Why: "needs more than one runtime"}},
		"database": {{ID: "a", Text: "virtual matches reactive", Verdict: results.ClaimFails}},
	})
	rows := Agree(a, b)
	var got []string
	for _, g := range rows {
		got = append(got, g.Scenario+"/"+g.Claim+":"+g.A+"→"+g.B)
	}
	want := []string{"isolation/a:holds→holds", "isolation/b:holds→holds", "chat/a:partly→fails", "chat/arena-2:holds→untested", "database/a:" + Absent + "→fails"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("rows %v; want %v", got, want)
	}
	var sb strings.Builder
	if err := WriteAgreement(&sb, a, b, rows); err != nil {
		t.Fatal(err)
	}
	text := sb.String()
	for _, want := range []string{
		"| A | `reproduce-a` | d17e12e | 2026-11-27 03:00 UTC | — | complete | 3 repeat(s) a cell |",
		`| chat | (a) bus costs \| CPU | partly | fails | **otherwise** |`,
		"| isolation | (a) sync starves | holds | holds | alike |",
		"| database | (a) virtual matches reactive | (absent) | fails | not in both: a claim one of them lacks |",
		"| chat | (arena-2) every model | holds | untested | not in both: a verdict over every contender, where the other ran no matrix |",
		"Both judged again by arena 8dde661.",
		"2 of the 3 claims both reproductions ran read alike in both, 2 of them decided (neither untested, untested here nor not shown); 2 not in both",
		"- chat (a): A partly: 2 of 3 parts hold\n  B fails: 1 of 3 parts holds",
		"| study | claim | figure | the study | A | B |",
		"| isolation | (a) | sync servlet, /instant, p99 | 56 s | 60.03 s (59.99 s–60.03 s) | 58.00 s |",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the table lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "only in A") {
		t.Errorf("a figure one of them lacks is set beside nothing:\n%s", text)
	}
	if strings.Contains(text, "- database (a)") {
		t.Errorf("a claim not in both is given as read otherwise:\n%s", text)
	}
}

// Only an agreement on a verdict that decides its claim counts as decided: two untested, two
// untested here or two not shown read alike and say nothing; nor does a pair read otherwise,
// or not in both.
func TestDecidedAgreementsAreCounted(t *testing.T) {
	for _, tt := range []struct {
		a, b, notInBoth string
		decided         bool
	}{
		{results.ClaimHolds, results.ClaimHolds, "", true},
		{results.ClaimFails, results.ClaimFails, "", true},
		{results.ClaimPartly, results.ClaimPartly, "", true},
		{results.ClaimHoldsWhereTested, results.ClaimHoldsWhereTested, "", true},
		{results.ClaimUntested, results.ClaimUntested, "", false},
		{results.ClaimUntestedHere, results.ClaimUntestedHere, "", false},
		{"not shown", "not shown", "", false},
		{results.ClaimHolds, results.ClaimFails, "", false},
		{results.ClaimHolds, results.ClaimHolds, "a study one of them did not run", false},
	} {
		g := Agreement{A: tt.a, B: tt.b, NotInBoth: tt.notInBoth}
		if g.Decided() != tt.decided {
			t.Errorf("%s beside %s (not in both: %q): decided %v, want %v", tt.a, tt.b, tt.notInBoth, g.Decided(), tt.decided)
		}
	}
	rows := []Agreement{{Scenario: "sleep", Claim: "a", A: "holds", B: "holds"}, {Scenario: "sleep", Claim: "c", A: "untested here", B: "untested here"},
		{Scenario: "stream", Claim: "b", A: "not shown", B: "not shown"}, {Scenario: "chat", Claim: "a", A: "fails", B: "fails"}}
	var sb strings.Builder
	f := &Findings{Reproduction: &results.Reproduction{ID: "r"}}
	if err := WriteAgreement(&sb, f, f, rows); err != nil {
		t.Fatal(err)
	}
	if want := "4 of the 4 claims both reproductions ran read alike in both, 2 of them decided (neither untested, untested here nor not shown)."; !strings.Contains(sb.String(), want) {
		t.Errorf("the page lacks %q:\n%s", want, sb.String())
	}
}
