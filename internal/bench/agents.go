package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/place"
	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/results"
)

// MaxAgents bounds --agents: more agent processes than that on one host measure the host's
// scheduler, not the agents.
const MaxAgents = 16

// CheckAgentCounts checks --agents, the agent counts to measure: each 1..MaxAgents, in
// increasing order, so that the table reads from one agent up.
func CheckAgentCounts(counts []int) error {
	return checkCounts("agents", "agent", "agents", counts, MaxAgents)
}

// checkCounts checks a flag of counts to measure (--agents, --loops) of one thing (and of
// several): each 1..most, given once, in increasing order.
func checkCounts(flag, thing, things string, counts []int, most int) error {
	if len(counts) == 0 {
		return fmt.Errorf("--%s: give the %s counts to measure, like 1,2,3", flag, thing)
	}
	for i, n := range counts {
		if n < 1 || n > most {
			return fmt.Errorf("--%s %s: %d is not a count of 1 to %d %s; give counts like 1,2,3", flag, intList(counts), n, most, things)
		}
		if i > 0 && n <= counts[i-1] {
			return fmt.Errorf("--%s %s: give each count once, in increasing order, like 1,2,3", flag, intList(counts))
		}
	}
	return nil
}

// AgentCPUSets checks --agent-cpus, agent i's CPU at entry i, against the most agents any
// count asks for, and that each CPU is one this process may use.
func AgentCPUSets(cpus []int, agents int) ([][]int, error) {
	if len(cpus) != agents {
		return nil, fmt.Errorf("--agent-cpus %s has %d entries for %d agents: give one CPU per agent, e.g. %s",
			intList(cpus), len(cpus), agents, exampleCPUs(agents))
	}
	sets := make([][]int, len(cpus))
	for i, c := range cpus {
		set, err := lab.ParseCPUs(strconv.Itoa(c))
		if err != nil {
			return nil, fmt.Errorf("--agent-cpus, agent %d: %w", i+1, err)
		}
		sets[i] = set
	}
	return sets, nil
}

// intList writes ints as a flag takes them: 1,2,3.
func intList(ns []int) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

// exampleCPUs is an --agent-cpus value for n agents on a 2-core machine.
func exampleCPUs(n int) string {
	return intList(make([]int, n))
}

// AgentLayout says where the downstream, the agents (the first agents of them) and the
// coordinator run, and warns where they share a CPU: agents on one core split it, so their
// sum is no longer what that many cores drive; an agent beside the server takes from it.
func AgentLayout(server []int, agents [][]int) (layout string, warnings []string) {
	var parts []string
	for i, a := range agents {
		parts = append(parts, fmt.Sprintf("agent %d on CPU %s", i+1, lab.FormatCPUs(a)))
	}
	coord := "none"
	if len(agents) > 0 {
		coord = lab.FormatCPUs(agents[0])
	}
	layout = fmt.Sprintf("downstream on CPU %s; %s; coordinator (and the in-process agent) on CPU %s",
		lab.FormatCPUs(server), strings.Join(parts, ", "), coord)
	shared := func(a, b []int) string {
		var both []int
		for _, c := range a {
			if slices.Contains(b, c) {
				both = append(both, c)
			}
		}
		return lab.FormatCPUs(both)
	}
	for i := range agents {
		for j := i + 1; j < len(agents); j++ {
			if c := shared(agents[i], agents[j]); c != "" {
				warnings = append(warnings, fmt.Sprintf("agents %d and %d share CPU %s: from %d agents on, they split that core, and their sum is not what %d cores drive",
					i+1, j+1, c, j+1, j+1))
			}
		}
		if c := shared(agents[i], server); c != "" {
			warnings = append(warnings, fmt.Sprintf("agent %d shares CPU %s with the downstream: from %d agents on, it takes part of the server's core", i+1, c, i+1))
		}
	}
	return layout, warnings
}

// AgentsPlan is how arena bench agents measures.
type AgentsPlan struct {
	// Exe is the arena binary the agents run: this one, since an agent answers only its own build.
	Exe       string
	Counts    []int   // agent counts to measure, increasing
	AgentCPUs [][]int // agent i's CPUs; at least the largest count of them
	// InProcess adds one agent inside this process (no HTTP, no JSON) beside the 1-agent
	// figure, so that what the protocol itself costs shows.
	InProcess   bool
	Target      string // host:port of the downstream
	ServerPid   int
	ServerCPUs  []int
	Path        string
	Connections int // in all, dealt out among the agents
	Duration    time.Duration
	Warmup      time.Duration // before each count's first round, the same job, not counted
	Rounds      int
	LogDir      string    // each agent's output, agent-<i>.log
	Progress    io.Writer // a line per round
}

// AgentsRound is one counted round of one count of agents.
type AgentsRound struct {
	RPS       float64 `json:"rps"`       // completed / Seconds
	Completed int64   `json:"completed"` // responses of any status, merged
	Errors    int64   `json:"errors"`    // attempts with no correct answer: a wrong status or body, or a transport error
	Seconds   float64 `json:"seconds"`   // the longest share's elapsed time
	// AgentCompleted and AgentCPU are per agent: its own count and its CPU over its share
	// (% of one core).
	AgentCompleted []int64   `json:"agent_completed"`
	AgentCPU       []float64 `json:"agent_cpu_pct"`
	ServerCPU      float64   `json:"server_cpu_pct"`
	P50            float64   `json:"p50_ms"` // of the merged histogram
	P99            float64   `json:"p99_ms"`
	MaxBeganLateUs float64   `json:"max_began_late_us"`
	// MergeMs is agent.Merge's wall time on the shares; ShareBytes their JSON, what came
	// over the wire (in-process: what would have).
	MergeMs    float64 `json:"merge_ms"`
	ShareBytes int     `json:"share_bytes"`
}

// AgentsLevel is one count of agents over its rounds.
type AgentsLevel struct {
	Agents int           `json:"agents"`
	Via    string        `json:"via"` // "http" or "in-process"
	Rounds []AgentsRound `json:"rounds"`
}

// Mean is the level's mean requests/s, merge time and share bytes.
func (l AgentsLevel) Mean() (rps, mergeMs, bytes float64) {
	if len(l.Rounds) == 0 {
		return 0, 0, 0
	}
	for _, r := range l.Rounds {
		rps, mergeMs, bytes = rps+r.RPS, mergeMs+r.MergeMs, bytes+float64(r.ShareBytes)
	}
	n := float64(len(l.Rounds))
	return rps / n, mergeMs / n, bytes / n
}

// Agents is what arena bench agents measured.
type Agents struct {
	Target      string            `json:"target"`
	Path        string            `json:"path"`
	Connections int               `json:"connections"`
	Seconds     float64           `json:"seconds"`
	ServerCPUs  string            `json:"server_cpus"`
	ServerPid   int               `json:"server_pid"`
	Agents      []place.AgentProc `json:"agent_processes"`
	Levels      []AgentsLevel     `json:"levels"`
}

// Of is the level of n agents reached over via, or nil.
func (a Agents) Of(n int, via string) *AgentsLevel {
	for i := range a.Levels {
		if a.Levels[i].Agents == n && a.Levels[i].Via == via {
			return &a.Levels[i]
		}
	}
	return nil
}

// agentsTag tags the bench's one stream.
const agentsTag = "agents"

// MeasureAgents starts the largest count of agents, each pinned to its CPUs, then measures
// every count: a warm-up, then its rounds, the counts taking turns round by round so that
// drift in the machine hits them alike. The agents are stopped before it returns, whatever
// happened; what was measured so far comes back with an error too.
func MeasureAgents(ctx context.Context, p AgentsPlan) (Agents, error) {
	res := Agents{Target: p.Target, Path: p.Path, Connections: p.Connections, Seconds: p.Duration.Seconds(),
		ServerCPUs: lab.FormatCPUs(p.ServerCPUs), ServerPid: p.ServerPid}
	most := p.Counts[len(p.Counts)-1]
	if len(p.AgentCPUs) < most {
		return res, fmt.Errorf("%d agents but CPUs for %d", most, len(p.AgentCPUs))
	}
	secret, err := agent.NewSecret()
	if err != nil {
		return res, err
	}
	procs, err := place.StartProcs(ctx, p.Exe, p.AgentCPUs[:most], p.LogDir, secret)
	defer procs.Stop()
	if err != nil {
		return res, err
	}
	res.Agents = procs.List()
	type level struct {
		runners []agent.Runner
		out     *AgentsLevel
	}
	var levels []level
	if p.InProcess {
		self := agent.Self("in-process")
		res.Levels = append(res.Levels, AgentsLevel{Agents: 1, Via: "in-process"})
		levels = append(levels, level{runners: []agent.Runner{&agent.InProcess{Self: self, Resolve: closedOnly}}})
	}
	for _, n := range p.Counts {
		res.Levels = append(res.Levels, AgentsLevel{Agents: n, Via: "http"})
		levels = append(levels, level{runners: procs.Runners()[:n]})
	}
	for i := range levels {
		levels[i].out = &res.Levels[i]
	}
	for r := 0; r < p.Rounds; r++ {
		for _, lv := range levels {
			if r == 0 && p.Warmup > 0 {
				if _, err := agentsRound(ctx, p, lv.runners, p.Warmup); err != nil {
					return res, fmt.Errorf("warm-up of %d agent(s), %s: %w", lv.out.Agents, lv.out.Via, err)
				}
			}
			round, err := agentsRound(ctx, p, lv.runners, p.Duration)
			if ctx.Err() != nil { // a round cut short is no round, even when its shares came back
				return res, ctx.Err()
			}
			if err != nil {
				return res, fmt.Errorf("%d agent(s), %s, round %d: %w", lv.out.Agents, lv.out.Via, r+1, err)
			}
			lv.out.Rounds = append(lv.out.Rounds, round)
			if p.Progress != nil {
				fmt.Fprintf(p.Progress, "bench agents: %d agent(s) %s, round %d: %.0f req/s, merge %.3f ms\n",
					lv.out.Agents, lv.out.Via, r+1, round.RPS, round.MergeMs)
			}
		}
	}
	return res, nil
}

// closedOnly resolves the bench's jobs, which name their closed loop in full.
func closedOnly(job agent.Job) (load.Load, error) {
	if job.Closed == nil {
		return nil, errors.New("arena bench agents runs closed loops only")
	}
	return job.Closed.Load(), nil
}

// agentsRound runs the closed loop for d from runners, all from one agreed start, probes the
// server meanwhile, and merges the shares, timing the merge.
func agentsRound(ctx context.Context, p AgentsPlan, runners []agent.Runner, d time.Duration) (AgentsRound, error) {
	job := agent.Job{Closed: &agent.ClosedJob{Tag: agentsTag, Path: p.Path, Connections: p.Connections, Duration: d, Timeout: 10 * time.Second},
		Warmup: -1, Target: p.Target, Interval: time.Second}
	fleet := &agent.Fleet{Runners: runners}
	probed := time.Now()
	sp := probe.Start(p.ServerPid, probed, probePeriod)
	shares, start, err := fleet.Run(ctx, job)
	server := sp.Stop()
	if err != nil {
		return AgentsRound{}, err
	}
	var r AgentsRound
	for _, sh := range shares {
		if sh.Err != "" {
			return r, fmt.Errorf("agent %s: %s", sh.Agent.Name, sh.Err)
		}
		raw, err := json.Marshal(sh)
		if err != nil {
			return r, err
		}
		r.ShareBytes += len(raw)
		r.Seconds = max(r.Seconds, sh.Elapsed.Seconds())
		r.MaxBeganLateUs = max(r.MaxBeganLateUs, float64(sh.BeganLate)/float64(time.Microsecond))
		r.AgentCPU = append(r.AgentCPU, results.UsageOf(sh.Client, 0, 0).CPUPctMean)
		var done int64
		for _, t := range sh.Tags {
			done += t.Completed
		}
		r.AgentCompleted = append(r.AgentCompleted, done)
	}
	began := time.Now()
	merged, err := agent.Merge(job.Closed.Load(), shares, start, job.Interval)
	r.MergeMs = float64(time.Since(began)) / float64(time.Millisecond)
	if err != nil {
		return r, err
	}
	if len(merged.Tags) != 1 {
		return r, fmt.Errorf("the agents returned %d streams, want the one closed loop", len(merged.Tags))
	}
	t := merged.Tags[0]
	r.Completed, r.Errors = t.Completed, t.Failed()
	if r.Seconds > 0 {
		r.RPS = float64(r.Completed) / r.Seconds
	}
	lat := results.LatencyOf(t.Response)
	r.P50, r.P99 = lat.P50, lat.P99
	from := start.Sub(probed).Seconds()
	r.ServerCPU = results.UsageOf(server, from, from+r.Seconds).CPUPctMean
	if r.Completed == 0 {
		return r, fmt.Errorf("no request completed (errors: %v): is the downstream serving %s?", t.Errors, p.Path)
	}
	return r, nil
}

// probePeriod samples the server as the rest of the bench does.
const probePeriod = 250 * time.Millisecond
