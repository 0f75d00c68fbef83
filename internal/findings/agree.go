package findings

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// Agreement is one claim's verdict in two reproductions (arena compare of two reproduction
// folders): two of unchanged code on one machine should read alike, and a claim that reads
// otherwise in the second is what changed, or how far a verdict rests on noise.
type Agreement struct {
	Scenario, Claim, Text string
	A, B                  string // the verdicts; Absent where that reproduction has no such claim
	WhyA, WhyB            string
	// NotInBoth says why the two verdicts are not set against each other ("" when they are):
	// a study one reproduction did not run, or a verdict that rests on the matrix's runs
	// where the other reproduction ran no matrix (arena reproduce --only studies).
	NotInBoth string
}

// Absent stands for a claim one of the two reproductions does not have (a study added later).
const Absent = "(absent)"

// Alike says whether both read the claim the same.
func (g Agreement) Alike() bool { return g.A == g.B }

// Compared says whether the two verdicts are set against each other.
func (g Agreement) Compared() bool { return g.NotInBoth == "" }

// notShown is the verdict of a claim whose repeats could not separate its parts
// (results.ClaimNotShown, where the scenarios give it).
const notShown = "not shown"

// Undecided says whether a verdict decides nothing about its claim: untested, untested here,
// or not shown. Two such verdicts read alike because neither says anything.
func Undecided(verdict string) bool { return results.Untested(verdict) || verdict == notShown }

// Decided says whether the two read the claim alike with a verdict that decides it: an
// agreement that carries information, not two verdicts of no evidence.
func (g Agreement) Decided() bool {
	return g.Compared() && g.Alike() && !Undecided(g.A) && !Undecided(g.B)
}

// Agree sets every claim of a beside the same claim of b, study by study in a's order, then
// those b alone has.
func Agree(a, b *Findings) []Agreement {
	var out []Agreement
	seen := map[string]bool{}
	for _, s := range a.Studies {
		for _, ca := range s.Claims {
			cb, ok := b.claim(s.Scenario, ca.ID)
			if !ok {
				cb = Claim{ID: ca.ID, Verdict: Absent}
			}
			seen[s.Scenario+"/"+ca.ID] = true
			out = append(out, agreement(s.Scenario, ca, cb, a, b))
		}
	}
	for _, s := range b.Studies {
		for _, cb := range s.Claims {
			if !seen[s.Scenario+"/"+cb.ID] {
				out = append(out, agreement(s.Scenario, Claim{ID: cb.ID, Text: cb.Text, Verdict: Absent}, cb, a, b))
			}
		}
	}
	return out
}

// agreement is claim ca of a beside cb of b, and why they are not compared, if they are not.
func agreement(scenario string, ca, cb Claim, a, b *Findings) Agreement {
	g := Agreement{Scenario: scenario, Claim: ca.ID, Text: cmp.Or(ca.Text, cb.Text), A: ca.Verdict, WhyA: ca.Why, B: cb.Verdict, WhyB: cb.Why}
	switch {
	case ca.Verdict == Absent || cb.Verdict == Absent:
		g.NotInBoth = "a claim one of them lacks"
	case ca.Why == NotRun || cb.Why == NotRun:
		g.NotInBoth = "a study one of them did not run"
	case ca.Basis == BasisEvery && !b.ranMatrix(), cb.Basis == BasisEvery && !a.ranMatrix():
		g.NotInBoth = "a verdict over every contender, where the other ran no matrix"
	}
	return g
}

// ranMatrix says whether the reproduction ran a step of the matrix.
func (f *Findings) ranMatrix() bool {
	return slices.ContainsFunc(f.Reproduction.Steps, func(st results.Step) bool { return st.Part == results.PartMatrix })
}

func (f *Findings) claim(scenario, id string) (Claim, bool) {
	for _, s := range f.Studies {
		if s.Scenario != scenario {
			continue
		}
		for _, c := range s.Claims {
			if c.ID == id {
				return c, true
			}
		}
	}
	return Claim{}, false
}

// WriteAgreement writes the claims of a and b side by side as Markdown: what each
// reproduction was (id, arena's commit, dates, repeats), a row a claim, and how many read
// alike; each claim read otherwise is then given with both reasons.
func WriteAgreement(w io.Writer, a, b *Findings, rows []Agreement) error {
	var sb strings.Builder
	sb.WriteString("| | reproduction | measured by arena | began | ended | status | repeats |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for _, side := range []struct {
		name string
		f    *Findings
	}{{"A", a}, {"B", b}} {
		rep := side.f.Reproduction
		ended := "—"
		if rep.Finished != nil {
			ended = rep.Finished.UTC().Format("2006-01-02 15:04 MST")
		}
		fmt.Fprintf(&sb, "| %s | `%s` | %s | %s | %s | %s | %s |\n", side.name, rep.ID, orUnknown(side.f.Env.ArenaRev),
			rep.Started.UTC().Format("2006-01-02 15:04 MST"), ended, rep.Status, side.f.RepeatText())
	}
	fmt.Fprintf(&sb, "\nBoth judged again by arena %s.\n", a.JudgedByText())
	sb.WriteString("\n| study | claim | A | B | |\n| --- | --- | --- | --- | --- |\n")
	alike, compared, decided := 0, 0, 0
	for _, g := range rows {
		mark := "not in both: " + g.NotInBoth
		switch {
		case !g.Compared():
		case g.Alike():
			alike++
			mark = "alike"
		default:
			mark = "**otherwise**"
		}
		if g.Compared() {
			compared++
		}
		if g.Decided() {
			decided++
		}
		fmt.Fprintf(&sb, "| %s | (%s) %s | %s | %s | %s |\n", g.Scenario, g.Claim, tableCell(g.Text), g.A, g.B, mark)
	}
	fmt.Fprintf(&sb, "\n%d of the %d claims both reproductions ran read alike in both, %d of them decided (neither untested, untested here nor not shown)", alike, compared, decided)
	if n := len(rows) - compared; n > 0 {
		fmt.Fprintf(&sb, "; %d not in both", n)
	}
	sb.WriteString(".\n")
	for _, g := range rows {
		if g.Compared() && !g.Alike() {
			fmt.Fprintf(&sb, "\n- %s (%s): A %s: %s\n  B %s: %s\n", g.Scenario, g.Claim, g.A, cmp.Or(g.WhyA, "—"), g.B, cmp.Or(g.WhyB, "—"))
		}
	}
	writeFigurePairs(&sb, a, b, rows)
	_, err := io.WriteString(w, sb.String())
	return err
}

// writeFigurePairs writes the study's figures as each reproduction measured them, claim by
// claim: a verdict read alike says little where its figure sits on the claim's bound, and
// this shows how far apart the two measured it.
func writeFigurePairs(sb *strings.Builder, a, b *Findings, rows []Agreement) {
	header := false
	for _, g := range rows {
		if !g.Compared() {
			continue
		}
		ca, _ := a.claim(g.Scenario, g.Claim)
		cb, _ := b.claim(g.Scenario, g.Claim)
		for _, fa := range ca.Figures {
			i := slices.IndexFunc(cb.Figures, func(fb Figure) bool { return fb.What == fa.What })
			if i < 0 {
				continue
			}
			if !header {
				sb.WriteString("\nThe study's figures as each measured them (the median of the repeats, their range):\n\n| study | claim | figure | the study | A | B |\n| --- | --- | --- | --- | --- | --- |\n")
				header = true
			}
			fmt.Fprintf(sb, "| %s | (%s) | %s | %s | %s | %s |\n", g.Scenario, g.Claim, tableCell(fa.What), tableCell(fa.Theirs),
				tableCell(fa.Ours.Text()), tableCell(cb.Figures[i].Ours.Text()))
		}
	}
}
