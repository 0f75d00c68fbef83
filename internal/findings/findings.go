// Package findings reads a reproduction against the studies: for every claim of every study,
// the study's own figures beside ours on the same axes, our verdict and what it rests on, and
// how the study's setup and ours differ. The report renders it as a page, and as
// docs/findings.md.
package findings

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/scenarios"
)

// Findings is a reproduction set against the studies.
type Findings struct {
	Reproduction *results.Reproduction
	Env          results.Environment // the machine, as the first run recorded it
	Studies      []Study
	Runs         []Run // every run of the reproduction that loads, in the order run
}

// Run is one run of the reproduction, judged again with this arena's rules.
type Run struct {
	*results.Run
	Dir  string // its folder
	Step results.Step
}

// Study is one study's section: its setup beside ours, and its claims.
type Study struct {
	Scenario, Title, Study string
	Setup                  scenario.Setup
	Ours                   scenario.Setup // how ours ran, stated from the runs' records
	Notes                  []string       // what of the study could not run here
	Runs                   []Run          // this scenario's runs
	Claims                 []Claim
}

// Claim is one claim: its verdict, what that rests on, the same claim in the other forms, and
// the figures.
type Claim struct {
	ID, Text     string
	Verdict, Why string // the verdict shown, and its reason
	RestsOn      string // the run and form it rests on
	// Study is the claim in the study's form on the study's stacks; Steady the same in the
	// steady state, where a steady run was made; Every over every contender the study's
	// preset measured, its stacks and the rest.
	Study, Steady, Every *results.Claim
	Figures              []Figure
}

// Figure is one of the study's figures beside ours.
type Figure struct {
	scenario.Published
	Ours   Value // in the study's form
	Steady Value // in the steady state
}

// Value is one of our figures: its median over repeats and their range.
type Value struct {
	results.Spread
	Measured bool
	Unit     string
	Run      string // the run it is read from
	// Caveat says why the figure is not the server's plain measure: "client-bound" (the client
	// may have set the pace), or the integrity faults that keep it out (then not Measured).
	Caveat string
}

// Build reads the reproduction in dir: every run it made, judged again with this arena's
// rules, set against each study.
func Build(rep *results.Reproduction, dir string) (*Findings, error) {
	f := &Findings{Reproduction: rep}
	for _, st := range rep.Steps {
		if st.Run == "" {
			continue
		}
		run, err := results.Load(filepath.Join(dir, st.Run))
		if err != nil {
			continue // begun but never saved: nothing measured
		}
		if err := scenarios.Rejudge(run); err != nil {
			return nil, fmt.Errorf("run %s: %w", run.ID, err)
		}
		f.Runs = append(f.Runs, Run{Run: run, Dir: filepath.Join(dir, st.Run), Step: st})
	}
	if len(f.Runs) > 0 {
		f.Env = f.Runs[0].Env
	}
	for _, sc := range scenarios.All() {
		f.Studies = append(f.Studies, f.study(sc))
	}
	return f, nil
}

// study is one scenario's section; a study the reproduction did not run has its claims, all
// untested.
func (f *Findings) study(sc scenario.Scenario) Study {
	s := Study{Scenario: sc.Name(), Title: sc.Title(), Study: sc.Study()}
	var rp scenario.Reproduction
	if r, ok := sc.(scenario.Reproducible); ok {
		rp = r.Reproduction()
	}
	s.Setup = rp.Setup
	s.Notes = rp.Notes
	var studyRun, steadyRun, matrixRun *results.Run
	for _, r := range f.Runs {
		if r.Scenario.Name != sc.Name() {
			continue
		}
		s.Runs = append(s.Runs, r)
		switch {
		case r.Step.Part == results.PartMatrix:
			matrixRun = r.Run
		case r.Scenario.Preset == scenario.PresetSteady:
			steadyRun = r.Run
		case studyRun == nil:
			studyRun = r.Run
		}
	}
	if len(s.Runs) == 0 {
		_, claims := sc.Judge(&results.Run{Scenario: results.ScenarioInfo{Name: sc.Name()}})
		for _, c := range claims {
			s.Claims = append(s.Claims, Claim{ID: c.ID, Text: c.Text, Verdict: results.ClaimUntested, Why: "not run in this reproduction", RestsOn: "nothing: no run tested it"})
		}
		return s
	}
	s.Ours = oursOf(s.Runs[0].Run, rp.Stacks)
	every := everyContender(studyRun, matrixRun)
	for _, id := range claimIDs(studyRun, every) {
		c := Claim{ID: id, Study: claimOf(studyRun, id), Steady: claimOf(steadyRun, id), Every: claimOf(every, id)}
		c.decide(studyRun, every)
		for _, p := range rp.Published {
			if p.Claim == id {
				c.Figures = append(c.Figures, Figure{Published: p, Ours: read(studyRun, p), Steady: read(steadyRun, p)})
			}
		}
		s.Claims = append(s.Claims, c)
	}
	return s
}

// decide gives the claim the verdict shown: the study's form on the study's stacks where it
// was tested there (what the study claimed, at the load it claimed it), else over every
// contender, else untested.
func (c *Claim) decide(studyRun, every *results.Run) {
	for _, x := range []*results.Claim{c.Study, c.Every} {
		if x != nil {
			c.Text = x.Text
			break
		}
	}
	switch {
	case c.Study != nil && c.Study.Verdict != results.ClaimUntested:
		c.Verdict, c.Why = c.Study.Verdict, c.Study.Why
		c.RestsOn = fmt.Sprintf("the study's form (preset %s%s) on the study's stacks: run %s", studyRun.Scenario.Preset, quick(studyRun), studyRun.ID)
	case c.Every != nil && c.Every.Verdict != results.ClaimUntested:
		c.Verdict, c.Why = c.Every.Verdict, c.Every.Why
		c.RestsOn = "every contender measured at the study's preset: the study's stacks in its form, the others in the matrix's"
	default:
		c.Verdict = results.ClaimUntested
		if c.Study != nil {
			c.Why = c.Study.Why
		} else if c.Every != nil {
			c.Why = c.Every.Why
		}
		c.RestsOn = "nothing: no run tested it"
	}
}

func quick(r *results.Run) string {
	if r.Scenario.Quick {
		return ", quick"
	}
	return ""
}

// everyContender is the study run and the matrix run as one, each contender from the run
// that measured it, judged again: the claims over every stack. Nil without a matrix run of
// the study's preset.
func everyContender(studyRun, matrixRun *results.Run) *results.Run {
	if matrixRun == nil || (studyRun != nil && matrixRun.Scenario.Preset != studyRun.Scenario.Preset) {
		return nil
	}
	pick := map[string]*results.Run{}
	var order []string
	for _, r := range []*results.Run{studyRun, matrixRun} {
		if r == nil {
			continue
		}
		for _, c := range r.Contenders {
			if pick[c.Name] == nil {
				pick[c.Name], order = r, append(order, c.Name)
			}
		}
	}
	merged := results.Merge(pick, order)
	if merged == nil {
		return nil
	}
	merged.Claims = scenarios.ClaimsOf(merged)
	return merged
}

// claimIDs are the claims of the study run, then any only the merged run has.
func claimIDs(runs ...*results.Run) []string {
	var ids []string
	for _, r := range runs {
		if r == nil {
			continue
		}
		for _, c := range r.Claims {
			if !slices.Contains(ids, c.ID) {
				ids = append(ids, c.ID)
			}
		}
	}
	return ids
}

func claimOf(r *results.Run, id string) *results.Claim {
	if r == nil {
		return nil
	}
	for _, c := range r.Claims {
		if c.ID == id {
			return &c
		}
	}
	return nil
}

// read is our figure for a published one, from run's summary: the figure itself, or the
// ratio of two with the range their repeats allow.
func read(run *results.Run, p scenario.Published) Value {
	if run == nil {
		return Value{}
	}
	v := Value{Unit: p.Ours.Unit, Run: run.ID}
	top, caveat, ok := figure(run, p.Ours)
	v.Caveat = caveat
	if !ok {
		return v
	}
	v.Spread, v.Measured = top, true
	if p.Per != nil {
		bottom, caveat, ok := figure(run, *p.Per)
		if !ok || bottom.Median <= 0 || bottom.Min <= 0 {
			return Value{Unit: p.Ours.Unit, Run: run.ID, Caveat: caveat}
		}
		if caveat != "" && caveat != v.Caveat {
			v.Caveat = strings.TrimPrefix(v.Caveat+"; "+caveat, "; ")
		}
		v.Spread = results.Spread{Median: top.Median / bottom.Median, Min: top.Min / bottom.Max, Max: top.Max / bottom.Min}
		v.Unit = "×"
	}
	return v
}

// figure reads one of our figures from the run's summary, with its caveat: a contender whose
// deliveries had integrity faults has no figure to set beside a study's (they are not the
// same work), and a client-bound one is marked.
func figure(run *results.Run, r scenario.Read) (results.Spread, string, bool) {
	for _, s := range run.Summary {
		if s.Contender != r.Contender || s.Level != r.Level || !slices.Contains(s.Outcomes, results.OutcomeOK) {
			continue
		}
		if s.Faulty() {
			return results.Spread{}, "integrity faults: " + results.FormatFaults(s.Faults), false
		}
		sp, ok := results.FigureOf(s, r.Figure, r.Tag)
		caveat := ""
		if s.ClientBnd {
			caveat = "client-bound"
		}
		return sp, caveat, ok
	}
	return results.Spread{}, "", false
}

// oursOf states how our runs ran, from their records: the machine and CPUs, the heap and
// runtimes, the stacks' versions, the load.
func oursOf(run *results.Run, stacks []string) scenario.Setup {
	e := run.Env
	var soft []string
	for _, c := range run.Contenders {
		if slices.Contains(stacks, c.Name) {
			soft = append(soft, c.Name+": "+c.Stack)
		}
	}
	if e.JavaVersion != "" {
		soft = append(soft, "Java "+e.JavaVersion)
	}
	if e.NodeVersion != "" {
		soft = append(soft, "Node.js "+e.NodeVersion)
	}
	load := ""
	if len(run.Scenario.Levels) > 0 {
		load = run.Scenario.Levels[0].Load
	}
	return scenario.Setup{
		Machine: fmt.Sprintf("%s, %d cores, %.0f GB: each server on CPU %s (%s), the client on CPU %s; heap %d MiB",
			e.CPUModel, e.Cores, e.MemoryGB, e.ServerCPUs, coresWord(e.ServerCPUs), e.ClientCPUs, e.HeapMB),
		Software: strings.Join(soft, "; "),
		Method:   fmt.Sprintf("arena's client, preset %s%s, %d repeat(s); first level: %s", run.Scenario.Preset, quick(run), run.Scenario.Repeat, load),
	}
}

func coresWord(cpus string) string {
	if strings.ContainsAny(cpus, ",-") {
		return "several cores"
	}
	return "one core"
}
