package lab

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/internal/verify"
)

// Lab is the experiment's fixed part: where it lives, what every contender shares, and
// where the client and the servers run.
type Lab struct {
	Root       string
	Settings   contender.Settings
	ServerCPUs []int
	ClientCPUs []int
	Progress   *Progress
	// Hurry is closed when the user presses Ctrl-C a second time: a contender still running
	// is killed at once instead of given its grace after SIGTERM, and the run saves what it
	// has. nil: never.
	Hurry <-chan struct{}
	// Agents, when set, drive every load from load agents instead of this process (arena
	// run --agents, --agent-addrs, --hosts): each level's load is dealt out among them and
	// their shares are merged exactly. nil: this process drives, as it always has.
	Agents *Agents
	// Exporters get each cell once it is saved (arena run --export): see export.go. nil: none.
	Exporters []Exporter
	exports   *exports // the run's cells on their way to the exporters
	// scenario and options are the run's, for the agents' jobs: each agent plans the level
	// itself from them.
	scenario string
	options  scenario.Options
	// target is the run's server when the lab did not start it (arena run --target).
	target *results.Target
	// needs are what the run's scenario sends and relies on, when it says (a target's run):
	// its verify checks only those, and its readiness is one of them.
	needs *verify.Needs
}

// RunOptions are one run: its spec, with the scenario and contenders it names found, and
// where it is written. The lab's CPUs and heap are the spec's (the caller opened the lab
// with them); the run records the spec as the lab ran it.
type RunOptions struct {
	Spec       results.RunSpec
	Scenario   scenario.Scenario
	Contenders []*contender.Manifest
	RunsDir    string // where runs/<id>/ goes
	Command    []string
	// Resume carries on a run stopped part-way, in its folder: its finished cells are kept
	// and not measured again; an interrupted one is measured again. A resume whose spec or
	// environment differs from the run's in what it measures is refused, unless ForceResume,
	// which the run's notes then record.
	Resume      *results.Run
	ForceResume bool
}

// Options are the spec's options for its scenario's plan.
func Options(s results.RunSpec) scenario.Options {
	return scenario.Options{Preset: s.Preset, Quick: s.Quick,
		Duration: time.Duration(s.DurationS * float64(time.Second)), Timeout: time.Duration(s.TimeoutS * float64(time.Second))}
}

// ErrNothingToMeasure means every contender failed to build or verify, or that no cell's
// load ran (NothingMeasured is one).
var ErrNothingToMeasure = errors.New("no contender passed build and verify: nothing was measured")

// NothingMeasured ends a run none of whose cells' load ran against a server (every one
// unready, unsupported, skipped, or unable to run its load): its cells, each with how it
// ended and why. A cell that crashed or fell silent under load measured something, and a run
// with one is not this.
type NothingMeasured struct{ Cells []results.Cell }

func (e *NothingMeasured) Error() string {
	lines := []string{fmt.Sprintf("nothing was measured: none of the run's %d cell(s) ran its load", len(e.Cells))}
	for _, c := range e.Cells {
		lines = append(lines, fmt.Sprintf("%s/%s r%d: %s: %s", c.Contender, c.Level, c.Repeat, c.Outcome.Status, c.Outcome.Detail))
	}
	return strings.Join(lines, "\n  ")
}

// Is makes a run that measured nothing one whose contenders had nothing to measure, as a
// reproduction's step reads it: the step is left failed and the next one begins.
func (e *NothingMeasured) Is(target error) bool { return target == ErrNothingToMeasure }

// nothingMeasured is the error of a run whose cells ran no load, or nil; a run with no cells
// (a resume with all done) measured what it kept.
func nothingMeasured(cells []results.Cell) error {
	for _, c := range cells {
		if results.Ran(c.Outcome.Status) {
			return nil
		}
	}
	if len(cells) == 0 {
		return nil
	}
	return &NothingMeasured{Cells: cells}
}

// unexplained are what an outcome that came with no detail says of itself: every cell that
// did not end ok says why, in its record and on the progress line.
var unexplained = map[string]string{
	results.OutcomeCrashed:      "the server's process ended during the cell; the lab recorded no more of why",
	results.OutcomeUnready:      "the server never became ready; the lab recorded no more of why",
	results.OutcomeInterrupted:  "stopped by the user",
	results.OutcomeError:        "the lab could not run the cell's load; it recorded no more of why",
	results.OutcomeUnsupported:  "the server cannot run this level",
	results.OutcomeSkipped:      "a lower level of the same ladder already broke",
	results.OutcomeOutOfMemory:  "the server died at its memory cap",
	results.OutcomeUnresponsive: "the server stopped answering the lab's polls",
}

// explained is o with a detail: its own, or what its status says when it came with none.
func explained(o results.Outcome) results.Outcome {
	if o.Status == results.OutcomeOK || strings.TrimSpace(o.Detail) != "" {
		return o
	}
	o.Detail = unexplained[o.Status]
	if o.Detail == "" {
		o.Detail = "it ended " + o.Status + "; the lab recorded no more of why"
	}
	return o
}

// Run carries out a run and returns its results and folder. Results are saved after every
// cell; when ctx ends (Ctrl-C) the cell under way is recorded as interrupted, the server
// is stopped, and what was finished is kept.
func (l *Lab) Run(ctx context.Context, o RunOptions) (*results.Run, string, error) {
	spec := l.specOf(o)
	plan, err := l.planOf(o.Scenario, spec)
	if err != nil {
		return nil, "", err
	}
	for _, note := range sweepStaleCgroups() {
		l.Progress.Note(note)
	}
	defer hostCgroups.restore()
	run, kept, err := l.newRun(o, &spec, plan)
	if err != nil {
		return nil, "", err
	}
	// A folder of its own for every run; one the caller named (a reproduction's step, a
	// resumed run) is the caller's to reuse.
	var dir string
	if o.Resume != nil || o.Spec.ID != "" {
		dir, err = reopenRunDir(o.RunsDir, spec.ID)
	} else {
		run.ID, dir, err = makeRunDir(o.RunsDir, spec.ID)
		spec.ID = run.ID
	}
	if err != nil {
		return l.failed(run, "", err)
	}

	if l.target = spec.Target; l.target != nil { // a server the lab did not start
		return l.measureTarget(ctx, o, spec, run, dir, plan)
	}
	measured := l.prepare(ctx, o.Contenders, spec, run, filepath.Join(dir, "logs"), features(plan.Levels))
	if o.Resume != nil {
		run.Env.Notes = append(run.Env.Notes, rebuiltNotes(o.Resume.Contenders, run.Contenders)...)
	}
	if err := results.Save(run, dir); err != nil {
		return l.unsaved(run, dir, err)
	}
	if ctx.Err() != nil {
		return l.finish(run, dir, o.Scenario, results.RunInterrupted)
	}
	if len(measured) == 0 {
		_, _, err := l.finish(run, dir, o.Scenario, results.RunFailed)
		return run, dir, errors.Join(ErrNothingToMeasure, err)
	}
	if err := PinSelf(l.ClientCPUs); err != nil {
		return run, dir, err
	}
	cells := cellsOf(plan, spec, measured, kept)
	if len(cells) == 0 { // a resumed run whose every cell was already finished
		return l.finish(run, dir, o.Scenario, results.RunComplete)
	}
	return l.measure(ctx, run, dir, o.Scenario, plan, spec.Port, cells)
}

// planOf is the scenario's plan for spec: its levels, those spec names, with its env; with
// agents, it checks that every level's load can be dealt out among them.
func (l *Lab) planOf(s scenario.Scenario, spec results.RunSpec) (scenario.Plan, error) {
	plan, err := s.Plan(Options(spec))
	if err != nil {
		return plan, err
	}
	if plan, err = plan.Filter(spec.Levels); err != nil {
		return plan, err
	}
	plan = plan.WithEnv(spec.Env)
	if l.Agents != nil {
		if err := splittable(l.Agents.Fleet, plan.Levels); err != nil {
			return plan, err
		}
		l.scenario, l.options = s.Name(), Options(spec)
	}
	return plan, nil
}

// newRun is the run's record before anything is measured, with the cells a resumed run kept
// (kept): its spec (given an id when it has none), environment, topology and scenario. A
// resume whose spec or environment differs from the run's is refused here.
func (l *Lab) newRun(o RunOptions, spec *results.RunSpec, plan scenario.Plan) (run *results.Run, kept []results.Cell, err error) {
	started := time.Now()
	spec.ID = cmp.Or(spec.ID, started.Format("20060102-150405")+"-"+o.Scenario.Name())
	env := Environment(l.Root, l.Settings, l.ServerCPUs, l.ClientCPUs)
	var forced []string
	if o.Resume != nil {
		if forced, err = resumable(o.Resume, *spec, plan.Preset, env, o.ForceResume); err != nil {
			return nil, nil, err
		}
		spec.ID, started, kept = o.Resume.ID, o.Resume.Started, finishedCells(o.Resume.Cells)
	}
	run = &results.Run{
		Schema: results.SchemaVersion, ID: spec.ID, Command: o.Command, Started: started, Status: results.RunRunning,
		Spec: spec, ForcedResume: forced,
		Scenario: results.ScenarioInfo{
			Name: o.Scenario.Name(), Title: o.Scenario.Title(), Study: o.Scenario.Study(),
			Preset: plan.Preset, Quick: spec.Quick, Repeat: spec.Repeat, Notes: plan.Notes, Profiled: spec.Profile,
		},
		Env:   env,
		Cells: kept,
	}
	if l.Agents != nil {
		topo := l.Agents.Topology
		run.Env.Topology = &topo
	}
	if o.Resume != nil {
		run.Command = o.Resume.Command
		run.Env.Notes = append(run.Env.Notes, resumeNote(o.Resume, len(kept), forced))
	}
	run.Scenario.Headline = plan.Headline
	run.Scenario.Duration, run.Scenario.Timeout = shared(plan.Levels)
	for _, lv := range plan.Levels {
		run.Scenario.Levels = append(run.Scenario.Levels, scenario.Describe(lv))
	}
	return run, kept, nil
}

// cellsOf is what is left to measure: each level × repeat × contender not among kept,
// contenders interleaved so that drift hits them alike.
func cellsOf(plan scenario.Plan, spec results.RunSpec, measured []*contender.Manifest, kept []results.Cell) []cellPlan {
	var cells []cellPlan
	for _, lv := range plan.Levels {
		for r := 1; r <= spec.Repeat; r++ {
			for _, m := range measured {
				if !hasCell(kept, m.Name, lv.Name, r) {
					cells = append(cells, cellPlan{m: m, level: lv, repeat: r, profile: spec.Profile})
				}
			}
		}
	}
	return cells
}

// measure runs cells one after the other into run, saving it in dir after each, and finishes
// the run. A contender's ladder (a level group) stops at its first broken level, the
// resumed run's kept cells included.
func (l *Lab) measure(ctx context.Context, run *results.Run, dir string, s scenario.Scenario, plan scenario.Plan, port int, cells []cellPlan) (*results.Run, string, error) {
	l.Progress.Begin(len(cells), cells[0].level.Expected()+15*time.Second)
	broken := map[string]bool{} // contender and group whose ladder broke
	for _, c := range run.Cells {
		if lv, ok := plan.Level(c.Level); ok && plan.Broken != nil && lv.Group != "" && plan.Broken(c) {
			broken[c.Contender+"\x00"+lv.Group] = true
		}
	}
	for i, c := range cells {
		l.Progress.CellStart(i, c.String())
		var cell results.Cell
		switch feature := c.level.Feature(); {
		case l.target != nil && TargetRefuses(l.target, c.level) != "": // before its features: verify left it out
			cell = c.notRun(results.OutcomeUnsupported, TargetRefuses(l.target, c.level))
		case feature != "" && !c.m.Has(feature):
			cell = c.notRun(results.OutcomeUnsupported, fmt.Sprintf("%s does not implement %q (see its README): not measured", c.m.Name, feature))
		case l.unreachable(c.m) != "":
			cell = c.notRun(results.OutcomeUnsupported, l.unreachable(c.m))
		case broken[c.m.Name+"\x00"+c.level.Group]:
			cell = c.notRun(results.OutcomeSkipped, "a lower level of "+c.level.Group+" already broke")
		default:
			cell = l.runCell(ctx, c, dir, port)
			if plan.Broken != nil && c.level.Group != "" && plan.Broken(cell) {
				broken[c.m.Name+"\x00"+c.level.Group] = true
			}
		}
		cell.Outcome = explained(cell.Outcome)
		run.Cells = append(run.Cells, cell)
		noteUncapped(run, cell)
		l.Progress.CellDone(i, cell)
		if err := results.Save(run, dir); err != nil {
			return l.unsaved(run, dir, err)
		}
		l.exportCell(run, cell)
		if ctx.Err() != nil {
			return l.finish(run, dir, s, results.RunInterrupted)
		}
	}
	if err := nothingMeasured(run.Cells); err != nil {
		_, _, ferr := l.finish(run, dir, s, results.RunFailed)
		return run, dir, errors.Join(err, ferr)
	}
	return l.finish(run, dir, s, results.RunComplete)
}

// specOf is the run's spec as the lab runs it: its CPUs and heap, the contenders found, at
// least one repeat.
func (l *Lab) specOf(o RunOptions) results.RunSpec {
	spec := o.Spec
	spec.Scenario = o.Scenario.Name()
	spec.ServerCPUs, spec.ClientCPUs, spec.HeapMB = FormatCPUs(l.ServerCPUs), FormatCPUs(l.ClientCPUs), l.Settings.HeapMB
	spec.Contenders = nil
	for _, m := range o.Contenders {
		spec.Contenders = append(spec.Contenders, m.Name)
	}
	spec.Repeat = max(spec.Repeat, 1)
	spec.Levels = slices.Clone(spec.Levels)
	return spec
}

// prepare builds and verifies each contender, recording both; it returns those fit to measure:
// those that passed the groups of checks the plan's features need.
func (l *Lab) prepare(ctx context.Context, ms []*contender.Manifest, spec results.RunSpec, run *results.Run, logDir string, features []string) []*contender.Manifest {
	builder := l.Builder()
	var measured []*contender.Manifest
	for _, m := range ms {
		info := results.Contender{Name: m.Name, Description: m.Description, Stack: m.Stack, Model: m.Model,
			Runtime: m.Runtime, Knobs: m.Knobs, Notes: m.Notes, Verified: results.VerifySkipped}
		if ctx.Err() != nil {
			run.Contenders = append(run.Contenders, info)
			continue
		}
		l.Progress.Step("build " + m.Name)
		b, err := builder.Build(ctx, m, spec.Rebuild)
		info.BuildHash = b.Hash
		if err != nil {
			info.Verified = results.VerifyFailedBecause("build: " + firstLine(err.Error()))
			l.Progress.Fail(err)
			run.Contenders = append(run.Contenders, info)
			continue
		}
		l.Progress.Done(cachedOr(b.Built, b.Duration))
		groups := VerifyGroups(m, features)
		rep, _, err := l.VerifyCached(ctx, m, b.Hash, logDir, spec.Reverify, groups)
		switch {
		case err != nil:
			info.Verified = results.VerifyFailedBecause(err.Error())
			l.Progress.Fail(err)
		case !rep.PassedGroups(groups...):
			info.Verified = results.VerifyFailedBecause(strings.Join(rep.Failures(), "; "))
			l.Progress.Fail(fmt.Errorf("%s does not keep the contract this scenario needs (%s), so it is not measured:\n  %s", m.Name, strings.Join(groups, ", "), strings.Join(rep.Failures(), "\n  ")))
		default:
			// Measured: the groups this scenario needs passed. A group it does not need may
			// have failed (a kept report of every group); verified says so.
			info.Verified = results.VerifyPassed
			if !rep.Passed() {
				info.Verified = results.VerifyFailedBecause(strings.Join(rep.Failures(), "; "))
			}
			measured = append(measured, m)
		}
		run.Contenders = append(run.Contenders, info)
	}
	return measured
}

func cachedOr(built bool, took time.Duration) string {
	if !built {
		return "up to date"
	}
	return "built in " + took.Round(time.Second).String()
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// finish summarises, judges and saves the run.
func (l *Lab) finish(run *results.Run, dir string, sc scenario.Scenario, status string) (*results.Run, string, error) {
	now := time.Now()
	run.Finished, run.Status = &now, status
	summary, err := results.Summarise(run.Cells)
	if err != nil {
		return run, dir, err
	}
	run.Summary = summary
	run.Verdicts, run.Claims = sc.Judge(run)
	l.endExports(run) // bounded: what could not be sent becomes a note
	if err := results.Save(run, dir); err != nil {
		return l.unsaved(run, dir, err)
	}
	return run, dir, nil
}

// noteUncapped says in the run's notes when a cell that asked for a memory cap got only its
// heap's, and why: a figure of memory without the cap is no figure under it.
func noteUncapped(run *results.Run, cell results.Cell) {
	if m := cell.Memory; m != nil && m.By == results.MemoryByHeap {
		note := "memory cap: no cgroup could be made, so only the runtime's heap limit held the contenders (" + m.Why + ")"
		if !slices.Contains(run.Env.Notes, note) {
			run.Env.Notes = append(run.Env.Notes, note)
		}
	}
}

// makeRunDir makes runs/<id>/ with its logs and hlog folders: a folder of its own, even when
// another run started in the same second (id-2, id-3, …).
func makeRunDir(runsDir, id string) (string, string, error) {
	if err := os.MkdirAll(runsDir, 0o755); err != nil {
		return "", "", fmt.Errorf("cannot make the runs folder %s: %w", runsDir, err)
	}
	for n := 1; n < 1000; n++ {
		name := id
		if n > 1 {
			name = fmt.Sprintf("%s-%d", id, n)
		}
		dir := filepath.Join(runsDir, name)
		err := os.Mkdir(dir, 0o755)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", "", fmt.Errorf("cannot make the run's folder %s: %w", dir, err)
		}
		for _, sub := range []string{"logs", "hlog"} {
			if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
				return "", "", fmt.Errorf("cannot make %s: %w", filepath.Join(dir, sub), err)
			}
		}
		return name, dir, nil
	}
	return "", "", fmt.Errorf("cannot make a folder for run %s in %s: 999 of that name exist", id, runsDir)
}

// reopenRunDir is the folder runs/<id>/ a caller named, with its logs and hlog folders.
func reopenRunDir(runsDir, id string) (string, error) {
	dir := filepath.Join(runsDir, id)
	for _, sub := range []string{"logs", "hlog"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return "", fmt.Errorf("cannot reopen the run's folder %s: %w", dir, err)
		}
	}
	return dir, nil
}

// failed ends a run that could not go on: its status says so, and err why.
func (l *Lab) failed(run *results.Run, dir string, err error) (*results.Run, string, error) {
	markFailed(run)
	return run, dir, err
}

// markFailed ends run now with the failed status.
func markFailed(run *results.Run) {
	now := time.Now()
	run.Finished, run.Status = &now, results.RunFailed
}

// unsaved ends a run whose results could not be saved in dir: nothing measured after this
// could be kept either. So that nothing finished is lost, the results go to a folder under
// the system's temporary one, and the error says where.
func (l *Lab) unsaved(run *results.Run, dir string, err error) (*results.Run, string, error) {
	markFailed(run)
	why := fmt.Errorf("cannot save the results in %s, so the run stopped with %d cell(s) measured: %w", dir, len(run.Cells), err)
	// A new folder of a name nobody else chose: a fixed name under the temp folder is one
	// another user could have made first, or linked to a folder of theirs.
	spare, mkErr := os.MkdirTemp("", "arena-"+cmp.Or(run.ID, "run")+"-")
	if mkErr == nil && results.Save(run, spare) == nil {
		return run, spare, fmt.Errorf("%w; what was measured is kept in %s", why, spare)
	}
	return run, dir, why
}

// shared is the measured load's length and per-request timeout in seconds, when every level
// has the same (0 otherwise, and for loads that have none, such as a count of requests).
func shared(levels []scenario.Level) (duration, timeout float64) {
	for i, lv := range levels {
		d := lv.Load.Describe()
		if i == 0 {
			duration, timeout = d.Duration.Seconds(), d.Timeout.Seconds()
			continue
		}
		if d.Duration.Seconds() != duration {
			duration = 0
		}
		if d.Timeout.Seconds() != timeout {
			timeout = 0
		}
	}
	return duration, timeout
}
