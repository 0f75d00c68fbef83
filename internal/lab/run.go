package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// Sampling periods: the probe at 4 Hz, the latency timeline and .hlog at 1 s.
const (
	probePeriod    = 250 * time.Millisecond
	windowInterval = time.Second
)

// clientBusyShare of the client's cores, or lateShare of its sends, flags a cell as
// client-bound: the client, not the server, may have set its pace.
const (
	clientBusyShare = 0.90
	lateShare       = 0.01
	minLate         = 5
)

// capHeadroomMB is what a memory cap allows beyond the heap: a runtime's own needs (code,
// metaspace, thread stacks, direct buffers) without which a healthy server would die.
const capHeadroomMB = 512

// Lab is the experiment's fixed part: where it lives, what every contender shares, and
// where the client and the servers run.
type Lab struct {
	Root       string
	Settings   contender.Settings
	ServerCPUs []int
	ClientCPUs []int
	Progress   *Progress
}

// RunOptions are one run's choices.
type RunOptions struct {
	Scenario   scenario.Scenario
	Options    scenario.Options
	Contenders []*contender.Manifest
	Repeat     int
	Rebuild    bool
	Reverify   bool
	Levels     []string // only these levels of the plan (all when empty)
	Port       int      // 0: a free port per start
	RunsDir    string   // where runs/<id>/ goes
	Command    []string
}

// ErrNothingToMeasure means every contender failed to build or verify.
var ErrNothingToMeasure = errors.New("no contender passed build and verify: nothing was measured")

// Run carries out a run and returns its results and folder. Results are saved after every
// cell; when ctx ends (Ctrl-C) the cell under way is recorded as interrupted, the server
// is stopped, and what was finished is kept.
func (l *Lab) Run(ctx context.Context, o RunOptions) (*results.Run, string, error) {
	plan, err := o.Scenario.Plan(o.Options)
	if err != nil {
		return nil, "", err
	}
	if plan, err = plan.Filter(o.Levels); err != nil {
		return nil, "", err
	}
	if o.Repeat < 1 {
		o.Repeat = 1
	}
	started := time.Now()
	id := started.Format("20060102-150405") + "-" + o.Scenario.Name()
	dir := filepath.Join(o.RunsDir, id)
	for _, sub := range []string{"logs", "hlog"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, "", err
		}
	}
	run := &results.Run{
		Schema: results.SchemaVersion, ID: id, Command: o.Command, Started: started, Status: "running",
		Scenario: results.ScenarioInfo{
			Name: o.Scenario.Name(), Title: o.Scenario.Title(), Study: o.Scenario.Study(),
			Preset: plan.Preset, Quick: o.Options.Quick, Repeat: o.Repeat, Notes: plan.Notes,
		},
		Env: Environment(l.Root, l.Settings, l.ServerCPUs, l.ClientCPUs),
	}
	for _, lv := range plan.Levels {
		run.Scenario.Levels = append(run.Scenario.Levels, scenario.Describe(lv))
		if lv.Open != nil {
			run.Scenario.Duration, run.Scenario.Timeout = lv.Open.Duration.Seconds(), lv.Open.Timeout.Seconds()
		} else if lv.Closed != nil {
			run.Scenario.Duration, run.Scenario.Timeout = lv.Closed.Duration.Seconds(), lv.Closed.Timeout.Seconds()
		}
	}

	measured := l.prepare(ctx, o, run, filepath.Join(dir, "logs"))
	if err := results.Save(run, dir); err != nil {
		return run, dir, err
	}
	if ctx.Err() != nil {
		return l.finish(run, dir, o.Scenario, "interrupted")
	}
	if len(measured) == 0 {
		_, _, _ = l.finish(run, dir, o.Scenario, "failed")
		return run, dir, ErrNothingToMeasure
	}
	if err := PinSelf(l.ClientCPUs); err != nil {
		return run, dir, err
	}

	var cells []cellPlan
	for _, lv := range plan.Levels {
		for r := 1; r <= o.Repeat; r++ {
			for _, m := range measured { // contenders interleaved, so drift hits them alike
				cells = append(cells, cellPlan{m: m, level: lv, repeat: r})
			}
		}
	}
	l.Progress.Begin(len(cells), cells[0].level.Expected()+15*time.Second)
	broken := map[string]bool{} // contender and group whose ladder broke
	for i, c := range cells {
		l.Progress.CellStart(i, c.String())
		var cell results.Cell
		switch {
		case c.level.Driver != nil && !c.m.Has(c.level.Driver.Feature()):
			cell = c.notRun(results.OutcomeUnsupported, fmt.Sprintf("%s does not implement %q (see its README): not measured", c.m.Name, c.level.Driver.Feature()))
		case broken[c.m.Name+"\x00"+c.level.Group]:
			cell = c.notRun(results.OutcomeSkipped, "a lower level of "+c.level.Group+" already broke")
		default:
			cell = l.runCell(ctx, c, dir, o.Port)
			if plan.Broken != nil && c.level.Group != "" && plan.Broken(cell) {
				broken[c.m.Name+"\x00"+c.level.Group] = true
			}
		}
		run.Cells = append(run.Cells, cell)
		l.Progress.CellDone(i, cell)
		if err := results.Save(run, dir); err != nil {
			return run, dir, err
		}
		if ctx.Err() != nil {
			return l.finish(run, dir, o.Scenario, "interrupted")
		}
	}
	return l.finish(run, dir, o.Scenario, "complete")
}

// prepare builds and verifies each contender, recording both; it returns those fit to measure.
func (l *Lab) prepare(ctx context.Context, o RunOptions, run *results.Run, logDir string) []*contender.Manifest {
	builder := &contender.Builder{CacheDir: filepath.Join(l.Root, ".arena", "builds"), Settings: l.Settings}
	var measured []*contender.Manifest
	for _, m := range o.Contenders {
		info := results.Contender{Name: m.Name, Description: m.Description, Stack: m.Stack, Model: m.Model,
			Runtime: m.Runtime, Knobs: m.Knobs, Notes: m.Notes, Verified: "skipped"}
		if ctx.Err() != nil {
			run.Contenders = append(run.Contenders, info)
			continue
		}
		l.Progress.Step("build " + m.Name)
		b, err := builder.Build(ctx, m, o.Rebuild)
		info.BuildHash = b.Hash
		if err != nil {
			info.Verified = "failed: build: " + firstLine(err.Error())
			l.Progress.Fail(err)
			run.Contenders = append(run.Contenders, info)
			continue
		}
		l.Progress.Done(cachedOr(b.Built, b.Duration))
		l.Progress.Step("verify " + m.Name)
		rep, cached, err := l.VerifyCached(ctx, m, b.Hash, logDir, o.Reverify)
		switch {
		case err != nil:
			info.Verified = "failed: " + err.Error()
			l.Progress.Fail(err)
		case !rep.Passed():
			info.Verified = "failed: " + strings.Join(rep.Failures(), "; ")
			l.Progress.Fail(fmt.Errorf("%s does not keep the contract, so it is not measured:\n  %s", m.Name, strings.Join(rep.Failures(), "\n  ")))
		default:
			info.Verified = "passed"
			measured = append(measured, m)
			if cached {
				l.Progress.Done("passed (this build, earlier)")
			} else {
				l.Progress.Done(fmt.Sprintf("passed %d checks", len(rep.Checks)))
			}
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
	return run, dir, results.Save(run, dir)
}

// cellPlan is one cell to run.
type cellPlan struct {
	m      *contender.Manifest
	level  scenario.Level
	repeat int
}

func (c cellPlan) String() string {
	return fmt.Sprintf("%s · %s · repeat %d", c.m.Name, c.level.Name, c.repeat)
}

// notRun records a cell that was not measured, and why.
func (c cellPlan) notRun(status, why string) results.Cell {
	return results.Cell{Contender: c.m.Name, Level: c.level.Name, Repeat: c.repeat, Started: time.Now(),
		Outcome: results.Outcome{Status: status, Detail: why}}
}

func (c cellPlan) file(dir, sub, ext string) string {
	return filepath.Join(dir, sub, fmt.Sprintf("%s-%s-r%d.%s", c.m.Name, c.level.Name, c.repeat, ext))
}

// runCell starts the contender, drives the level's load while probing server and client,
// stops the server and returns the record. It never fails: what went wrong is the outcome.
func (l *Lab) runCell(ctx context.Context, c cellPlan, dir string, port int) results.Cell {
	vars := map[string]string{}
	for k, v := range c.level.Env {
		if c.m.Honours(k) { // a variable a contender ignores is not passed, nor reported as applied
			vars[k] = v
		}
	}
	cell := results.Cell{Contender: c.m.Name, Level: c.level.Name, Repeat: c.repeat, Env: vars, Started: time.Now(),
		Outcome: results.Outcome{Status: results.OutcomeOK}}
	var ds *SelfProc
	if c.level.Downstream != nil {
		var err error
		if ds, err = StartDownstream(l.ClientCPUs, c.level.Downstream.Delay, c.file(dir, "logs", "downstream.log")); err != nil {
			cell.Outcome = results.Outcome{Status: results.OutcomeError, Detail: err.Error()}
			return cell
		}
		defer ds.Stop()
		vars["DOWNSTREAM_URL"] = ds.URL() // every contender honours it: the contract's /data/{id}
	}
	in, err := contender.Start(c.m, contender.StartOptions{
		Settings: l.Settings, CPUs: FormatCPUs(l.ServerCPUs), Port: port, Vars: vars, LogPath: c.file(dir, "logs", "log"),
	})
	if err != nil {
		cell.Outcome = results.Outcome{Status: results.OutcomeError, Detail: err.Error()}
		return cell
	}
	cell.Port = in.Port
	var cg *memCgroup
	if c.level.MemoryCap {
		capMB := l.Settings.HeapMB + capHeadroomMB
		var err error
		if cg, err = newMemCgroup(c.m.Name, capMB); err != nil {
			cg = nil
			cell.Memory = &results.Memory{CapMB: float64(l.Settings.HeapMB), By: "heap"}
			l.Progress.Note("memory cap: the heap only (" + err.Error() + ")")
		} else if err := cg.add(in.Pid()); err != nil {
			cg.remove()
			cg = nil
			cell.Memory = &results.Memory{CapMB: float64(l.Settings.HeapMB), By: "heap"}
			l.Progress.Note("memory cap: the heap only (" + err.Error() + ")")
		} else {
			defer cg.remove() // once the server is stopped; its record is taken before
		}
	}
	if err := in.WaitReady(ctx, readyTimeout); err != nil {
		in.Stop()
		cell.Outcome = exitOutcome(in, results.OutcomeUnready, err.Error())
		if ctx.Err() != nil {
			cell.Outcome.Status = results.OutcomeInterrupted
		}
		return cell
	}
	doer := load.NewHTTPDoer(in.Addr(), 0)
	if len(c.level.Warmup) > 0 {
		l.Progress.Step("warm-up")
		for _, w := range c.level.Warmup {
			w.Run(ctx, doer, load.NewRecorder(time.Now(), nil), windowInterval)
		}
		doer.CloseIdle()
		l.Progress.Done("done")
	}

	// The load stops early if the server dies: its remaining requests would only fail.
	loadCtx, cancelLoad := context.WithCancel(ctx)
	defer cancelLoad()
	go func() {
		select {
		case <-in.Exited():
			cancelLoad()
		case <-loadCtx.Done():
		}
	}()

	start := time.Now()
	rel, _ := filepath.Rel(dir, c.file(dir, "hlog", "hlog"))
	hl, err := load.CreateHlog(c.file(dir, "hlog", "hlog"), start, fmt.Sprintf("arena %s, %s", c, in.Addr()))
	var sink load.IntervalSink
	if err == nil {
		sink, cell.Hlog = hl, rel
		defer hl.Close()
	}
	rec := load.NewRecorder(start, sink)
	serverProbe := probe.Start(in.Pid(), start, probePeriod)
	clientProbe := probe.StartAlone(os.Getpid(), start, probePeriod)
	var dsProbe *probe.Probe
	if ds != nil {
		dsProbe = probe.Start(ds.Pid(), start, probePeriod)
	}
	stopTicker := l.Progress.Tick(start, c.level.Expected())
	var scheduled time.Duration
	var driveErr error
	switch {
	case c.level.Open != nil:
		c.level.Open.Run(loadCtx, doer, rec, windowInterval)
		scheduled = c.level.Open.Duration
	case c.level.Closed != nil:
		c.level.Closed.Run(loadCtx, doer, rec, windowInterval)
	case c.level.Driver != nil:
		stopRotate := load.RotateEvery(rec, windowInterval)
		if m, ok := c.level.Driver.(scenario.Measurer); ok {
			cell.Stream, driveErr = m.Measure(loadCtx, in.Addr(), rec)
		} else {
			driveErr = c.level.Driver.Run(loadCtx, in.Addr(), rec)
		}
		stopRotate()
	}
	elapsed := time.Since(start)
	cancelLoad()
	stopTicker()
	crashed := false // whether it died before the lab stopped it
	select {
	case <-in.Exited():
		crashed = true
	default:
	}
	serverSamples, clientSamples := serverProbe.Stop(), clientProbe.Stop()
	if dsProbe != nil {
		samples := dsProbe.Stop()
		cell.Downstream = &results.Resources{Summary: probe.Summarise(samples, 0, 0), Timeline: samples, CPUs: FormatCPUs(l.ClientCPUs)}
	}
	doer.CloseIdle()
	took, killed := in.Stop()
	if cg != nil {
		cell.Memory = cg.record()
	}

	cell.Seconds = elapsed.Seconds()
	cell.Server = results.Resources{Summary: probe.Summarise(serverSamples, 0, 0), Timeline: serverSamples, CPUs: FormatCPUs(l.ServerCPUs)}
	cell.Client = results.Resources{Summary: probe.Summarise(clientSamples, 0, 0), Timeline: clientSamples, CPUs: FormatCPUs(l.ClientCPUs)}
	perSecond := elapsed
	if scheduled > 0 {
		perSecond = scheduled // an open loop's throughput is over its schedule, not its drain
	}
	for _, t := range rec.Results() {
		cell.Tags = append(cell.Tags, tagRecord(t, perSecond))
	}
	cell.ClientBound, cell.ClientBoundWhy = clientBound(cell, c.level, len(l.ClientCPUs))
	switch {
	case crashed && (outOfMemory(in.Tail()) || cg != nil && cg.record().OOMKills > 0):
		cell.Outcome = exitOutcome(in, results.OutcomeOutOfMemory, fmt.Sprintf("%s ran out of memory: %s during the load, %.1f s in", c.m.Name, in.Describe(), elapsed.Seconds()))
	case crashed:
		cell.Outcome = exitOutcome(in, results.OutcomeCrashed, fmt.Sprintf("%s %s during the load, %.1f s in", c.m.Name, in.Describe(), elapsed.Seconds()))
	case ctx.Err() != nil:
		cell.Outcome = results.Outcome{Status: results.OutcomeInterrupted, Detail: "stopped by the user; figures cover the part that ran"}
	case driveErr != nil:
		cell.Outcome = results.Outcome{Status: results.OutcomeError, Detail: driveErr.Error(), LogTail: in.Tail()}
	case killed:
		cell.Outcome.Detail = fmt.Sprintf("did not exit within %s of SIGTERM: killed", contender.StopGrace)
	default:
		cell.Outcome.Detail = fmt.Sprintf("stopped in %s", took.Round(time.Millisecond))
	}
	return cell
}

func exitOutcome(in *contender.Instance, status, detail string) results.Outcome {
	o := results.Outcome{Status: status, Detail: detail, LogTail: in.Tail()}
	if code, sig, ok := in.ExitState(); ok {
		o.ExitCode, o.Signal = code, sig
	}
	return o
}

func tagRecord(t load.TagResult, over time.Duration) results.Tag {
	out := results.Tag{
		TagStats: t.TagStats, Timeline: t.Timeline,
		Response: results.LatencyOf(t.Response), Service: results.LatencyOf(t.Service),
	}
	if over > 0 {
		out.RPS = float64(t.Completed) / over.Seconds()
	}
	out.ResponseHist, _ = results.EncodeHist(t.Response) // an encoding error leaves the summary, loses only the merge
	out.ServiceHist, _ = results.EncodeHist(t.Service)
	return out
}

// clientBound flags a cell whose client used ≥ 90 % of its cores, or sent more than 1 %
// (and at least minLate) of its unbounded open-loop hits late: either way the client may
// have set the pace. Lateness is judged over all such streams together, so that one late
// probe in a 1/s stream does not condemn a cell.
func clientBound(cell results.Cell, level scenario.Level, clientCores int) (bool, string) {
	var why []string
	if busy := cell.Client.Summary.CPUPctMean; busy >= clientBusyShare*100*float64(clientCores) {
		why = append(why, fmt.Sprintf("client CPU %.0f%% of %d core(s)", busy, clientCores))
	}
	if level.Open != nil {
		var late, sent int64
		var worst float64
		for _, s := range level.Open.Streams {
			if s.Connections > 0 {
				continue // a bounded stream's lateness is the server's backlog, by design
			}
			for _, t := range cell.Tags {
				if t.Tag == s.Tag {
					late, sent, worst = late+t.Late, sent+t.Sent, max(worst, t.MaxLateMs)
				}
			}
		}
		if late >= minLate && float64(late) > lateShare*float64(sent) {
			why = append(why, fmt.Sprintf("%d of %d sends late (max %.0f ms)", late, sent, worst))
		}
	}
	return len(why) > 0, strings.Join(why, "; ")
}
