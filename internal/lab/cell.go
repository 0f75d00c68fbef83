package lab

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/arena-lab/arena/internal/chat"
	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/postgres"
	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/profile"
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

// cellPlan is one cell to run.
type cellPlan struct {
	m       *contender.Manifest
	level   scenario.Level
	repeat  int
	profile bool // record the contender's CPU profile over the load (--profile)
}

func (c cellPlan) String() string {
	return fmt.Sprintf("%s · %s · repeat %d", c.m.Name, c.level.Name, c.repeat)
}

// notRun records a cell that was not measured, and why.
func (c cellPlan) notRun(status, why string) results.Cell {
	return results.Cell{Contender: c.m.Name, Level: c.level.Name, Repeat: c.repeat, Started: time.Now(),
		Outcome: results.Outcome{Status: status, Detail: why}}
}

// base names the cell's files: contender-level-rN.
func (c cellPlan) base() string { return fmt.Sprintf("%s-%s-r%d", c.m.Name, c.level.Name, c.repeat) }

func (c cellPlan) file(dir, sub, ext string) string {
	return filepath.Join(dir, sub, c.base()+"."+ext)
}

// runCell starts the contender, warms it, drives the level's load while probing it, stops
// it and returns the record: start → warm → drive → stop → classify. A watchdog polls its
// readiness from its start to the end of the load, and a death in its group ends the warm-up
// or the load at once. It never fails: what went wrong is the outcome.
func (l *Lab) runCell(ctx context.Context, c cellPlan, dir string, port int) results.Cell {
	if l.target != nil {
		return l.runTargetCell(ctx, c, dir)
	}
	cell := results.Cell{Contender: c.m.Name, Level: c.level.Name, Repeat: c.repeat, Env: c.vars(), Started: time.Now(),
		Outcome: results.Outcome{Status: results.OutcomeOK}}
	prof, perr := c.profiler(dir, l.Settings.JDK)
	if perr != nil {
		cell.Profile = perr
	}
	srv, err := l.start(ctx, c, dir, port, cell.Env, prof)
	if srv != nil {
		cell.Port = srv.in.Port
		if srv.db != nil {
			cell.DatabaseServer = srv.db.Describe()
		}
		if srv.mem != nil {
			defer srv.mem.release() // once the server is stopped; its record is taken before
		}
	}
	if err != nil {
		cell.Outcome = err.outcome
		return cell
	}
	defer srv.stopHelpers()
	endHurry := l.killOnHurry(srv.in)
	live, endLive := untilExit(ctx, srv.in)
	defer endLive()
	dog := watch(srv.in.Addr(), results.SilenceLimit(c.level.Load.Describe().Timeout), func(since time.Time) {
		l.Progress.Note(fmt.Sprintf("%s stopped answering (nothing since %s)", c.m.Name, since.Format("15:04:05")))
	})
	var m measurement
	if l.warm(live, c, srv) {
		m = l.drive(live, c, dir, srv, prof)
	} else {
		m.crashed, m.inWarmup = true, true
	}
	m.silentSince, m.silent = dog.Stop()
	cell.Runtime = l.readRuntime(ctx, c, srv)
	took, killed := srv.in.Stop()
	m.hurried = endHurry()
	cell.PutHeap(readHeap(c, dir, m)) // after the stop: the log holds every collection of the load
	if srv.mem != nil {
		cell.Memory = srv.mem.record()
	}
	if prof != nil && !m.inWarmup {
		l.Progress.Step("profile")
		cell.Profile = prof.Fold() // after the stop: a JVM and Node write theirs on exit
		cell.ClientProfile = prof.ClientProfile()
		l.Progress.Done(fmt.Sprintf("%d samples", cell.Profile.Samples))
	}
	if err := l.record(&cell, c, m); err != nil && m.err == nil {
		m.err = err
	}
	cell.Outcome = classify(ctx, c, srv, m, took)
	if cell.Outcome.Killed = killed; killed {
		cell.Outcome.Detail += fmt.Sprintf("; it did not exit within %s of SIGTERM, and its group was killed", contender.StopGrace)
	}
	return cell
}

// untilExit is ctx, ended early when the contender's main process exits: a load against a
// dead server would only count failures.
func untilExit(ctx context.Context, in *contender.Instance) (context.Context, context.CancelFunc) {
	live, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-in.Exited():
			cancel()
		case <-live.Done():
		}
	}()
	return live, cancel
}

// killOnHurry kills the contender's group at once when the user presses Ctrl-C a second time
// (Lab.Hurry), rather than wait out its grace after SIGTERM; the returned func ends the watch
// and says whether it killed.
func (l *Lab) killOnHurry(in *contender.Instance) (end func() bool) {
	done, watched := make(chan struct{}), make(chan bool, 1)
	go func() {
		select {
		case <-l.Hurry:
			watched <- in.Signal(syscall.SIGKILL) == nil
		case <-done:
			watched <- false
		}
	}()
	return func() bool { close(done); return <-watched }
}

// profiler is the cell's profile session when the run takes profiles, or a profile that
// says why there is none.
func (c cellPlan) profiler(dir string, jdk contender.JDK) (*profile.Session, *results.Profile) {
	if !c.profile {
		return nil, nil
	}
	s, why := profile.Open(c.m, dir, c.base(), jdk)
	if s != nil {
		s.WithClient = true
	}
	return s, why
}

// vars are the level's contract variables the contender honours: one it ignores is not
// passed, nor reported as applied.
func (c cellPlan) vars() map[string]string {
	vars := map[string]string{}
	for k, v := range c.level.Env {
		if c.m.Honours(k) {
			vars[k] = v
		}
	}
	return vars
}

// cellServer is what a cell runs against: the contender, the lab's downstream and its
// database beside it when the level has them, and the memory cap around it.
type cellServer struct {
	in  *contender.Instance
	ds  *SelfProc
	db  *postgres.Server
	mem *memCap
	// target is the server the lab did not start (arena run --target), in the place of in.
	target *results.Target
}

// stopHelpers stops the downstream and the database, once the contender is stopped.
func (s *cellServer) stopHelpers() {
	if s.ds != nil {
		s.ds.Stop()
	}
	_ = s.db.Stop() // nil-safe
}

// helperGroups are the process groups of the lab's helpers on the client's CPUs, each
// started as its group's leader.
func (s *cellServer) helperGroups() []int {
	var groups []int
	if s.ds != nil {
		groups = append(groups, s.ds.Pid())
	}
	if s.db != nil {
		groups = append(groups, s.db.Pid())
	}
	return groups
}

// startError is a cell that ended before its load: its outcome says how.
type startError struct{ outcome results.Outcome }

// start brings up the level's downstream, then the contender (capped when the level asks),
// and waits until it is ready. On error the contender, if it started, is already stopped.
func (l *Lab) start(ctx context.Context, c cellPlan, dir string, port int, vars map[string]string, prof *profile.Session) (*cellServer, *startError) {
	srv := &cellServer{}
	if l.Agents != nil && l.Agents.ServerAddress != "" {
		vars[contender.BindAddress] = l.Agents.ServerAddress // agents on other hosts must reach it
	}
	if c.level.Downstream != nil {
		ds, err := StartDownstream(l.ClientCPUs, c.level.Downstream.Delay, c.file(dir, "logs", "downstream.log"))
		if err != nil {
			return nil, &startError{results.Outcome{Status: results.OutcomeError, Detail: err.Error()}}
		}
		srv.ds = ds
		vars["DOWNSTREAM_URL"] = ds.URL() // every contender honours it: the contract's /data/{id}
	}
	startVars := vars
	if c.level.Database != nil {
		db, err := postgres.Start(ctx, postgres.Options{CPUs: FormatCPUs(l.ClientCPUs)})
		if err != nil {
			srv.stopHelpers()
			return nil, &startError{results.Outcome{Status: results.OutcomeError, Detail: err.Error()}}
		}
		srv.db = db
		vars[contender.DBPool] = strconv.Itoa(c.level.Database.Pool) // recorded with the cell
		// The URL holds the cluster's password: the contender gets it, the results do not.
		startVars = maps.Clone(vars)
		startVars[contender.DBURL] = db.URL()
	}
	in, err := l.StartContender(c.m, port, startVars, c.file(dir, "logs", "log"), prof)
	if err != nil {
		srv.stopHelpers()
		return nil, &startError{results.Outcome{Status: results.OutcomeError, Detail: err.Error()}}
	}
	srv.in = in
	if c.level.MemoryCap {
		srv.mem = capMemory(c.m.Name, in.Pid(), l.Settings.HeapMB)
		if srv.mem.why != "" {
			l.Progress.Note("memory cap: the heap only (" + srv.mem.why + ")")
		}
	}
	if err := in.WaitReady(ctx, readyTimeout); err != nil {
		endHurry := l.killOnHurry(in)
		in.Stop()
		_ = endHurry()
		srv.stopHelpers()
		o := exitOutcome(in, results.OutcomeUnready, err.Error())
		if ctx.Err() != nil {
			o.Status = results.OutcomeInterrupted
		}
		return srv, &startError{o}
	}
	return srv, nil
}

// warm runs the level's warm-up loads, whose figures are discarded; false when the contender
// died during them (ctx, from untilExit, then ends the warm-up at once).
func (l *Lab) warm(ctx context.Context, c cellPlan, srv *cellServer) bool {
	if len(c.level.Warmup) == 0 {
		return !srv.gone()
	}
	l.Progress.Step("warm-up")
	l.warmAgents(ctx, c, srv)
	if srv.gone() {
		l.Progress.Done("the contender died")
		return false
	}
	l.Progress.Done("done")
	return true
}

func exited(in *contender.Instance) bool {
	select {
	case <-in.Exited():
		return true
	default:
		return false
	}
}

// measurement is what one drive saw.
type measurement struct {
	start     time.Time // of the load
	elapsed   time.Duration
	tags      []load.TagResult
	figures   results.Figures
	err       error        // the load could not run
	crashed   bool         // the contender died before the lab stopped it
	inWarmup  bool         // … during the warm-up, so that no load ran
	exits     []probe.Exit // processes of its group that died while its main process lived
	server    []results.Sample
	client    []results.Sample
	ds        []results.Sample // the lab's downstream, when the level had one
	db        []results.Sample // the lab's database, when the level had one
	hlog      string
	hlogError string
	// silent: the watchdog found it silent for longer than its limit, since silentSince.
	silentSince time.Time
	silent      bool
	hurried     bool                 // the lab killed it at a second Ctrl-C: its death is none of its own
	agents      []results.AgentShare // each load agent's own figures, when agents drove the load
	// agentSpan is how long the agents' load took, from their agreed start to the last
	// share's end: the load's length, without the lead before the start.
	agentSpan time.Duration
	// cpus are what the server's and the client's CPUs spent, read as the load began and ended.
	cpusBefore, cpusAfter cpuShares
}

// drive runs the level's load against the server, from the run's load agents or from the
// one inside this process (the same code either way), while the probes sample the server,
// the client and the downstream on the drive's clock, and writes the interval log. ctx ends
// when the contender dies (untilExit): the load stops there.
func (l *Lab) drive(ctx context.Context, c cellPlan, dir string, srv *cellServer, prof *profile.Session) measurement {
	m := measurement{start: time.Now()}
	var sink load.IntervalSink
	hlogPath := c.file(dir, "hlog", "hlog")
	if hl, err := load.CreateHlog(hlogPath, m.start, fmt.Sprintf("arena %s, %s", c, srv.addr())); err != nil {
		m.hlogError = err.Error()
	} else {
		sink = hl
		m.hlog, _ = filepath.Rel(dir, hlogPath)
		defer func() {
			if err := hl.Close(); err != nil && m.hlogError == "" {
				m.hlogError = err.Error()
			}
		}()
	}
	serverProbe := srv.startProbe(m.start) // nil, and no figures, for a target given without its pid
	clientProbe := probe.StartAlone(os.Getpid(), m.start, probePeriod)
	var dsProbe, dbProbe *probe.Probe
	if srv.ds != nil {
		dsProbe = probe.Start(srv.ds.Pid(), m.start, probePeriod)
	}
	if srv.db != nil {
		dbProbe = probe.Start(srv.db.Pid(), m.start, probePeriod) // the postmaster and its backends
	}
	ctx, stopTicker := l.watch(ctx, c, m.start, serverProbe) // Tick's line, or the live block
	m.cpusBefore = readCPUShares(l.ServerCPUs, l.ClientCPUs, srv.group(), srv.helperGroups())
	if prof != nil {
		prof.Begin()
	}
	m.figures, m.err = l.driveAgents(ctx, c, srv, &m, sink)
	if prof != nil {
		prof.End()
		defer prof.Wait() // pprof's last read may take a second more: after every figure is taken
	}
	m.cpusAfter = readCPUShares(l.ServerCPUs, l.ClientCPUs, srv.group(), srv.helperGroups())
	m.elapsed = time.Since(m.start)
	stopTicker()
	m.crashed = srv.gone()
	m.server, m.client = serverProbe.Stop(), clientProbe.Stop()
	m.exits = serverProbe.Exits()
	if dsProbe != nil {
		m.ds = dsProbe.Stop()
	}
	if dbProbe != nil {
		m.db = dbProbe.Stop()
	}
	return m
}

// record writes what the drive measured into the cell: latency per tag, resources, the
// load's own figures, and whether the client may have set the pace.
func (l *Lab) record(cell *results.Cell, c cellPlan, m measurement) error {
	elapsed := m.elapsed
	if m.agentSpan > 0 {
		elapsed = m.agentSpan
	}
	cell.Seconds = elapsed.Seconds()
	cell.Hlog, cell.HlogError = m.hlog, m.hlogError
	cell.Server = resources(m.server, l.ServerCPUs)
	cell.Client = resources(m.client, l.ClientCPUs)
	if m.ds != nil {
		ds := resources(m.ds, l.ClientCPUs)
		cell.Downstream = &ds
	}
	if m.db != nil {
		db := resources(m.db, l.ClientCPUs)
		cell.Database = &db
	}
	d := c.level.Load.Describe()
	over := throughputSpan(d, m.figures, elapsed)
	for _, t := range m.tags {
		cell.Tags = append(cell.Tags, tagRecord(t, over))
	}
	var figuresErr error
	if m.figures != nil { // before clientBound, which reads a chat load's sends from them
		figuresErr = cell.PutFigures(m.figures)
	}
	cell.Interference = l.interference(m.cpusBefore, m.cpusAfter)
	serverShared, clientBusy := sharedWhy(cell.Interference, l.ServerCPUs, l.ClientCPUs)
	cell.SharedCPU, cell.SharedCPUWhy = serverShared != "", serverShared
	cell.ClientBound, cell.ClientBoundWhy = clientBound(*cell, d, len(l.ClientCPUs))
	cell.Agents = m.agents
	for _, a := range m.agents { // a cell is client-bound if any of its agents was
		if a.ClientBound {
			cell.ClientBound = true
			cell.ClientBoundWhy = strings.TrimPrefix(cell.ClientBoundWhy+"; agent "+a.Name+": "+a.ClientBoundWhy, "; ")
		}
	}
	if clientBusy != "" {
		cell.ClientBound = true
		cell.ClientBoundWhy = strings.TrimPrefix(cell.ClientBoundWhy+"; "+clientBusy, "; ")
	}
	return figuresErr
}

func resources(samples []results.Sample, cpus []int) results.Resources {
	return results.Resources{Summary: results.UsageOf(samples, 0, 0), Timeline: samples, CPUs: FormatCPUs(cpus)}
}

// classify says how the cell ended: a death (at the memory cap or not, of its main process
// or of any process of its group) during the warm-up or the load, then a silence longer than
// the watchdog's limit, before the user's Ctrl-C, before a load that could not run, before a
// clean stop. Whether it had to be killed is the outcome's Killed, whatever the status.
func classify(ctx context.Context, c cellPlan, srv *cellServer, m measurement, took time.Duration) results.Outcome {
	in := srv.in
	during := fmt.Sprintf("during the load, %.1f s in", m.elapsed.Seconds())
	if m.inWarmup {
		during = "during the warm-up"
	}
	switch {
	case m.hurried:
		return results.Outcome{Status: results.OutcomeInterrupted, Detail: "stopped by the user twice: the contender was killed at once; figures cover the part that ran"}
	case m.crashed && (outOfMemory(in.Tail()) || srv.mem != nil && srv.mem.record().OOMKills > 0):
		return exitOutcome(in, results.OutcomeOutOfMemory, fmt.Sprintf("%s ran out of memory: %s %s", c.m.Name, in.Describe(), during))
	case m.crashed:
		return exitOutcome(in, results.OutcomeCrashed, fmt.Sprintf("%s %s %s", c.m.Name, in.Describe(), during))
	case len(m.exits) > 0:
		e := m.exits[0]
		return results.Outcome{Status: results.OutcomeCrashed, LogTail: in.Tail(), Detail: fmt.Sprintf(
			"a process of %s's group died during the load, %.1f s in (pid %d, %s; %d in all), while its main process lived on",
			c.m.Name, e.T, e.Pid, e.Name, len(m.exits))}
	case m.silent:
		at := m.silentSince.Sub(m.start).Seconds()
		o := results.Outcome{Status: results.OutcomeUnresponsive, StoppedAnswering: &at, LogTail: in.Tail(), Detail: fmt.Sprintf(
			"%s stopped answering %.1f s into the load: its readiness went unanswered for longer than %s", c.m.Name, at,
			results.SilenceLimit(c.level.Load.Describe().Timeout))}
		if at < 0 {
			o.Detail = fmt.Sprintf("%s stopped answering during the warm-up (%.1f s before the load): its readiness went unanswered for longer than %s",
				c.m.Name, -at, results.SilenceLimit(c.level.Load.Describe().Timeout))
		}
		return o
	case ctx.Err() != nil:
		return results.Outcome{Status: results.OutcomeInterrupted, Detail: "stopped by the user; figures cover the part that ran"}
	case m.err != nil:
		return results.Outcome{Status: results.OutcomeError, Detail: m.err.Error(), LogTail: in.Tail()}
	}
	return results.Outcome{Status: results.OutcomeOK, Detail: fmt.Sprintf("stopped in %s", took.Round(time.Millisecond))}
}

func exitOutcome(in *contender.Instance, status, detail string) results.Outcome {
	o := results.Outcome{Status: status, Detail: detail, LogTail: in.Tail()}
	if code, sig, ok := in.ExitState(); ok {
		o.ExitCode, o.Signal = code, sig
	}
	return o
}

// throughputSpan is the time a load's responses per second count over: the whole drive for
// a closed loop; the schedule for a paced one, not its drain; and for a measurement after a
// warm-up, what the measured loop took, its drain included.
func throughputSpan(d load.Description, figures results.Figures, elapsed time.Duration) time.Duration {
	if sp, ok := figures.(load.Spanned); ok && sp.Span() > 0 {
		return sp.Span()
	}
	if d.Paced {
		return d.Duration
	}
	return elapsed
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

// clientBound flags a cell whose client (with the lab's downstream and database beside it) used
// ≥ 90 % of its cores, or sent more than 1 %
// (and at least minLate) of its unbounded open-loop hits late: either way the client may
// have set the pace. Lateness is judged over all such streams together, so that one late
// probe in a 1/s stream does not condemn a cell.
func clientBound(cell results.Cell, d load.Description, clientCores int) (bool, string) {
	var why []string
	// The lab's downstream and database share the client's cores: together they can leave the
	// client too little, and a reply they are slow to give is set down to the server.
	busy, what := cell.Client.Summary.CPUPctMean, fmt.Sprintf("client CPU %.0f%%", cell.Client.Summary.CPUPctMean)
	for _, h := range []struct {
		name string
		r    *results.Resources
	}{{"downstream", cell.Downstream}, {"database", cell.Database}} {
		if h.r != nil {
			busy += h.r.Summary.CPUPctMean
			what += fmt.Sprintf(" + %s %.0f%%", h.name, h.r.Summary.CPUPctMean)
		}
	}
	if busy >= clientBusyShare*100*float64(clientCores) {
		why = append(why, fmt.Sprintf("%s of %d core(s)", what, clientCores))
	}
	late, sent, worst := lateSends(cell, d)
	if late >= minLate && float64(late) > lateShare*float64(sent) {
		if worst > 0 {
			why = append(why, fmt.Sprintf("%d of %d sends late (max %.0f ms)", late, sent, worst))
		} else {
			why = append(why, fmt.Sprintf("%d of %d sends late", late, sent))
		}
	}
	return len(why) > 0, strings.Join(why, "; ")
}

// lateSends adds up the sends the client's own schedule made and how many of them left
// late: an unbounded open loop's hits, and a chat load's messages (each member's leave on
// its own timer, a few small frames a period: one that leaves late is the client behind, as
// an unbounded stream's hit is); worst is the latest, in ms, where the load records it.
func lateSends(cell results.Cell, d load.Description) (late, sent int64, worst float64) {
	for _, s := range d.Streams {
		switch {
		case d.Feature == chat.Kind:
			if f, ok := chat.FiguresOf(cell); ok {
				sent += f.Sends // its tag's Sent counts deliveries, Users of them a send
				for _, t := range cell.Tags {
					if t.Tag == s.Tag {
						late, worst = late+t.Late, max(worst, t.MaxLateMs)
					}
				}
			}
			continue
		case s.Mode != "open" || s.Connections > 0:
			continue // a bounded stream's lateness is the server's backlog, by design
		}
		for _, t := range cell.Tags {
			if t.Tag == s.Tag {
				late, sent, worst = late+t.Late, sent+t.Sent, max(worst, t.MaxLateMs)
			}
		}
	}
	return late, sent, worst
}
