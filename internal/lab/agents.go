package lab

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// Agents is how a run's load leaves this process when it is spread over load agents: the
// fleet, where they reach the contender, and the topology the results record.
type Agents struct {
	Fleet *agent.Fleet
	// ServerAddress is the address agents reach the contender on, given to it as
	// BIND_ADDRESS; "" keeps it on loopback (agents in this process, or on this host).
	ServerAddress string
	Topology      results.Topology
}

// job is the level's job for the fleet: the run's scenario and options, the level, which of
// its loads, and where the contender listens.
func (l *Lab) job(c cellPlan, srv *cellServer, warmup int) agent.Job {
	return agent.Job{Scenario: l.scenario, Options: l.options, Level: c.level.Name, Warmup: warmup,
		Target: srv.addr(), Interval: windowInterval}
}

// splittable fails, before anything is built, when a level's load (or a warm-up) cannot be
// dealt out among the fleet: a kind of load that has no shares yet, or more agents than it
// has parts.
func splittable(f *agent.Fleet, levels []scenario.Level) error {
	for _, lv := range levels {
		for _, ld := range append([]load.Load{lv.Load}, lv.Warmup...) {
			if err := f.CanSplit(ld); err != nil {
				return fmt.Errorf("level %s: %w", lv.Name, err)
			}
		}
	}
	return nil
}

// unreachable says why a contender cannot be driven by agents on other hosts, or "".
func (l *Lab) unreachable(m *contender.Manifest) string {
	if l.Agents == nil || l.Agents.ServerAddress == "" || m.Honours(contender.BindAddress) {
		return ""
	}
	return fmt.Sprintf("%s does not honour %s, so it listens on loopback only and load agents on other hosts cannot reach it: not measured",
		m.Name, contender.BindAddress)
}

// localLead is how far ahead the in-process agent's start is set: no network to cross.
const localLead = 20 * time.Millisecond

// fleet is the run's load agents, or with none the one inside this process, which plans
// nothing: it takes the cell's own loads.
func (l *Lab) fleet(c cellPlan) *agent.Fleet {
	if l.Agents != nil {
		return l.Agents.Fleet
	}
	self := agent.Hello{Protocol: agent.Protocol, Name: "arena", CPUs: FormatCPUs(l.ClientCPUs)}
	resolve := func(job agent.Job) (load.Load, error) {
		if job.Warmup >= 0 {
			return c.level.Warmup[job.Warmup], nil
		}
		return c.level.Load, nil
	}
	return &agent.Fleet{Runners: []agent.Runner{&agent.InProcess{Self: self, Resolve: resolve}}, Lead: localLead}
}

// warmAgents runs the level's warm-ups from the agents; their figures are discarded, and a
// warm-up that cannot run shows in the load after it, as on one machine.
func (l *Lab) warmAgents(ctx context.Context, c cellPlan, srv *cellServer) {
	for k := range c.level.Warmup {
		if ctx.Err() != nil {
			return
		}
		if _, _, err := l.fleet(c).Run(ctx, l.job(c, srv, k)); err != nil && l.Agents != nil {
			l.Progress.Note("warm-up: " + err.Error())
		}
	}
}

// driveAgents runs the level's load from the agents (the run's, or the in-process one) and merges their shares into m: the
// tags as one client would have recorded them, the merged windows into the .hlog, each
// agent's own figures beside them. The windows count from the agents' agreed start; they
// are moved onto the drive's clock, which the probes' timelines share.
func (l *Lab) driveAgents(ctx context.Context, c cellPlan, srv *cellServer, m *measurement, sink load.IntervalSink) (results.Figures, error) {
	fleet := l.fleet(c)
	shares, start, err := fleet.Run(ctx, l.job(c, srv, -1))
	if err != nil {
		return nil, err
	}
	merged, err := agent.Merge(c.level.Load, shares, start, windowInterval)
	if err != nil {
		return nil, fmt.Errorf("merging the agents' shares: %w", err)
	}
	shift := start.Sub(m.start).Seconds()
	for i := range merged.Tags {
		for w := range merged.Tags[i].Timeline {
			merged.Tags[i].Timeline[w].T += shift
		}
	}
	if sink != nil {
		for _, iv := range merged.Intervals {
			if err := sink.Interval(iv.Tag, iv.Hist); err != nil && m.hlogError == "" {
				m.hlogError = err.Error()
			}
		}
	}
	m.tags = merged.Tags
	l.stageExport(c, m, merged)
	d := c.level.Load.Describe()
	for i, sh := range shares {
		m.agentSpan = max(m.agentSpan, sh.Elapsed)
		if l.Agents != nil { // the in-process agent of a one-machine run is the client itself
			m.agents = append(m.agents, agentShare(fleet.Runners[i], sh, d, shift))
		}
	}
	if len(merged.Errs) > 0 {
		return merged.Figures, fmt.Errorf("%s", strings.Join(merged.Errs, "; "))
	}
	return merged.Figures, nil
}

// agentShare is one agent's record: where it ran, its clock, its own tags and CPU, and
// whether it may have set the pace, judged as the lab judges its own client.
func agentShare(r agent.Runner, sh *agent.Share, d load.Description, shift float64) results.AgentShare {
	off, rtt := r.Clock()
	a := results.AgentShare{Name: sh.Agent.Name, Host: sh.Agent.Host, Addr: r.Addr(), CPUs: sh.Agent.CPUs,
		OffsetMs: ms(off), RTTMs: ms(rtt), BeganLateMs: ms(sh.BeganLate)}
	own := results.Cell{}
	for _, t := range sh.Tags {
		at := results.AgentTag{Tag: t.Tag, Sent: t.Sent, Completed: t.Completed, Late: t.Late}
		if h, err := results.DecodeHist(t.Response); err == nil && h.TotalCount() > 0 {
			lat := results.LatencyOf(h)
			at.P50, at.P99, at.Max = lat.P50, lat.P99, lat.Max
		}
		for _, w := range t.Windows {
			if h, err := results.DecodeHist(w.Hist); err == nil {
				at.Timeline = append(at.Timeline, results.WindowOf(w.EndS+shift, h, w.Errors, w.Timeouts))
			}
		}
		a.Tags = append(a.Tags, at)
		own.Tags = append(own.Tags, results.Tag{TagStats: t.TagStats})
	}
	for i := range sh.Client {
		sh.Client[i].T += shift
	}
	a.Client, a.ClientTimeline = results.UsageOf(sh.Client, 0, 0), sh.Client
	own.Client.Summary = a.Client
	cores := 1
	if cpus, err := ParseCPUs(sh.Agent.CPUs); err == nil && len(cpus) > 0 {
		cores = len(cpus)
	}
	a.ClientBound, a.ClientBoundWhy = clientBound(own, d, cores)
	return a
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }
