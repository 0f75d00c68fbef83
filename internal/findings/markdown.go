package findings

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// WriteMarkdown writes the findings as docs/findings.md: the same sections as the page, with
// the command that made them, their dates, and the page's screenshot (shot, "" for none).
func WriteMarkdown(w io.Writer, f *Findings, page, shot string) error {
	var b strings.Builder
	rep := f.Reproduction
	b.WriteString("# Findings: the five studies reproduced, and arena's own\n\n")
	b.WriteString("<!-- Made by `arena reproduce --markdown` from a reproduction's folder: edit the generator, not this file. -->\n\n")
	fmt.Fprintf(&b, "Reproduction `%s`, begun %s", rep.ID, rep.Started.UTC().Format("2006-01-02 15:04 MST"))
	if rep.Finished != nil {
		fmt.Fprintf(&b, ", ended %s (%s)", rep.Finished.UTC().Format("2006-01-02 15:04 MST"), rep.Finished.Sub(rep.Started).Round(60e9))
	}
	fmt.Fprintf(&b, ", status **%s**, %s.\n\n", rep.Status, f.RepeatText())
	fmt.Fprintf(&b, "```sh\n%s\n```\n\n", strings.Join(rep.Command, " "))
	fmt.Fprintf(&b, "Measured by arena %s; judged again and written by arena %s.\n\n", f.MeasuredBy(), f.JudgedByText())
	if f.Env.CPUModel != "" {
		fmt.Fprintf(&b, "Machine: %s, %d cores, %.0f GB; every server on CPU %s, the client on CPU %s; heap %d MiB.\n\n",
			strings.TrimSuffix(f.Env.CPUModel+", "+f.Env.OS, ", "), f.Env.Cores, f.Env.MemoryGB, f.Env.ServerCPUs, f.Env.ClientCPUs, f.Env.HeapMB)
	}
	if page != "" {
		fmt.Fprintf(&b, "The page with every figure and chart: `%s`.\n\n", page)
	}
	if shot != "" {
		fmt.Fprintf(&b, "![The findings page](%s)\n\n", shot)
	}
	b.WriteString("Each claim's verdict rests on the study's own form on the study's stacks where that tested it (what the study claimed, at the load it claimed it), and says so; the same claim over every contender and in the steady state stands beside it.\n\n")
	b.WriteString("| study | claim | verdict | rests on |\n| --- | --- | --- | --- |\n")
	for _, s := range f.Studies {
		for _, c := range s.Claims {
			fmt.Fprintf(&b, "| %s | (%s) %s | **%s** | %s |\n", s.Scenario, c.ID, tableCell(c.Text), c.Verdict, tableCell(c.RestsOn))
		}
	}
	b.WriteString("\n")
	for _, s := range f.Studies {
		writeStudy(&b, s)
	}
	writeMatrix(&b, f)
	_, err := io.WriteString(w, b.String())
	return err
}

func writeStudy(b *strings.Builder, s Study) {
	fmt.Fprintf(b, "## %s: %s\n\n%s\n\n", s.Scenario, s.Title, s.Study)
	if len(s.Runs) == 0 {
		b.WriteString("Not run in this reproduction.\n\n")
	} else {
		b.WriteString("| | the study | ours |\n| --- | --- | --- |\n")
		for _, row := range [][3]string{{"machine", s.Setup.Machine, s.Ours.Machine}, {"software", s.Setup.Software, s.Ours.Software}, {"method", s.Setup.Method, s.Ours.Method}, {"runtime, read from the processes", "", s.Runtime}} {
			fmt.Fprintf(b, "| %s | %s | %s |\n", row[0], tableCell(orDash(row[1])), tableCell(orDash(row[2])))
		}
		b.WriteString("\n")
	}
	for _, n := range s.Notes {
		fmt.Fprintf(b, "- Not as the study ran it: %s\n", n)
	}
	if len(s.Notes) > 0 {
		b.WriteString("\n")
	}
	var runs []string
	for _, r := range s.Runs {
		runs = append(runs, fmt.Sprintf("`%s` (%s, %s)", r.ID, r.Step.Part, form(r.Run)))
	}
	if len(runs) > 0 {
		fmt.Fprintf(b, "Runs: %s.\n\n", strings.Join(runs, ", "))
	}
	if s.Added != "" {
		fmt.Fprintf(b, "%s\n\n", s.Added)
	}
	if note := s.FewRepeats(); note != "" {
		fmt.Fprintf(b, "%s\n\n", note)
	}
	for _, c := range s.Claims {
		writeClaim(b, c)
	}
	writeLimits(b, s.Limits)
}

// writeLimits sets the server's CPU beside the lab's database's, cell by cell.
func writeLimits(b *strings.Builder, limits []Limit) {
	if len(limits) == 0 {
		return
	}
	b.WriteString("### The server's CPU beside the database's\n\nMean CPU, % of one core, median over repeats; busy: at 90 % or more of its cores.\n\n| run | contender | level | server | database | busy |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, l := range limits {
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s |\n", l.Run, l.Contender, l.Level, l.ServerText(), l.DatabaseText(), l.Busy)
	}
	b.WriteString("\n")
}

// writeClaim is one claim: its verdict and reason, its conditions, its verdict at each core
// count, and its figures, each with why ours differs where it is far from the study's.
func writeClaim(b *strings.Builder, c Claim) {
	fmt.Fprintf(b, "### (%s) %s\n\n**%s**: %s\n\nRests on %s.\n\n", c.ID, c.Text, c.Verdict, c.Why, c.RestsOn)
	if len(c.Conditions) > 0 {
		b.WriteString("Depends on:\n\n")
		for _, cond := range c.Conditions {
			fmt.Fprintf(b, "- %s\n", ConditionText(cond))
		}
		b.WriteString("\n")
	}
	if len(c.ByCores) > 0 {
		b.WriteString("| server cores | verdict | why | run |\n| --- | --- | --- | --- |\n")
		for _, a := range c.ByCores {
			fmt.Fprintf(b, "| %d | **%s** | %s | `%s` |\n", a.Cores, a.Verdict, tableCell(a.Why), a.Run)
		}
		fmt.Fprintf(b, "\nBy core count: %s.\n\n", strings.Join(c.CoreChanges(), "; "))
	}
	if len(c.Figures) > 0 {
		b.WriteString("| figure | the study | ours | ours, steady state | where the study says it |\n| --- | --- | --- | --- | --- |\n")
		for _, fg := range c.Figures {
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", tableCell(fg.What), tableCell(fg.Theirs), tableCell(fg.Ours.Text()), tableCell(fg.Steady.Text()), tableCell(fg.Source))
		}
		b.WriteString("\n")
		for _, fg := range c.Figures {
			if fg.Differs != "" {
				fmt.Fprintf(b, "- Why ours differs, %s: %s\n", fg.What, fg.Differs)
			}
		}
		if slices.ContainsFunc(c.Figures, func(fg Figure) bool { return fg.Differs != "" }) {
			b.WriteString("\n")
		}
	}
	for _, other := range []struct {
		what string
		c    *results.Claim
	}{{"Over every contender", c.Every}, {"In the steady state", c.Steady}} {
		if other.c != nil && (other.c.Verdict != c.Verdict || other.c.Why != c.Why) {
			fmt.Fprintf(b, "%s: **%s**: %s\n\n", other.what, other.c.Verdict, other.c.Why)
		}
	}
}

// writeMatrix is every contender against every scenario: the verdicts of the run that
// measured it, each scenario at the study's preset.
func writeMatrix(b *strings.Builder, f *Findings) {
	var names []string
	model := map[string]string{}
	for _, r := range f.Runs {
		for _, c := range r.Contenders {
			names = appendNew(names, c.Name)
			model[c.Name] = cmp.Or(model[c.Name], c.Model)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return
	}
	b.WriteString("## Every contender on every scenario\n\nEach cell: the scenario's verdicts on the contender, from the run that measured it (the page has the figures and links each run's report); its model says how it waits, so a claim about models reads down the rows.\n\n| contender | model |")
	for _, s := range f.Studies {
		fmt.Fprintf(b, " %s |", s.Scenario)
	}
	b.WriteString("\n| --- | --- |" + strings.Repeat(" --- |", len(f.Studies)) + "\n")
	for _, n := range names {
		fmt.Fprintf(b, "| %s | %s |", n, cmp.Or(model[n], "—"))
		for _, s := range f.Studies {
			fmt.Fprintf(b, " %s |", tableCell(verdictsOf(s, n)))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// verdictsOf are a contender's verdicts in a study's runs (not the steady state's), from
// the last run that measured it.
func verdictsOf(s Study, contender string) string {
	text := "not run"
	for _, r := range s.Runs {
		if r.Scenario.Preset == "steady" || !slices.ContainsFunc(r.Cells, func(c results.Cell) bool { return c.Contender == contender }) {
			continue
		}
		var vs []string
		for _, v := range r.Verdicts {
			if v.Contender == contender {
				word := v.Verdict
				if v.Level != "" && len(r.Scenario.Levels) > 1 {
					word = v.Level + ": " + word
				}
				vs = append(vs, word)
			}
		}
		text = strings.Join(vs, "; ")
		if text == "" {
			text = "measured, no verdict"
		}
	}
	return text
}

// Text writes a value with the range of its repeats, its error rate and its caveat, "—" when
// not measured.
func (v Value) Text() string {
	text := "—"
	switch {
	case !v.Measured:
	case v.Max <= v.Min:
		text = formatIn(v.Median, v.Unit, true)
	default:
		// The range in the same unit, named once, except for times, whose unit may change.
		named := v.Unit == "ms"
		text = fmt.Sprintf("%s (%s–%s)", formatIn(v.Median, v.Unit, true), formatIn(v.Min, v.Unit, named), formatIn(v.Max, v.Unit, named))
	}
	if e := v.ErrorText(); e != "" {
		text += ", " + e
	}
	if v.Caveat != "" {
		text += " [" + v.Caveat + "]"
	}
	return text
}

func formatIn(x float64, unit string, named bool) string {
	var n string
	switch unit {
	case "ms":
		return results.FormatMs(x)
	case "×":
		n = fmt.Sprintf("%.2f", x)
	default:
		n = thousands(x)
	}
	switch {
	case !named:
		return n
	case unit == "×":
		return n + "×"
	}
	return n + " " + unit
}

// thousands writes a count with thousands separators, as the studies do: 6,654.
func thousands(x float64) string {
	s := fmt.Sprintf("%.0f", x)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		return "-" + s
	}
	return s
}

func form(r *results.Run) string {
	f := "preset " + r.Scenario.Preset
	if r.Scenario.Quick {
		f += ", quick"
	}
	return f
}

func tableCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

func orDash(s string) string {
	if s == "" {
		return "not stated"
	}
	return s
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}
