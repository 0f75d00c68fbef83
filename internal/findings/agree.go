package findings

import (
	"cmp"
	"fmt"
	"io"
	"strings"
)

// Agreement is one claim's verdict in two reproductions (arena compare of two reproduction
// folders): two of unchanged code on one machine should read alike, and a claim that reads
// otherwise in the second is what changed, or how far a verdict rests on noise.
type Agreement struct {
	Scenario, Claim, Text string
	A, B                  string // the verdicts; Absent where that reproduction has no such claim
	WhyA, WhyB            string
}

// Absent stands for a claim one of the two reproductions does not have (a study added later).
const Absent = "(absent)"

// Alike says whether both read the claim the same.
func (g Agreement) Alike() bool { return g.A == g.B }

// Compared says whether both reproductions ran the claim's study: one that has no such claim,
// or did not run its study, has no verdict to set beside the other's.
func (g Agreement) Compared() bool {
	return g.A != Absent && g.B != Absent && g.WhyA != NotRun && g.WhyB != NotRun
}

// Agree sets every claim of a beside the same claim of b, study by study in a's order, then
// those b alone has.
func Agree(a, b *Findings) []Agreement {
	var out []Agreement
	seen := map[string]bool{}
	for _, s := range a.Studies {
		for _, c := range s.Claims {
			g := Agreement{Scenario: s.Scenario, Claim: c.ID, Text: c.Text, A: c.Verdict, WhyA: c.Why, B: Absent}
			if cb, ok := b.claim(s.Scenario, c.ID); ok {
				g.B, g.WhyB = cb.Verdict, cb.Why
			}
			seen[s.Scenario+"/"+c.ID] = true
			out = append(out, g)
		}
	}
	for _, s := range b.Studies {
		for _, c := range s.Claims {
			if !seen[s.Scenario+"/"+c.ID] {
				out = append(out, Agreement{Scenario: s.Scenario, Claim: c.ID, Text: c.Text, A: Absent, B: c.Verdict, WhyB: c.Why})
			}
		}
	}
	return out
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
	sb.WriteString("| | reproduction | arena | began | ended | status | repeats |\n| --- | --- | --- | --- | --- | --- | --- |\n")
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
	sb.WriteString("\n| study | claim | A | B | |\n| --- | --- | --- | --- | --- |\n")
	alike, compared := 0, 0
	for _, g := range rows {
		mark := "not in both"
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
		fmt.Fprintf(&sb, "| %s | (%s) %s | %s | %s | %s |\n", g.Scenario, g.Claim, tableCell(g.Text), g.A, g.B, mark)
	}
	fmt.Fprintf(&sb, "\n%d of the %d claims both reproductions ran read alike in both", alike, compared)
	if n := len(rows) - compared; n > 0 {
		fmt.Fprintf(&sb, "; %d not in both (a study one of them did not run, or a claim one of them lacks)", n)
	}
	sb.WriteString(".\n")
	for _, g := range rows {
		if g.Compared() && !g.Alike() {
			fmt.Fprintf(&sb, "\n- %s (%s): A %s: %s\n  B %s: %s\n", g.Scenario, g.Claim, g.A, cmp.Or(g.WhyA, "—"), g.B, cmp.Or(g.WhyB, "—"))
		}
	}
	_, err := io.WriteString(w, sb.String())
	return err
}
