// Package results is the lab's record of a run: the schema of results.json (documented in
// docs/results.md), its atomic writing, the CSV beside it, and the summary of repeats.
package results

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// SchemaVersion names the shape of results.json; it changes when a field changes meaning.
// v2 keeps what a load measured beyond latency in a cell's figures and numbers (v1 had a
// stream-shaped field); Load reads v1 files and moves that field where v2 keeps it.
const SchemaVersion = "arena.results/v2"

// Run is one invocation of `arena run`: every cell it measured and what they add up to.
type Run struct {
	Schema   string     `json:"schema"`
	ID       string     `json:"id"`
	Command  []string   `json:"command"`
	Started  time.Time  `json:"started"`
	Finished *time.Time `json:"finished,omitempty"`
	Status   string     `json:"status"` // one of the Run* statuses
	// Spec is what was asked for, as the lab ran it (absent in runs recorded before specs):
	// a resumed run is held to it.
	Spec *RunSpec `json:"spec,omitempty"`
	// ForcedResume are the differences from Spec and Env that a resume with --force-resume
	// carried the run on despite: its cells before and after are not alike.
	ForcedResume []string      `json:"forced_resume,omitempty"`
	Scenario     ScenarioInfo  `json:"scenario"`
	Env          Environment   `json:"environment"`
	Contenders   []Contender   `json:"contenders"`
	Cells        []Cell        `json:"cells"`
	Summary      []CellSummary `json:"summary"`  // repeats combined, per contender × level
	Verdicts     []Verdict     `json:"verdicts"` // per contender
	Claims       []Claim       `json:"claims"`   // the study's conclusions, judged
}

// Interference is what ran on the lab's CPUs besides the lab during a cell's load, in % of
// their capacity.
type Interference struct {
	ServerOtherPct float64 `json:"server_other_pct"` // the server's CPUs: work outside the contender's tree
	ServerStealPct float64 `json:"server_steal_pct"` // the server's CPUs: stolen by the hypervisor
	ClientOtherPct float64 `json:"client_other_pct"` // the client's CPUs: work other than arena's and its downstream's, steal included
}

// Run statuses: a run is running until it ends complete, interrupted (Ctrl-C, with every
// finished cell kept) or failed (nothing could be measured, or its results not saved).
const (
	RunRunning     = "running"
	RunComplete    = "complete"
	RunInterrupted = "interrupted"
	RunFailed      = "failed"
)

// ScenarioInfo says what was run and how it was shaped.
type ScenarioInfo struct {
	Name   string `json:"name"`
	Title  string `json:"title"`
	Study  string `json:"study"` // the seed it reproduces
	Preset string `json:"preset"`
	Quick  bool   `json:"quick"`
	Repeat int    `json:"repeat"`
	// Profiled: every cell's contender ran under its CPU profiler (arena run --profile),
	// which costs it some throughput (docs/performance.md).
	Profiled bool     `json:"profiled,omitempty"`
	Levels   []Level  `json:"levels"`
	Notes    []string `json:"notes,omitempty"`
	// Duration and Timeout are the measured load's length and per-request timeout, in
	// seconds, where every level shares them (0 otherwise); Load says it in words.
	Duration float64 `json:"duration_s"`
	Timeout  float64 `json:"timeout_s"`
	// Headline is what the scenario is summed up by, in the matrix and the findings.
	Headline []Headline `json:"headline,omitempty"`
}

// Headline is one figure a scenario is summed up by, per contender.
type Headline struct {
	// Figure is p50, p99 or mean (of Tag's merged response time), rps (of Tag), rss_mb or
	// cpu_pct (the server's), or the name of one of the cells' Numbers.
	Figure string `json:"figure"`
	Tag    string `json:"tag,omitempty"`
	// Per is where it is read: "level" (every level), "curve" (each group's largest X a
	// contender was measured at) or "first" (the first level a contender was measured at).
	Per   string `json:"per"`
	Label string `json:"label"` // how it reads, e.g. "/instant p99"
	Unit  string `json:"unit"`  // ms, requests/s, messages/s, MB, %
}

// Where a headline is read.
const (
	PerLevel = "level"
	PerCurve = "curve"
	PerFirst = "first"
)

// Level is one load level of a scenario, as planned.
type Level struct {
	Name string `json:"name"`
	// Group, X and XName place the level on a curve: figures are drawn against X (e.g.
	// connections), one line per contender and group.
	Group             string  `json:"group,omitempty"`
	X                 float64 `json:"x,omitempty"`
	XName             string  `json:"x_name,omitempty"`
	Downstream        bool    `json:"downstream,omitempty"` // the lab's downstream served /data
	DownstreamDelayMs float64 `json:"downstream_delay_ms,omitempty"`
	// Database: the lab's PostgreSQL served /db, each contender holding at most DBPool
	// connections to it (DB_POOL).
	Database bool   `json:"database,omitempty"`
	DBPool   int    `json:"db_pool,omitempty"`
	Load     string `json:"load"` // human description, e.g. "open loop: instant 10/s, …"
	// Duration and Timeout are the level's planned length of load and per-request timeout,
	// in seconds (0 where it has none, e.g. a closed loop bounded by a count of requests).
	Duration float64           `json:"duration_s,omitempty"`
	Timeout  float64           `json:"timeout_s,omitempty"`
	Env      map[string]string `json:"env,omitempty"`
	Streams  []StreamPlan      `json:"streams"`
}

// StreamPlan is one tagged stream of a level.
type StreamPlan struct {
	Tag         string  `json:"tag"`
	Path        string  `json:"path"`
	Paths       int     `json:"paths,omitempty"` // sent in turn, Path the first (e.g. /db/{id} over ids)
	Mode        string  `json:"mode"`            // open | closed
	Rate        float64 `json:"rate_per_s,omitempty"`
	Connections int     `json:"connections,omitempty"`
	Requests    int64   `json:"requests,omitempty"`
}

// Environment is the machine and the settings every contender shared.
type Environment struct {
	Host        string   `json:"host"`
	OS          string   `json:"os"`
	Kernel      string   `json:"kernel"`
	CPUModel    string   `json:"cpu_model"`
	Cores       int      `json:"cores"`
	MemoryGB    float64  `json:"memory_gb"`
	GoVersion   string   `json:"go_version"`
	JavaVersion string   `json:"java_version,omitempty"`
	JavaHome    string   `json:"java_home,omitempty"`
	NodeVersion string   `json:"node_version,omitempty"`
	ServerCPUs  string   `json:"server_cpus"`
	ClientCPUs  string   `json:"client_cpus"`
	HeapMB      int      `json:"heap_mb"`
	JavaOpts    string   `json:"java_opts,omitempty"`
	ArenaRev    string   `json:"arena_rev,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	// Topology is set when the load ran from load agents rather than from this process.
	Topology *Topology `json:"topology,omitempty"`
}

// Contender is what the run knew of a contender: its manifest and its build.
type Contender struct {
	Name        string   `json:"name"`
	Description string   `json:"description"`
	Stack       string   `json:"stack"`
	Model       string   `json:"model"`
	Runtime     string   `json:"runtime"`
	Knobs       []string `json:"knobs"`
	Notes       string   `json:"notes,omitempty"`
	BuildHash   string   `json:"build_hash"`
	Verified    string   `json:"verified"` // VerifyPassed, VerifySkipped, or VerifyFailed followed by why
	// Target is the URL of a server the lab did not start (arena run --target), which stands
	// here in the place of a contender: no manifest, no build, no start or stop by the lab.
	Target string `json:"target,omitempty"`
}

// What verify said of a contender.
const (
	VerifyPassed  = "passed"
	VerifySkipped = "skipped"  // the run ended before its turn
	VerifyFailed  = "failed: " // then why; such a contender is not measured
	// VerifyNotAsked: the user ran a target with --skip-verify; its every cell is Unverified.
	VerifyNotAsked = "not verified (--skip-verify)"
)

// VerifyFailedBecause is the Verified of a contender that failed, and why.
func VerifyFailedBecause(why string) string { return VerifyFailed + why }

// Cell is one measurement: a contender at one level of a scenario, one repeat.
type Cell struct {
	Contender string            `json:"contender"`
	Level     string            `json:"level"`
	Repeat    int               `json:"repeat"` // from 1
	Env       map[string]string `json:"env"`    // the contract variables it was started with
	Port      int               `json:"port"`
	Started   time.Time         `json:"started"`
	Seconds   float64           `json:"seconds"` // of load, from first scheduled send to last answer
	Outcome   Outcome           `json:"outcome"`
	Tags      []Tag             `json:"tags"`
	Server    Resources         `json:"server"`
	Client    Resources         `json:"client"`
	// Downstream is the lab's downstream process, when the level had one: shown beside the
	// contender so that it can be seen not to be the bottleneck.
	Downstream *Resources `json:"downstream,omitempty"`
	// Database is the lab's PostgreSQL (the postmaster and its backends), when the level had
	// one: beside the contender, so that a reader sees when the database was the limit.
	Database *Resources `json:"database,omitempty"`
	// DatabaseServer is that PostgreSQL's version and settings (durability off: its data is
	// made anew for the cell and only read).
	DatabaseServer string `json:"database_server,omitempty"`
	// ClientBound says the client, not the server, may have set the pace: it used ≥ 90 %
	// of its cores or sent late against its schedule. Such a cell is not the server's number.
	ClientBound    bool   `json:"client_bound"`
	ClientBoundWhy string `json:"client_bound_why,omitempty"`
	// SharedCPU says other work (another process, or a hypervisor's steal) took more than a
	// tenth of the server's CPUs during the load: the figures are a shared core's, no verdict
	// on the server. Interference has the shares it was judged on.
	SharedCPU    bool          `json:"shared_cpu"`
	SharedCPUWhy string        `json:"shared_cpu_why,omitempty"`
	Interference *Interference `json:"interference,omitempty"`
	// Unverified: the server was not verified against the contract (a target run with
	// --skip-verify): its answers were still checked one by one, its abuse handling was not.
	Unverified bool   `json:"unverified,omitempty"`
	Hlog       string `json:"hlog,omitempty"` // path relative to the run's folder
	// HlogError says why the interval log could not be written (the figures are kept).
	HlogError string `json:"hlog_error,omitempty"`
	// Figures are what the load measured beyond latency, by kind, each in its load's own
	// shape (e.g. "stream": study 003's deliveries and the server's counters); Numbers are
	// their figures worth a median over repeats, by name.
	Figures map[string]json.RawMessage `json:"figures,omitempty"`
	Numbers map[string]float64         `json:"numbers,omitempty"`
	// Faults are what the load found wrong in the server's deliveries, by kind (FaultLost,
	// FaultDuplicated, …), from figures that check them (Checked). A cell with any is not an
	// honest figure of the server: it is marked, and never ranked beside honest ones.
	Faults map[string]int64 `json:"faults,omitempty"`
	// Memory is the cap the contender ran under, when the level set one.
	Memory *Memory `json:"memory,omitempty"`
	// Profile is the contender's CPU profile over the load, when the run asked for one;
	// ClientProfile the client's own (arena) over the same load.
	Profile       *Profile `json:"profile,omitempty"`
	ClientProfile *Profile `json:"client_profile,omitempty"`
	// Agents are the load agents that drove the cell, when the run spread its load over
	// several (arena run --agents, --hosts): each one's own figures beside the merged ones.
	// Tags and Client above are then their exact merge and the coordinator's own process.
	Agents []AgentShare `json:"agents,omitempty"`
	// Runtime is what the server's processes ran with, read from them at the load's end.
	Runtime *Runtime `json:"runtime,omitempty"`
	// Heap is a JVM server's heap after each collection during the load, from its GC log:
	// the live data its memory claims are about, which RSS under a fixed heap (-Xms = -Xmx,
	// never given back: RSS rises as its pages are first touched, then stays) does not show.
	// Absent for a server that is no JVM.
	Heap *Heap `json:"heap,omitempty"`
}

// Heap is what a JVM's collections left of its heap during a cell's load, read from its
// unified GC log (-Xlog:gc) once it stopped. After a full collection that is the live data;
// after a young one, the live data plus the old generation's garbage not yet collected, an
// upper bound of it. A load without a collection has no figure: Unread says so, never a zero.
type Heap struct {
	Log string `json:"log"` // the GC log, relative to the run's folder
	// Collections and FullCollections count the load's collections (the whole timeline's,
	// before any thinning); PauseMsTotal and PauseMsMax are their stop-the-world pauses.
	Collections     int     `json:"collections"`
	FullCollections int     `json:"full_collections,omitempty"`
	PauseMsTotal    float64 `json:"pause_ms_total,omitempty"`
	PauseMsMax      float64 `json:"pause_ms_max,omitempty"`
	// MaxAfterMB and EndAfterMB are the highest and the last heap after a collection during
	// the load: the cell's Numbers NumberLiveHeapMax and NumberLiveHeapEnd.
	MaxAfterMB float64 `json:"after_mb_max,omitempty"`
	EndAfterMB float64 `json:"after_mb_end,omitempty"`
	// Timeline is the load's collections on the cell's clock (seconds since the load's start,
	// as the probe's samples). Beyond MaxHeapPoints of them it is thinned to one a ThinnedS
	// seconds (the probe's period, or wider): each the collection of that span that left the
	// most, and the load's last collection kept, so that its highest and last stay drawn.
	Timeline []HeapPoint `json:"timeline,omitempty"`
	ThinnedS float64     `json:"thinned_s,omitempty"`
	// Unread says why there is no figure: no collection during the load, no log.
	Unread string `json:"unread,omitempty"`
}

// HeapPoint is one collection.
type HeapPoint struct {
	T        float64 `json:"t"`
	BeforeMB float64 `json:"before_mb"`
	AfterMB  float64 `json:"after_mb"`
	HeapMB   float64 `json:"heap_mb,omitempty"`  // committed after it
	PauseMs  float64 `json:"pause_ms,omitempty"` // stop-the-world; none for a concurrent cycle
	Full     bool    `json:"full,omitempty"`     // over the whole heap: AfterMB is live data alone
}

// MaxHeapPoints bounds a cell's heap timeline: a collection a tenth of a second over a
// five-minute load, the size of the probe's own timeline at 4 Hz.
const MaxHeapPoints = 1200

// The cell numbers a Heap gives (Cell.Numbers, summarised over repeats like any other).
const (
	NumberLiveHeapMax = "live_heap_mb_max" // the highest heap after a collection during the load
	NumberLiveHeapEnd = "live_heap_mb_end" // the last heap after a collection during the load
)

// Numbers are the heap's cell numbers; none without a collection during the load.
func (h *Heap) Numbers() map[string]float64 {
	if h == nil || h.Collections == 0 {
		return nil
	}
	return map[string]float64{NumberLiveHeapMax: h.MaxAfterMB, NumberLiveHeapEnd: h.EndAfterMB}
}

// PutHeap keeps h in the cell and its numbers among the cell's.
func (c *Cell) PutHeap(h *Heap) {
	c.Heap = h
	for name, v := range h.Numbers() {
		if c.Numbers == nil {
			c.Numbers = map[string]float64{}
		}
		c.Numbers[name] = v
	}
}

// Runtime is what a cell's server ran with, read from its running processes once the load
// ended, before the stop: pools that start lazily (Tomcat's workers, Netty's event loops,
// virtual-thread carriers) have then grown to what the load made of them, and the reading
// (a JVM attach) costs the server's core nothing during the load. Read as-is, never
// assumed: a figure that could not be read is absent and Unread says why.
type Runtime struct {
	// JVM is the JVM of the server's process tree, for a Java contender.
	JVM *JVM `json:"jvm,omitempty"`
	// Threads counts the threads of every process of the server's tree by name, digits
	// taken out (the kernel's name, at most 15 characters: "vert.x-eventloop-thread-0" is
	// "vert.x-eventloo"); Processes counts the processes the same way (a cluster's workers).
	Threads   map[string]int `json:"threads,omitempty"`
	Processes map[string]int `json:"processes,omitempty"`
	// Unread says, per figure (jvm, threads, or one of the JVM's keys), why it was not read.
	Unread map[string]string `json:"unread,omitempty"`
}

// JVM is a JVM's settings as it reported them (jcmd VM.flags -all, VM.info,
// Thread.vthread_scheduler).
type JVM struct {
	Pid       int    `json:"pid"`
	Collector string `json:"collector,omitempty"` // "Serial", "G1", "Parallel", "Z", "Shenandoah", "Epsilon"
	// InitialHeapMB and MaxHeapMB are InitialHeapSize and MaxHeapSize, in MiB.
	InitialHeapMB float64 `json:"initial_heap_mb,omitempty"`
	MaxHeapMB     float64 `json:"max_heap_mb,omitempty"`
	// ActiveProcessorCountFlag is -XX:ActiveProcessorCount (-1: not set); Processors is the
	// count the JVM started with ("initial active" of VM.info), Runtime.availableProcessors()
	// and every pool sized from it.
	ActiveProcessorCountFlag int `json:"active_processor_count_flag,omitempty"`
	Processors               int `json:"processors,omitempty"`
	// VirtualThreadParallelism is the virtual-thread scheduler's parallelism; Carriers its
	// carrier threads at the reading.
	VirtualThreadParallelism int  `json:"vthread_parallelism,omitempty"`
	Carriers                 *int `json:"vthread_carriers,omitempty"` // nil when unread; 0 is none started
}

// AgentShare is one load agent's part of a cell: where it ran, how far its clock was from
// the coordinator's, and what it measured on its own. A cell is client-bound when any
// agent was.
type AgentShare struct {
	Name        string  `json:"name"`
	Host        string  `json:"host"`
	Addr        string  `json:"addr"` // where the coordinator reached it; "in-process" for the lab's own
	CPUs        string  `json:"cpus"`
	OffsetMs    float64 `json:"clock_offset_ms"` // its clock minus the coordinator's
	RTTMs       float64 `json:"clock_rtt_ms"`    // the round trip the offset was measured over
	BeganLateMs float64 `json:"began_late_ms"`   // after the agreed start, on its clock
	// Tags are its own counters and latency per tag, before the merge.
	Tags   []AgentTag `json:"tags"`
	Client Usage      `json:"client"` // its own process over the load
	// ClientTimeline is its own process's samples, on the cell's clock.
	ClientTimeline []Sample `json:"client_timeline,omitempty"`
	ClientBound    bool     `json:"client_bound"`
	ClientBoundWhy string   `json:"client_bound_why,omitempty"`
}

// AgentTag is one agent's figures for one tag.
type AgentTag struct {
	Tag       string  `json:"tag"`
	Sent      int64   `json:"sent"`
	Completed int64   `json:"completed"`
	Late      int64   `json:"late"`
	P50       float64 `json:"p50_ms"`
	P99       float64 `json:"p99_ms"`
	Max       float64 `json:"max_ms"`
	// Timeline is its own windows, on the cell's clock (the one the server's samples use).
	Timeline []Window `json:"timeline,omitempty"`
}

// Topology is where a multi-host run ran: the contender's host and CPUs, and each load
// agent's. A one-machine run has none (Environment's CPUs say it all).
type Topology struct {
	Launcher string     `json:"launcher"` // "agents" (given addresses), "ssh", "kubernetes", "in-process"
	Server   TopoHost   `json:"server"`
	Agents   []TopoHost `json:"agents"`
}

// TopoHost is one host of a topology.
type TopoHost struct {
	Name string `json:"name"`
	Host string `json:"host"`
	Addr string `json:"addr,omitempty"`
	CPUs string `json:"cpus"`
}

// Delivery faults: one vocabulary for every load that checks what it was sent.
const (
	FaultLost       = "lost"         // never arrived, and the server did not say it dropped it
	FaultDuplicated = "duplicated"   // arrived more than once
	FaultReordered  = "out-of-order" // arrived after a later one of the same sender
	FaultLeaked     = "leaked"       // meant for someone else (chat: another room's message)
	FaultMalformed  = "malformed"    // broke the protocol's frame
	// FaultDroppedUnasked: the server dropped (and counted) messages it was told not to drop
	// (/stream with BACKPRESSURE=off).
	FaultDroppedUnasked = "dropped-without-backpressure"
)

// faultOrder is how faults are listed.
var faultOrder = []string{FaultLost, FaultDuplicated, FaultReordered, FaultLeaked, FaultMalformed, FaultDroppedUnasked}

// FormatFaults writes faults for people, e.g. "3 duplicated, 1 leaked": the lab's kinds in
// their order, then any other.
func FormatFaults(faults map[string]int64) string {
	kinds := slices.Clone(faultOrder)
	for _, k := range slices.Sorted(maps.Keys(faults)) {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	var parts []string
	for _, k := range kinds {
		if n := faults[k]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k))
		}
	}
	return strings.Join(parts, ", ")
}

// Memory is the cap a contender ran under and what it came to.
type Memory struct {
	CapMB float64 `json:"cap_mb"`
	// By is how the cap was set: MemoryByCgroup (a memory cgroup around the process tree) or
	// MemoryByHeap (only the runtime's own heap limit, where no cgroup could be made: Why
	// says why).
	By        string  `json:"by"`
	Why       string  `json:"why,omitempty"`
	MaxUsedMB float64 `json:"max_used_mb,omitempty"` // the cgroup's high-water mark
	OOMKills  int     `json:"oom_kills"`             // processes the kernel killed at the cap
}

// How a memory cap was set.
const (
	MemoryByCgroup = "cgroup"
	MemoryByHeap   = "heap"
)

// Outcome is how a cell ended.
type Outcome struct {
	Status   string   `json:"status"` // one of the Outcome* statuses
	Detail   string   `json:"detail,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"`
	Signal   string   `json:"signal,omitempty"`
	LogTail  []string `json:"log_tail,omitempty"`
	// Killed: the contender did not exit within the grace period after SIGTERM, and its
	// process group was killed (SIGKILL), whatever the status.
	Killed bool `json:"killed,omitempty"`
	// StoppedAnswering is, for an unresponsive contender, when it last answered the lab, in
	// seconds from the load's start (negative: during the warm-up).
	StoppedAnswering *float64 `json:"stopped_answering_s,omitempty"`
}

// Outcome statuses.
const (
	OutcomeOK          = "ok"
	OutcomeCrashed     = "crashed"       // the contender exited during the cell
	OutcomeUnready     = "unready"       // it never became ready
	OutcomeInterrupted = "interrupted"   // the user stopped the run
	OutcomeError       = "error"         // the lab could not run the cell
	OutcomeUnsupported = "unsupported"   // the contender lacks the feature the load needs (see its README)
	OutcomeSkipped     = "skipped"       // a lower level of the same ladder already broke
	OutcomeOutOfMemory = "out-of-memory" // it died at its memory cap (killed by the kernel, or its runtime gave up)
	// OutcomeUnresponsive: it stopped answering: the lab's polls went unanswered for longer
	// than SilenceLimit, though its process lived on.
	OutcomeUnresponsive = "unresponsive"
)

// Ran says whether the load ran against the contender in a cell that ended so: its figures
// and resources say something, even if the contender died or froze on the way (an
// unresponsive contender was driven to the end: what it delivered before it stopped
// answering is part of the story, as a crashed one's is).
func Ran(status string) bool {
	switch status {
	case OutcomeOK, OutcomeCrashed, OutcomeOutOfMemory, OutcomeUnresponsive:
		return true
	}
	return false
}

// MinSilence is the least SilenceLimit.
const MinSilence = 5 * time.Second

// SilenceLimit is how long a contender may leave the lab's polls unanswered (its readiness,
// /stream/stats) before it counts as unresponsive: twice what the load itself waits for an
// answer (a starved server queues a poll behind requests that each wait that long), and
// never less than MinSilence. timeout is the level's per-request timeout (0: none). It is
// the one notion of unresponsive: the lab's watchdog and the stream judge both use it.
func SilenceLimit(timeout time.Duration) time.Duration { return max(MinSilence, 2*timeout) }

// Latency summarises a histogram, in milliseconds.
type Latency struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean_ms"`
	Min   float64 `json:"min_ms"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	P999  float64 `json:"p999_ms"`
	Max   float64 `json:"max_ms"`
}

// Tag is everything measured for one tagged stream in a cell.
type Tag struct {
	TagStats
	RPS      float64  `json:"rps"`      // completed responses per second of load
	Response Latency  `json:"response"` // from the intended send time
	Service  Latency  `json:"service"`  // from the actual send
	Timeline []Window `json:"timeline"`
	// The full histograms, HdrHistogram V2 compressed and base64, so that repeats and
	// re-rendered reports combine distributions rather than percentiles.
	ResponseHist string `json:"response_hist"`
	ServiceHist  string `json:"service_hist"`
}

// Resources is a process tree's use over the cell.
type Resources struct {
	Summary  Usage    `json:"summary"`
	Timeline []Sample `json:"timeline"`
	CPUs     string   `json:"cpus"`
	// Unprobed says why there are no figures (a target given without its process): not zeros.
	Unprobed string `json:"unprobed,omitempty"`
}

// CellSummary combines the repeats of one contender at one level.
type CellSummary struct {
	Contender string       `json:"contender"`
	Level     string       `json:"level"`
	Repeats   int          `json:"repeats"`
	Outcomes  []string     `json:"outcomes"`
	Tags      []TagSummary `json:"tags"`
	// Resources and latency spread over the repeats that ended ok; Numbers over every repeat
	// the load ran in (the rate of a contender that died on the way is part of the story).
	CPUPct  Spread `json:"cpu_pct"`
	RSSMB   Spread `json:"rss_mb_max"`
	Threads Spread `json:"threads_max"`
	// DatabaseCPUPct is the lab's PostgreSQL's CPU over the same repeats, where the level had
	// one: beside CPUPct, it shows when the database, not the stack, was the limit.
	DatabaseCPUPct *Spread           `json:"database_cpu_pct,omitempty"`
	Numbers        map[string]Spread `json:"numbers,omitempty"`
	Noisy          bool              `json:"noisy"` // some figure varied by more than NoisySpread across repeats
	NoisyWhy       []string          `json:"noisy_why,omitempty"`
	ClientBnd      bool              `json:"client_bound"`
	SharedCPU      bool              `json:"shared_cpu"` // some repeat's server CPUs were shared with other work
	// ServerUnprobed says why the server has no resources (a target without --target-pid):
	// CPUPct, RSSMB and Threads are then empty, not zeros. Unverified: some repeat was.
	ServerUnprobed string `json:"server_unprobed,omitempty"`
	Unverified     bool   `json:"unverified,omitempty"`
	// Faults are the cells' delivery faults by kind, summed over every repeat the load ran
	// in: a contender with any is marked and not ranked.
	Faults map[string]int64 `json:"faults,omitempty"`
	// Profile is the repeats' CPU profiles merged (MergeProfiles), when the run took them;
	// ClientProfile the client's.
	Profile       *Profile `json:"profile,omitempty"`
	ClientProfile *Profile `json:"client_profile,omitempty"`
}

// Faulty says whether some repeat had delivery faults.
func (s CellSummary) Faulty() bool { return len(s.Faults) > 0 }

// TagSummary is one tag over the repeats: percentiles of the merged histograms, and the
// per-repeat figures' median and spread.
type TagSummary struct {
	Tag      string           `json:"tag"`
	Merged   Latency          `json:"merged"` // response time, all repeats' histograms merged
	Service  Latency          `json:"service_merged"`
	P99      Spread           `json:"p99_ms"`
	P50      Spread           `json:"p50_ms"`
	RPS      Spread           `json:"rps"`
	Sent     int64            `json:"sent"`   // attempts over every repeat the load ran in
	Errors   int64            `json:"errors"` // attempts that ended in no correct answer, by kind in ErrKinds
	Non2xx   int64            `json:"non_2xx"`
	ErrKinds map[string]int64 `json:"error_kinds,omitempty"`
	// ErrorPct is Errors per Sent, in %: shown beside every latency and throughput.
	ErrorPct float64 `json:"error_pct"`
}

// FailedPct is the % of attempts that got a wrong answer or none for a reason other than
// slowness (a wrong status or body, a refused, reset or closed connection): a timeout is a
// slow answer, already in the latency, the rest are failures no latency shows.
func (t TagSummary) FailedPct() float64 {
	if t.Sent == 0 {
		return 0
	}
	return float64(t.Errors-t.ErrKinds[ErrKindTimeout]) / float64(t.Sent) * 100
}

// ErrKindTimeout is the error kind of an attempt that got no answer in time (load.ErrTimeout).
const ErrKindTimeout = "timeout"

// FailedPct is the most any of the summary's tags failed, in % (TagSummary.FailedPct), and
// which tag.
func (s CellSummary) FailedPct() (float64, string) {
	var most float64
	var tag string
	for _, t := range s.Tags {
		if p := t.FailedPct(); p > most {
			most, tag = p, t.Tag
		}
	}
	return most, tag
}

// Spread is a figure over repeats.
type Spread struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// Pct is (max − min) / median × 100: how far apart the repeats landed.
	Pct float64 `json:"spread_pct"`
}

// Verdict is a scenario's judgement of one contender.
type Verdict struct {
	Contender string `json:"contender"`
	Level     string `json:"level,omitempty"`
	Verdict   string `json:"verdict"` // the scenario's word, e.g. isolated | starved
	Tone      Tone   `json:"tone"`    // how the word reads: good, bad, mixed or neutral
	Why       string `json:"why"`
}

// Claim is one conclusion of the study, checked against this run.
type Claim struct {
	ID      string `json:"id"`
	Text    string `json:"text"`
	Verdict string `json:"verdict"` // one of the Claim* words
	Why     string `json:"why"`
	// Conditions are what the verdict depends on, each with where it comes from and what
	// this run gave: a claim whose conditions the run did not give is untested here.
	Conditions []Condition `json:"conditions,omitempty"`
}

// Condition is one thing a claim's verdict depends on (server cores, threads, connections),
// the least the claim needs, where that comes from, and what the run gave.
type Condition struct {
	Name   string  `json:"name"`   // e.g. "server cores"
	Needs  float64 `json:"needs"`  // the least the claim needs
	Source string  `json:"source"` // a seed line, "the study's published code", or "arena's choice"
	Given  float64 `json:"given"`  // what the run gave
	Met    bool    `json:"met"`
}

// A claim's verdicts: a claim with no evidence is untested, never held; one whose
// conditions this run did not give is untested here, never failed; one whose repeats cannot
// decide it (an order they do not separate, an interval that straddles a tolerance's edge)
// is not shown, neither held nor failed.
const (
	ClaimHolds        = "holds"
	ClaimPartly       = "partly"
	ClaimFails        = "fails"
	ClaimUntested     = "untested"
	ClaimUntestedHere = "untested here"
	// ClaimHoldsWhereTested: every part the run decided holds and the rest were not run, not
	// at their conditions, or not shown: no mark against the claim, and not yet all of it.
	ClaimHoldsWhereTested = "holds where tested"
	// ClaimNotShown: measured, but the repeats cannot decide: a tie is no evidence either way.
	ClaimNotShown = "not shown"
)

// Untested says whether a claim verdict is one of the words for no evidence.
func Untested(verdict string) bool { return verdict == ClaimUntested || verdict == ClaimUntestedHere }

// Tone is how a word reads in a report.
type Tone string

const (
	Good    Tone = "good"
	Bad     Tone = "bad"
	Mixed   Tone = "mixed"
	Neutral Tone = "neutral"
)

// ToneOf is the tone of the lab's own words: claim verdicts, run statuses, cell outcomes and
// verify results. A scenario's verdict words carry their tone in the Verdict.
func ToneOf(word string) Tone {
	switch word {
	case ClaimHolds, RunComplete, OutcomeOK, VerifyPassed:
		return Good
	case ClaimFails, RunFailed, RunInterrupted, OutcomeCrashed, OutcomeUnready, OutcomeError, OutcomeOutOfMemory, OutcomeUnresponsive:
		return Bad
	case ClaimPartly, RunRunning:
		return Mixed
	case ClaimNotShown: // no evidence either way: neither good nor bad
		return Neutral
	}
	if strings.HasPrefix(word, VerifyFailed) {
		return Bad
	}
	return Neutral
}
