// Package findings reads a reproduction against the studies: for every claim of every study,
// the study's own figures beside ours on the same axes, our verdict and what it rests on, and
// how the study's setup and ours differ. The report renders it as a page, and as
// docs/findings.md.
package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// Findings is a reproduction set against the studies.
type Findings struct {
	Reproduction *results.Reproduction
	Env          results.Environment // the machine, as the first run recorded it
	Studies      []Study
	Runs         []Run // every run of the reproduction that loads, in the order run
	// JudgedBy is the arena revision that judged the runs again and renders the page
	// (ThisArena), beside the ones that measured them (MeasuredBy); "" when not known.
	JudgedBy string
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
	// Repeat is how many repeats a cell the study's form ran: under scenario.MinRepeats its
	// orders rest on single figures more than 10 % apart, with no test of the noise.
	Repeat int
	// Added says when the study's steps were appended to the reproduction after it began, and
	// by which arena its runs and the first runs were measured; "" when it was planned with it.
	Added string
	// Limits set the server's CPU beside the lab's database's, cell by cell, where the study's
	// levels had a database: a reader sees when the database, not the stack, was the limit.
	Limits []Limit
	// Runtime is what the study's stacks ran with, read from their processes cell by cell
	// (collector, processors, heap, carriers, pools' threads): a setup row of ours alone.
	Runtime string
}

// Limit is one contender at one level of a run with a database: both sides' mean CPU
// (medians over repeats, % of one core) on the cores each had, and which of them was busy.
type Limit struct {
	Run, Contender, Level  string
	ServerCPU, DatabaseCPU float64
	ServerCores, DBCores   int
	Busy                   string // "the database", "the server", both, or "" (neither near its cores)
}

// BusyShare of its cores makes a side of a Limit busy: the share lab.clientBound flags at.
const BusyShare = 0.90

func orUnknown(rev string) string { return cmp.Or(rev, "(revision not recorded)") }

// ServerText and DatabaseText are each side's CPU as the page writes it.
func (l Limit) ServerText() string   { return ofCores(l.ServerCPU, l.ServerCores) }
func (l Limit) DatabaseText() string { return ofCores(l.DatabaseCPU, l.DBCores) }

func ofCores(pct float64, n int) string {
	if n == 1 {
		return fmt.Sprintf("%.0f %% of 1 core", pct)
	}
	return fmt.Sprintf("%.0f %% of %d cores", pct, n)
}

// limitsOf are the Limits of run's cells that had a database.
func limitsOf(run *results.Run) []Limit {
	var out []Limit
	dbCores := 0
	for _, c := range run.Cells {
		if c.Database != nil {
			dbCores = scenario.CountCPUs(c.Database.CPUs)
			break
		}
	}
	for _, cs := range run.Summary {
		if cs.DatabaseCPUPct == nil {
			continue
		}
		l := Limit{Run: run.ID, Contender: cs.Contender, Level: cs.Level, ServerCPU: cs.CPUPct.Median, DatabaseCPU: cs.DatabaseCPUPct.Median,
			ServerCores: max(scenario.CountCPUs(run.Env.ServerCPUs), 1), DBCores: max(dbCores, 1)}
		var busy []string
		if l.DatabaseCPU >= BusyShare*100*float64(l.DBCores) {
			busy = append(busy, "the database")
		}
		if l.ServerCPU >= BusyShare*100*float64(l.ServerCores) {
			busy = append(busy, "the server")
		}
		l.Busy = cmp.Or(strings.Join(busy, " and "), "neither")
		out = append(out, l)
	}
	return out
}

// FewRepeats says, where the study's form ran fewer repeats than an order by the U test
// needs, what its orders rest on; "" otherwise.
func (s Study) FewRepeats() string {
	if s.Repeat == 0 || s.Repeat >= scenario.MinRepeats {
		return ""
	}
	return fmt.Sprintf("The orders here rest on %d repeat(s) a cell: two figures are ordered only when more than %.0f %% apart, and nothing measures the noise (the U test needs %d repeats a side).",
		s.Repeat, scenario.SingleRunNoise*100, scenario.MinRepeats)
}

// Claim is one claim: its verdict, what that rests on, the same claim in the other forms, and
// the figures.
type Claim struct {
	ID, Text     string
	Verdict, Why string // the verdict shown, and its reason
	RestsOn      string // the run and form it rests on
	// Basis is which evidence the verdict rests on: BasisStudy, BasisEvery (also an untested
	// one whose reason is the matrix's runs), or "" (none).
	Basis string
	// Study is the claim in the study's form on the study's stacks; Steady the same in the
	// steady state, where a steady run was made; Every over every contender the study's
	// preset measured, its stacks and the rest.
	Study, Steady, Every *results.Claim
	Figures              []Figure
	// Conditions are what the verdict depends on, where each comes from and what the run it
	// rests on gave.
	Conditions []results.Condition
	// ByCores is the claim's verdict in the study's form at each server core count the
	// reproduction ran it at, fewest first; empty when it ran at one count only.
	ByCores []AtCores
}

// AtCores is a claim's verdict in the run of the study's form at one server core count.
type AtCores struct {
	Cores        int
	Verdict, Why string
	Run          string
}

// Figure is one of the study's figures beside ours.
type Figure struct {
	scenario.Published
	Ours   Value // in the study's form
	Steady Value // in the steady state
	// Differs is why ours in the study's form is more than 2× from the study's figure,
	// derived from the run's recorded conditions by the scenario (Published.Differs), or
	// NoReason; "" where they are within 2×, or either side has no number to compare.
	Differs string
}

// FarApart is how many times apart ours and the study's figure may be before the page says
// why they differ.
const FarApart = 2.0

// NoReason is what the page says where ours is more than FarApart from the study's and the
// scenario derives no reason from the recorded conditions: a reason is never invented.
const NoReason = "more than 2× from the study's; no reason derived from the recorded conditions"

// Value is one of our figures: its median over repeats and their range.
type Value struct {
	results.Spread
	Measured bool
	Unit     string
	Run      string // the run it is read from
	// Caveat says why the figure is not the server's plain measure: "client-bound" (the client
	// may have set the pace), a failing cell's error rate, or the integrity faults that keep it
	// out (then not Measured).
	Caveat string
	// ErrorPct is the error rate (errors per sent, %) of the requests the figure is read from,
	// shown beside it; Rated says it has one (a latency or requests/s; a ratio: its worse side).
	ErrorPct float64
	Rated    bool
	// Failing: the cell failed more of its requests than scenario.MaxFailedPct; its figures
	// are the speed of failing, shown as such and never set beside the study's.
	Failing bool
}

// Scenarios is what the findings need of the lab's scenarios, handed in as the registry is
// to reproduce, agent and report: every scenario, in order; a run judged again with this
// arena's rules (summary, verdicts, claims); the claims of a run merged from several.
type Scenarios struct {
	All      []scenario.Scenario
	Rejudge  func(*results.Run) error
	ClaimsOf func(*results.Run) []results.Claim
}

// Build reads the reproduction in dir: every run it made, judged again with this arena's
// rules, set against each of scs's studies.
func Build(rep *results.Reproduction, dir string, scs Scenarios) (*Findings, error) {
	f := &Findings{Reproduction: rep}
	for _, st := range rep.Steps {
		if st.Run == "" {
			continue
		}
		runDir, err := results.RunDir(dir, st.Run)
		if err != nil {
			return nil, err // a step's run id read from a file that is no id: no path is read
		}
		run, err := results.Load(runDir)
		if err != nil {
			continue // begun but never saved: nothing measured
		}
		if err := scs.Rejudge(run); err != nil {
			return nil, fmt.Errorf("run %s: %w", run.ID, err)
		}
		f.Runs = append(f.Runs, Run{Run: run, Dir: runDir, Step: st})
	}
	if len(f.Runs) > 0 {
		f.Env = f.Runs[0].Env
	}
	for _, sc := range scs.All {
		f.Studies = append(f.Studies, f.study(sc, scs.ClaimsOf))
	}
	return f, nil
}

// RepeatText says how many repeats a cell the reproduction's runs made, by part: "3
// repeat(s) a cell of the studies' forms, 1 of the matrix", or one count where every run made
// the same; the reproduction's own count before any run saved.
func (f *Findings) RepeatText() string {
	byPart := map[string]int{}
	var counts []int
	for _, r := range f.Runs {
		n := r.Scenario.Repeat
		byPart[r.Step.Part] = max(byPart[r.Step.Part], n)
		if !slices.Contains(counts, n) {
			counts = append(counts, n)
		}
	}
	switch {
	case len(counts) == 0:
		return fmt.Sprintf("%d repeat(s) a cell", f.Reproduction.Repeat)
	case len(counts) == 1 || byPart[results.PartStudies] == 0 || byPart[results.PartMatrix] == 0:
		return fmt.Sprintf("%d repeat(s) a cell", slices.Max(counts))
	}
	return fmt.Sprintf("%d repeat(s) a cell of the studies' forms, %d of the matrix", byPart[results.PartStudies], byPart[results.PartMatrix])
}

// study is one scenario's section; a study the reproduction did not run has its claims, all
// untested.
func (f *Findings) study(sc scenario.Scenario, claimsOf func(*results.Run) []results.Claim) Study {
	s := Study{Scenario: sc.Name(), Title: sc.Title(), Study: sc.Study()}
	var rp scenario.Reproduction
	if r, ok := sc.(scenario.Reproducible); ok {
		rp = r.Reproduction()
	}
	s.Setup = rp.Setup
	s.Notes = rp.Notes
	var studyRun, steadyRun, matrixRun *results.Run
	var studyRuns []*results.Run // the study's form, at each core count it ran at
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
		default:
			if studyRun == nil {
				studyRun = r.Run
			}
			studyRuns = append(studyRuns, r.Run)
		}
	}
	if len(s.Runs) == 0 {
		_, claims := sc.Judge(&results.Run{Scenario: results.ScenarioInfo{Name: sc.Name()}})
		for _, c := range claims {
			s.Claims = append(s.Claims, Claim{ID: c.ID, Text: c.Text, Verdict: results.ClaimUntested, Why: NotRun, RestsOn: "nothing: no run tested it"})
		}
		return s
	}
	s.Ours = oursOf(s.Runs[0].Run, rp.Stacks)
	s.Runtime = runtimeOf(s.Runs, rp.Stacks)
	if studyRun != nil {
		s.Repeat = studyRun.Scenario.Repeat
	}
	for _, r := range s.Runs {
		s.Limits = append(s.Limits, limitsOf(r.Run)...)
		if r.Step.Added != nil && s.Added == "" {
			s.Added = fmt.Sprintf("Added to the reproduction on %s, after it began (arena reproduce --resume … --add): measured by arena %s, the reproduction's first run by arena %s.",
				r.Step.Added.UTC().Format("2006-01-02 15:04 UTC"), orUnknown(r.Env.ArenaRev), orUnknown(f.Runs[0].Env.ArenaRev))
		}
	}
	every := everyContender(studyRun, matrixRun, claimsOf)
	for _, id := range claimIDs(studyRun, every) {
		c := Claim{ID: id, Study: claimOf(studyRun, id), Steady: claimOf(steadyRun, id), Every: claimOf(every, id)}
		c.decide(studyRun, every)
		c.ByCores = byCores(studyRuns, id)
		for _, p := range rp.Published {
			if p.Claim == id {
				fg := Figure{Published: p, Ours: read(studyRun, p), Steady: read(steadyRun, p)}
				fg.Differs = differs(p, fg.Ours, studyRun)
				c.Figures = append(c.Figures, fg)
			}
		}
		s.Claims = append(s.Claims, c)
	}
	return s
}

// What a claim's verdict rests on (Claim.Basis): the study's form on the study's stacks, or
// every contender the study's preset measured (the matrix's runs among them).
const (
	BasisStudy = "study"
	BasisEvery = "every"
)

// NotRun is why a claim of a study the reproduction did not run is untested.
const NotRun = "not run in this reproduction"

// decide gives the claim the verdict shown: the study's form on the study's stacks where it
// was tested there (what the study claimed, at the load it claimed it), else over every
// contender, else untested (or untested here, with the conditions the run did not give:
// never a mark against the claim).
func (c *Claim) decide(studyRun, every *results.Run) {
	for _, x := range []*results.Claim{c.Study, c.Every} {
		if x != nil {
			c.Text = x.Text
			break
		}
	}
	switch {
	case c.Study != nil && !results.Untested(c.Study.Verdict):
		c.Verdict, c.Why, c.Conditions, c.Basis = c.Study.Verdict, c.Study.Why, c.Study.Conditions, BasisStudy
		c.RestsOn = fmt.Sprintf("the study's form (preset %s%s) on the study's stacks: run %s", studyRun.Scenario.Preset, quick(studyRun), studyRun.ID)
	case c.Every != nil && !results.Untested(c.Every.Verdict):
		c.Verdict, c.Why, c.Conditions, c.Basis = c.Every.Verdict, c.Every.Why, c.Every.Conditions, BasisEvery
		c.RestsOn = "every contender measured at the study's preset: the study's stacks in its form, the others in the matrix's"
	default:
		c.Verdict = results.ClaimUntested
		c.RestsOn = "nothing: no run tested it"
		// Untested here (a run lacked a condition) says more than untested (nothing ran it).
		x := cmp.Or(untestedHere(c.Study), untestedHere(c.Every), c.Study, c.Every)
		if x == nil {
			return
		}
		c.Why, c.Conditions = x.Why, x.Conditions
		if x == c.Every {
			c.Basis = BasisEvery // the conditions the matrix's runs did not give
		}
		if x.Verdict == results.ClaimUntestedHere {
			c.Verdict = x.Verdict
			c.RestsOn = "nothing: the runs did not give the conditions the claim depends on" + unmet(x.Conditions)
		}
	}
}

// untestedHere is x when it is untested here, else nil.
func untestedHere(x *results.Claim) *results.Claim {
	if x != nil && x.Verdict == results.ClaimUntestedHere {
		return x
	}
	return nil
}

// unmet names the conditions the run did not give, for the summary table's one line: " (server
// cores ≥ 8, given 1)"; "" when none is recorded.
func unmet(conds []results.Condition) string {
	var out []string
	for _, c := range conds {
		if !c.Met {
			out = append(out, fmt.Sprintf("%s ≥ %s, given %s", c.Name, results.FormatFigure(c.Needs), results.FormatFigure(c.Given)))
		}
	}
	if len(out) == 0 {
		return ""
	}
	return " (" + strings.Join(out, "; ") + ")"
}

// byCores is the claim's verdict in each run of the study's form, one per server core count
// (the first run at each), fewest cores first: empty unless they ran at several counts.
func byCores(runs []*results.Run, id string) []AtCores {
	var out []AtCores
	for _, r := range runs {
		n := scenario.CountCPUs(r.Env.ServerCPUs)
		if slices.ContainsFunc(out, func(a AtCores) bool { return a.Cores == n }) {
			continue
		}
		at := AtCores{Cores: n, Verdict: results.ClaimUntested, Why: "not judged in this run", Run: r.ID}
		if c := claimOf(r, id); c != nil {
			at.Verdict, at.Why = c.Verdict, c.Why
		}
		out = append(out, at)
	}
	if len(out) < 2 {
		return nil
	}
	slices.SortStableFunc(out, func(a, b AtCores) int { return a.Cores - b.Cores })
	return out
}

// CoreChanges says where the claim's verdict changes with the server's core count, one
// sentence per change; empty when it ran at one count, or reads the same at every count.
func (c Claim) CoreChanges() []string {
	var out []string
	for i := 1; i < len(c.ByCores); i++ {
		a, b := c.ByCores[i-1], c.ByCores[i]
		if a.Verdict != b.Verdict {
			out = append(out, fmt.Sprintf("changes from %s at %s to %s at %s", a.Verdict, cores(a.Cores), b.Verdict, cores(b.Cores)))
		}
	}
	if len(out) == 0 && len(c.ByCores) > 1 {
		out = append(out, fmt.Sprintf("the same, %s, at every core count run (%s to %s)", c.ByCores[0].Verdict, cores(c.ByCores[0].Cores), cores(c.ByCores[len(c.ByCores)-1].Cores)))
	}
	return out
}

func cores(n int) string {
	if n == 1 {
		return "1 server core"
	}
	return fmt.Sprintf("%d server cores", n)
}

// ConditionText writes one condition as the page shows it: what the claim needs, where that
// comes from, and what the run gave.
func ConditionText(c results.Condition) string {
	met := "met"
	if !c.Met {
		met = "not met"
	}
	return fmt.Sprintf("%s: needs ≥ %s (%s); the run gave %s: %s", c.Name, results.FormatFigure(c.Needs), c.Source, results.FormatFigure(c.Given), met)
}

// differs is why ours is more than FarApart from the study's figure: the scenario's reason
// from the run's recorded conditions, or NoReason. "" where they are closer, where either
// side has no number, or where ours is a failing cell's (no figure to set beside theirs).
func differs(p scenario.Published, ours Value, run *results.Run) string {
	if !ours.Measured || ours.Failing || p.Value <= 0 || ours.Median <= 0 {
		return ""
	}
	if ratio := ours.Median / p.Value; ratio <= FarApart && ratio >= 1/FarApart {
		return ""
	}
	if p.Differs != nil {
		if why := p.Differs(run, ours.Median); why != "" {
			return why
		}
	}
	return NoReason
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
func everyContender(studyRun, matrixRun *results.Run, claimsOf func(*results.Run) []results.Claim) *results.Run {
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
	merged.Claims = claimsOf(merged)
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
	v := figure(run, p.Ours)
	v.Unit, v.Run = p.Ours.Unit, run.ID
	if !v.Measured || p.Per == nil {
		return v
	}
	bottom := figure(run, *p.Per)
	if !bottom.Measured || bottom.Median <= 0 || bottom.Min <= 0 {
		return Value{Unit: p.Ours.Unit, Run: run.ID, Caveat: bottom.Caveat}
	}
	if bottom.Caveat != "" && bottom.Caveat != v.Caveat {
		v.Caveat = strings.TrimPrefix(v.Caveat+"; "+bottom.Caveat, "; ")
	}
	top := v.Spread
	v.Spread = results.Spread{Median: top.Median / bottom.Median, Min: top.Min / bottom.Max, Max: top.Max / bottom.Min}
	v.Unit = "×"
	v.ErrorPct, v.Rated, v.Failing = max(v.ErrorPct, bottom.ErrorPct), v.Rated || bottom.Rated, v.Failing || bottom.Failing
	return v
}

// figure reads one of our figures from the run's summary, with its caveat and the error rate
// of its requests: a contender whose deliveries had integrity faults has no figure to set
// beside a study's (they are not the same work), a failing one is marked failing (the speed
// of failing), a client-bound one is marked.
func figure(run *results.Run, r scenario.Read) Value {
	for _, s := range run.Summary {
		if s.Contender != r.Contender || s.Level != r.Level || !slices.Contains(s.Outcomes, results.OutcomeOK) {
			continue
		}
		if s.Faulty() {
			return Value{Caveat: "integrity faults: " + results.FormatFaults(s.Faults)}
		}
		var v Value
		v.Spread, v.Measured = results.FigureOf(s, r.Figure, r.Tag)
		for _, t := range s.Tags {
			if t.Tag == r.Tag {
				v.ErrorPct, v.Rated = t.ErrorPct, true
			}
		}
		var caveats []string
		if pct, tag := s.FailedPct(); pct > scenario.MaxFailedPct {
			v.Failing = true
			caveats = append(caveats, fmt.Sprintf("%s: %s failed %s of its requests", scenario.Failing.Text, tag, results.FormatPct(pct)))
		}
		if s.ClientBnd {
			caveats = append(caveats, "client-bound")
		}
		v.Caveat = strings.Join(caveats, "; ")
		return v
	}
	return Value{}
}

// ErrorText is the value's error rate as the page shows it beside the figure; "" for a
// figure with none (CPU, memory, a delivery count) or not measured.
func (v Value) ErrorText() string {
	if !v.Rated || !v.Measured {
		return ""
	}
	return results.FormatPct(v.ErrorPct) + " errors"
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
