package lab

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/internal/verify"
)

// A target is a server the lab did not start (arena run --target, results.Target). The lab
// verifies it where it runs, then runs the scenario's cells against it one after the other:
// the same warm-up, load, watchdog and probes as a contender's cell, without the start and the
// stop, and so without what the lab sets up at a start: its downstream, its database, a
// memory cap, a contract variable. Those levels are refused (TargetRefuses).

// targetReadyWait bounds the wait for a target's readiness before verify and before each
// cell: it is already running, so a long wait means it is not answering.
var targetReadyWait = 30 * time.Second

// TargetRefuses says why level lv cannot run against the target t, or "": a level whose
// set-up happens at the server's start (the lab's downstream or database handed to it, a
// memory cgroup made around it), or that sets a contract variable the target honours and was
// not said to be started with.
func TargetRefuses(t *results.Target, lv scenario.Level) string {
	switch {
	case lv.Downstream != nil:
		return fmt.Sprintf("level %s calls the lab's own downstream, started for each cell and handed to the server as DOWNSTREAM_URL when it starts: a server already running cannot be pointed at it", lv.Name)
	case lv.Database != nil:
		return fmt.Sprintf("level %s reads the lab's own PostgreSQL, made for each cell and handed to the server as DB_URL and DB_POOL when it starts: a server already running cannot be pointed at it", lv.Name)
	case lv.MemoryCap:
		return fmt.Sprintf("level %s holds the server under a memory cap, a cgroup the lab makes around it when it starts: the lab cannot cap a server it did not start", lv.Name)
	}
	for _, k := range slices.Sorted(maps.Keys(lv.Env)) {
		v := lv.Env[k]
		if !slices.Contains(t.Knobs, k) || t.Env[k] == v {
			continue
		}
		given := "was not said to be started with it"
		if had, ok := t.Env[k]; ok {
			given = fmt.Sprintf("was started with %s=%s (--target-env)", k, had)
		}
		return fmt.Sprintf("level %s sets %s=%s, which takes a restart, and the target %s: start it with %s=%s and say so with --target-env %s=%s, or leave %s out of --target-knobs if it takes no such variable",
			lv.Name, k, v, given, k, v, k, v, k)
	}
	return ""
}

// TargetLevels are the levels of levels the target can run, and why each other cannot.
func TargetLevels(t *results.Target, levels []scenario.Level) (runnable []scenario.Level, refused []string) {
	for _, lv := range levels {
		if why := TargetRefuses(t, lv); why != "" {
			refused = append(refused, why)
		} else {
			runnable = append(runnable, lv)
		}
	}
	return runnable, refused
}

// measureTarget is Run's work for a target, once the run's record and folder exist: verify
// it (unless the user said not to), then measure the levels it can run; the others are
// recorded as unsupported, with why.
func (l *Lab) measureTarget(ctx context.Context, o RunOptions, spec results.RunSpec, run *results.Run, dir string, plan scenario.Plan) (*results.Run, string, error) {
	t := spec.Target
	l.needs = nil // a lab that ran another scenario before
	if needs, ok := ScenarioNeeds(o.Scenario); ok {
		l.needs = &needs
	}
	runnable, _ := TargetLevels(t, plan.Levels)
	run.Env.Notes = append(run.Env.Notes, targetNotes(t)...)
	readyBy := "the scenario's first route; --target-ready names another"
	if t.Ready != "" {
		readyBy = "--target-ready"
	}
	run.Env.Notes = append(run.Env.Notes, fmt.Sprintf("target: ready when it answers %s (%s)", readinessOf(t, l.needs).sends, readyBy))
	m, err := l.prepareTarget(ctx, t, run, features(runnable))
	if serr := results.Save(run, dir); serr != nil {
		return l.unsaved(run, dir, serr)
	}
	switch {
	case ctx.Err() != nil:
		return l.finish(run, dir, o.Scenario, results.RunInterrupted)
	case len(runnable) == 0:
		err = errors.New("the target can run none of the scenario's levels")
	}
	if err != nil {
		_, _, ferr := l.finish(run, dir, o.Scenario, results.RunFailed)
		return run, dir, errors.Join(err, ferr)
	}
	if err := PinSelf(l.ClientCPUs); err != nil {
		return run, dir, err
	}
	return l.measure(ctx, run, dir, o.Scenario, plan, 0, cellsOf(plan, spec, []*contender.Manifest{m}, nil))
}

// targetNotes are what the run's notes say of the target: where it was, that the lab did not
// start it, and what that leaves out.
func targetNotes(t *results.Target) []string {
	notes := []string{fmt.Sprintf("target: %s at %s, a server arena did not start: not built, pinned, capped or stopped by the lab; every cell ran against the same process, one after the other (no fresh server per cell)", t.Name, t.URL)}
	switch {
	case !t.Probed():
		notes = append(notes, "target: "+results.NoServerProcess+"; nor were its CPUs checked for other work (shared_cpu)")
	case t.Cgroup != "":
		notes = append(notes, fmt.Sprintf("target: the processes of cgroup %s (--target-cgroup) and of the cgroups below it were probed; the lab counts a server's own CPU by its process group, which a cgroup is not, so the server CPUs were not checked for other work (shared_cpu)", t.Cgroup))
	case targetGroup(t.Pid) == 0:
		notes = append(notes, fmt.Sprintf("target: process %d (--target-pid) and its tree were probed; it leads no process group of its own, so the server CPUs were not checked for other work (shared_cpu)", t.Pid))
	}
	if len(t.Env) > 0 {
		var env []string
		for _, k := range slices.Sorted(maps.Keys(t.Env)) {
			env = append(env, k+"="+t.Env[k])
		}
		notes = append(notes, "target: started with "+strings.Join(env, ", ")+", as the user said (--target-env)")
	}
	if t.SkipVerify {
		notes = append(notes, "target: not verified (--skip-verify): every cell is marked unverified")
	}
	return notes
}

// prepareTarget verifies the target against the groups the levels it runs need (http, and
// their features), records it in the place of a contender, and returns it as the cells see a
// contender; a target that fails a check is refused, with the checks named.
func (l *Lab) prepareTarget(ctx context.Context, t *results.Target, run *results.Run, features []string) (*contender.Manifest, error) {
	info := results.Contender{Name: t.Name, Description: "a server arena did not start, at " + t.URL,
		Stack: "not known to the lab", Knobs: t.Knobs, Target: t.URL, Verified: results.VerifyNotAsked}
	m := &contender.Manifest{Name: t.Name, Description: info.Description, Knobs: t.Knobs, Features: features}
	if t.SkipVerify {
		l.Progress.Note("verify " + t.Name + ": skipped (--skip-verify): every cell is marked unverified")
		run.Contenders = append(run.Contenders, info)
		return m, nil
	}
	groups := append([]string{verify.GroupHTTP}, features...)
	rep := l.VerifyTarget(ctx, t, l.needs, groups)
	switch {
	case ctx.Err() != nil:
		info.Verified = results.VerifySkipped
		run.Contenders = append(run.Contenders, info)
		return nil, ctx.Err()
	case !rep.PassedGroups(groups...):
		info.Verified = results.VerifyFailedBecause(strings.Join(rep.Failures(), "; "))
		run.Contenders = append(run.Contenders, info)
		return nil, fmt.Errorf("the target %s at %s does not keep the contract this scenario needs (%s), so it is not measured (--skip-verify measures it all the same, marked):\n  %s",
			t.Name, t.URL, strings.Join(groups, ", "), strings.Join(rep.Failures(), "\n  "))
	}
	info.Verified = results.VerifyPassed
	run.Contenders = append(run.Contenders, info)
	return m, nil
}

// VerifyTarget checks the target where it runs against the contract's groups: the checks a
// contender's first start gets (its defaults; the stream checks without back-pressure when it
// was started with BACKPRESSURE=off). Those that need a start of the lab's (where it binds,
// the lab's downstream and database, the stop on SIGTERM) are left out: the lab starts and
// stops nothing here. With its pid, every bad input is followed by a look at its process tree.
//
// With needs (what the scenario it is checked for sends), only the HTTP checks that send to
// its routes run, the others listed as not needed, and its readiness is the scenario's (see
// readinessOf); nil checks the whole contract.
func (l *Lab) VerifyTarget(ctx context.Context, t *results.Target, needs *verify.Needs, groups []string) verify.Report {
	rep := verify.Report{Contender: t.Name}
	fail := func(name, detail string) verify.Report {
		rep.Checks = append(rep.Checks, verify.Check{Group: verify.GroupHTTP, Name: name, Detail: detail})
		return rep
	}
	began := time.Now()
	l.Progress.verifyLine("verify %s at %s (%s), a server arena did not start", t.Name, t.URL, strings.Join(groups, ", "))
	ready := readinessOf(t, needs)
	if err := targetReady(ctx, t.Addr, ready, targetReadyWait); err != nil {
		return fail("ready", err.Error())
	}
	srv, err := verify.NewServer(t.Addr, t.Pid) // a cgroup's target: checked after bad input by its readiness alone
	if err != nil {
		return fail("ready", fmt.Sprintf("--target-pid %d: %v", t.Pid, err))
	}
	srv.Needs, srv.Probe = needs, ready.try
	rep.Checks = append(rep.Checks, verify.Check{Group: verify.GroupHTTP, Name: "ready", OK: true, Took: time.Since(began)})
	stream := verify.StreamChecks
	if t.Env["BACKPRESSURE"] == "off" {
		stream = verify.StreamChecksUnbounded
	}
	for _, sec := range []verifySection{
		{group: verify.GroupHTTP, checks: verify.SelfChecks},
		{group: verify.GroupChat, checks: verify.ChatChecks},
		{group: verify.GroupStream, checks: stream},
	} {
		if !sec.runs(nil, groups) || ctx.Err() != nil {
			continue
		}
		at := time.Now()
		checks := sec.checks(ctx, srv)
		rep.Checks = append(rep.Checks, checks...)
		if part := (verify.Report{Checks: checks}); len(checks) > 0 {
			l.Progress.verifyLine("  %s (%s)", part.Tally(sec.group), time.Since(at).Round(100*time.Millisecond))
		}
	}
	rep.NotNeeded = srv.NotNeeded()
	l.Progress.verifyLine("verify %s: %s (%s)", t.Name, rep.Summary(), time.Since(began).Round(time.Second))
	return rep
}

// runTargetCell is runCell for a target: ready → warm → drive → classify, with the watchdog
// on its readiness and, given its pid, the probe on its tree and its death watched. The lab
// neither starts nor stops it. It never fails: what went wrong is the outcome.
func (l *Lab) runTargetCell(ctx context.Context, c cellPlan, dir string) results.Cell {
	t := l.target
	_, port, _ := net.SplitHostPort(t.Addr)
	cell := results.Cell{Contender: c.m.Name, Level: c.level.Name, Repeat: c.repeat, Env: maps.Clone(t.Env), Started: time.Now(),
		Outcome: results.Outcome{Status: results.OutcomeOK}, Unverified: t.SkipVerify}
	cell.Port, _ = strconv.Atoi(port)
	if cell.Env == nil {
		cell.Env = map[string]string{}
	}
	if err := targetReady(ctx, t.Addr, readinessOf(t, l.needs), targetReadyWait); err != nil {
		cell.Outcome = results.Outcome{Status: results.OutcomeUnready, Detail: err.Error()}
		if ctx.Err() != nil {
			cell.Outcome = results.Outcome{Status: results.OutcomeInterrupted, Detail: "stopped by the user before the load"}
		}
		return cell
	}
	srv := &cellServer{target: t}
	live, endLive := untilGone(ctx, t)
	defer endLive()
	limit := results.SilenceLimit(c.level.Load.Describe().Timeout)
	dog := watch(t.Addr, limit, func(since time.Time) {
		l.Progress.Note(fmt.Sprintf("%s stopped answering (nothing since %s)", t.Name, since.Format("15:04:05")))
	})
	var m measurement
	if l.warm(live, c, srv) {
		m = l.drive(live, c, dir, srv, nil)
	} else {
		m.crashed, m.inWarmup = true, true
	}
	m.silentSince, m.silent = dog.Stop()
	if err := l.record(&cell, c, m); err != nil && m.err == nil {
		m.err = err
	}
	if !t.Probed() {
		cell.Server = results.Resources{CPUs: cell.Server.CPUs, Unprobed: results.NoServerProcess}
	}
	if srv.group() == 0 { // its own use cannot be told from other work on the server's CPUs
		cell.SharedCPU, cell.SharedCPUWhy = false, ""
	}
	cell.Outcome = classifyTarget(ctx, c, t, m, limit)
	return cell
}

// classifyTarget says how a target's cell ended: its process (given its pid) or one of its
// tree died, it fell silent past the limit, the user stopped the run, the load could not run,
// or it ended as it should: the target still running, as the lab found it.
func classifyTarget(ctx context.Context, c cellPlan, t *results.Target, m measurement, limit time.Duration) results.Outcome {
	during := fmt.Sprintf("during the load, %.1f s in", m.elapsed.Seconds())
	if m.inWarmup {
		during = "during the warm-up"
	}
	switch {
	case m.crashed && t.Cgroup != "":
		return results.Outcome{Status: results.OutcomeCrashed, Detail: fmt.Sprintf("the target's cgroup %s (--target-cgroup) was left with no process %s", t.Cgroup, during)}
	case m.crashed:
		return results.Outcome{Status: results.OutcomeCrashed, Detail: fmt.Sprintf("the target's process %d (--target-pid) ended %s", t.Pid, during)}
	case len(m.exits) > 0:
		e, of, lived := m.exits[0], "tree", "its root"
		if t.Cgroup != "" {
			of, lived = "cgroup", "others"
		}
		return results.Outcome{Status: results.OutcomeCrashed, Detail: fmt.Sprintf(
			"a process of the target's %s died during the load, %.1f s in (pid %d, %s; %d in all), while %s lived on", of, e.T, e.Pid, e.Name, len(m.exits), lived)}
	case m.silent:
		at := m.silentSince.Sub(m.start).Seconds()
		return results.Outcome{Status: results.OutcomeUnresponsive, StoppedAnswering: &at, Detail: fmt.Sprintf(
			"%s stopped answering %.1f s into the load (negative: during the warm-up): its readiness went unanswered for longer than %s", c.m.Name, at, limit)}
	case ctx.Err() != nil:
		return results.Outcome{Status: results.OutcomeInterrupted, Detail: "stopped by the user; figures cover the part that ran"}
	case m.err != nil:
		return results.Outcome{Status: results.OutcomeError, Detail: m.err.Error()}
	}
	return results.Outcome{Status: results.OutcomeOK, Detail: "the target was left running: the lab did not start it and does not stop it"}
}

// untilGone is ctx, ended early when the target's process ends, or its cgroup is left with
// none (polled: it is no child of the lab's); given neither, ctx itself.
func untilGone(ctx context.Context, t *results.Target) (context.Context, context.CancelFunc) {
	live, cancel := context.WithCancel(ctx)
	if !t.Probed() {
		return live, cancel
	}
	go func() {
		for {
			select {
			case <-live.Done():
				return
			case <-time.After(probePeriod):
				if targetGone(t) {
					cancel()
					return
				}
			}
		}
	}()
	return live, cancel
}

// targetGone says whether the target's process has ended, or its cgroup holds none; a
// target given with neither never has, as far as the lab can tell.
func targetGone(t *results.Target) bool {
	switch {
	case t.Cgroup != "":
		pids, err := probe.CgroupProcs(t.Cgroup)
		return err != nil || len(pids) == 0
	case t.Pid > 0:
		return !alive(t.Pid)
	}
	return false
}

// alive says whether process pid exists and is not a zombie (a target started by a shell
// that has not reaped it yet is dead all the same).
func alive(pid int) bool {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	return len(f) == 0 || f[0] != "Z" && f[0] != "X"
}

// targetGroup is the process group the target's pid leads, or 0 when it leads none: the lab
// counts a server's own CPU seconds by its process group.
func targetGroup(pid int) int {
	if pid <= 0 {
		return 0
	}
	if pg, err := syscall.Getpgid(pid); err == nil && pg == pid {
		return pid
	}
	return 0
}

// addr is where the cell's server answers: the contender's address, or the target's.
func (s *cellServer) addr() string {
	if s.target != nil {
		return s.target.Addr
	}
	return s.in.Addr()
}

// group is the server's process group, whose CPU seconds are its own (0: not known).
func (s *cellServer) group() int {
	if s.target != nil {
		return targetGroup(s.target.Pid)
	}
	return s.in.Pid()
}

// gone says whether the server's main process has ended (a target's: targetGone).
func (s *cellServer) gone() bool {
	if s.target != nil {
		return targetGone(s.target)
	}
	return exited(s.in)
}

// startProbe starts the probe of the server's process tree (a target's cgroup: its
// processes); nil when the lab has no process to probe (a target given neither).
func (s *cellServer) startProbe(start time.Time) *probe.Probe {
	switch {
	case s.target == nil:
		return probe.Start(s.in.Pid(), start, probePeriod)
	case s.target.Cgroup != "":
		return probe.StartCgroup(s.target.Cgroup, start, probePeriod)
	case s.target.Pid == 0:
		return nil
	}
	return probe.Start(s.target.Pid, start, probePeriod)
}
