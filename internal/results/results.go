// Package results is the lab's record of a run: the schema of results.json (documented in
// docs/results.md), its atomic writing, the CSV beside it, and the summary of repeats.
package results

import (
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/probe"
)

// SchemaVersion names the shape of results.json; it changes when a field changes meaning.
const SchemaVersion = "arena.results/v1"

// Run is one invocation of `arena run`: every cell it measured and what they add up to.
type Run struct {
	Schema     string        `json:"schema"`
	ID         string        `json:"id"`
	Command    []string      `json:"command"`
	Started    time.Time     `json:"started"`
	Finished   *time.Time    `json:"finished,omitempty"`
	Status     string        `json:"status"` // running | complete | interrupted | failed
	Scenario   ScenarioInfo  `json:"scenario"`
	Env        Environment   `json:"environment"`
	Contenders []Contender   `json:"contenders"`
	Cells      []Cell        `json:"cells"`
	Summary    []CellSummary `json:"summary"`  // repeats combined, per contender × level
	Verdicts   []Verdict     `json:"verdicts"` // per contender
	Claims     []Claim       `json:"claims"`   // the study's conclusions, judged
}

// ScenarioInfo says what was run and how it was shaped.
type ScenarioInfo struct {
	Name     string   `json:"name"`
	Title    string   `json:"title"`
	Study    string   `json:"study"` // the seed it reproduces
	Preset   string   `json:"preset"`
	Quick    bool     `json:"quick"`
	Repeat   int      `json:"repeat"`
	Levels   []Level  `json:"levels"`
	Notes    []string `json:"notes,omitempty"`
	Duration float64  `json:"duration_s"`
	Timeout  float64  `json:"timeout_s"`
}

// Level is one load level of a scenario, as planned.
type Level struct {
	Name string `json:"name"`
	// Group, X and XName place the level on a curve: figures are drawn against X (e.g.
	// connections), one line per contender and group.
	Group             string            `json:"group,omitempty"`
	X                 float64           `json:"x,omitempty"`
	XName             string            `json:"x_name,omitempty"`
	Downstream        bool              `json:"downstream,omitempty"` // the lab's downstream served /data
	DownstreamDelayMs float64           `json:"downstream_delay_ms,omitempty"`
	Load              string            `json:"load"` // human description, e.g. "open loop: instant 10/s, …"
	Env               map[string]string `json:"env,omitempty"`
	Streams           []StreamPlan      `json:"streams"`
}

// StreamPlan is one tagged stream of a level.
type StreamPlan struct {
	Tag         string  `json:"tag"`
	Path        string  `json:"path"`
	Mode        string  `json:"mode"` // open | closed
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
	Verified    string   `json:"verified"` // passed | failed: … | skipped
}

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
	// ClientBound says the client, not the server, may have set the pace: it used ≥ 90 %
	// of its cores or sent late against its schedule. Such a cell is not the server's number.
	ClientBound    bool   `json:"client_bound"`
	ClientBoundWhy string `json:"client_bound_why,omitempty"`
	Hlog           string `json:"hlog,omitempty"` // path relative to the run's folder
	// Stream is what a /stream load saw beyond latency (study 003); Memory the cap the
	// contender ran under, when the level set one.
	Stream *Stream `json:"stream,omitempty"`
	Memory *Memory `json:"memory,omitempty"`
}

// Stream is what the clients of a /stream load received and what the server said it did.
type Stream struct {
	Clients     int     `json:"clients"`
	Connected   int     `json:"connected"`
	SlowClients int     `json:"slow_clients"`
	ReadDelayMs float64 `json:"read_delay_ms,omitempty"` // per message, for the slow ones
	Rate        int     `json:"rate_per_client"`         // messages/s asked of each client's generator; 0: as fast as it can
	Size        int     `json:"size_bytes"`
	Delivered   int64   `json:"delivered"`
	PerSecond   float64 `json:"delivered_per_s"`
	// PerClient is each client's messages/s: the slowest, the median and the fastest.
	PerClient Spread `json:"per_client_per_s"`
	// Gaps are messages a client never got (jumps in seq): the server dropped them.
	Gaps        int64 `json:"gaps"`
	Malformed   int64 `json:"malformed"`
	OutOfOrder  int64 `json:"out_of_order"`
	ClosedEarly int   `json:"closed_early"` // clients the server closed or lost before the end
	// Server is the last answer of /stream/stats, taken after the clients closed.
	Server        *StreamStats  `json:"server,omitempty"`
	StatsTimeline []StatsSample `json:"stats_timeline"`
	// StatsFailed counts polls of /stream/stats with no answer within 2 s: the server was
	// unresponsive (the study's "unresponded").
	StatsFailed int  `json:"stats_failed"`
	Responsive  bool `json:"responsive_at_end"`
}

// StreamStats is /stream/stats.
type StreamStats struct {
	Clients   int64 `json:"clients"`
	Generated int64 `json:"generated"`
	Sent      int64 `json:"sent"`
	Dropped   int64 `json:"dropped"`
}

// StatsSample is one poll of /stream/stats.
type StatsSample struct {
	T  float64 `json:"t"` // seconds since the load started
	OK bool    `json:"ok"`
	StreamStats
}

// Memory is the cap a contender ran under and what it came to.
type Memory struct {
	CapMB float64 `json:"cap_mb"`
	// By is how the cap was set: "cgroup" (a memory cgroup around the process tree) or
	// "heap" (only the runtime's own heap limit, where no cgroup could be made).
	By        string  `json:"by"`
	MaxUsedMB float64 `json:"max_used_mb,omitempty"` // the cgroup's high-water mark
	OOMKills  int     `json:"oom_kills"`             // processes the kernel killed at the cap
}

// Outcome is how a cell ended.
type Outcome struct {
	Status   string   `json:"status"` // ok | crashed | out-of-memory | unready | interrupted | error | unsupported | skipped
	Detail   string   `json:"detail,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"`
	Signal   string   `json:"signal,omitempty"`
	LogTail  []string `json:"log_tail,omitempty"`
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
)

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
	load.TagStats
	RPS      float64       `json:"rps"`      // completed responses per second of load
	Response Latency       `json:"response"` // from the intended send time
	Service  Latency       `json:"service"`  // from the actual send
	Timeline []load.Window `json:"timeline"`
	// The full histograms, HdrHistogram V2 compressed and base64, so that repeats and
	// re-rendered reports combine distributions rather than percentiles.
	ResponseHist string `json:"response_hist"`
	ServiceHist  string `json:"service_hist"`
}

// Resources is a process tree's use over the cell.
type Resources struct {
	Summary  probe.Summary  `json:"summary"`
	Timeline []probe.Sample `json:"timeline"`
	CPUs     string         `json:"cpus"`
}

// CellSummary combines the repeats of one contender at one level.
type CellSummary struct {
	Contender string       `json:"contender"`
	Level     string       `json:"level"`
	Repeats   int          `json:"repeats"`
	Outcomes  []string     `json:"outcomes"`
	Tags      []TagSummary `json:"tags"`
	CPUPct    Spread       `json:"cpu_pct"`
	RSSMB     Spread       `json:"rss_mb_max"`
	Threads   Spread       `json:"threads_max"`
	Noisy     bool         `json:"noisy"` // some figure varied by more than NoisySpread across repeats
	NoisyWhy  []string     `json:"noisy_why,omitempty"`
	ClientBnd bool         `json:"client_bound"`
}

// TagSummary is one tag over the repeats: percentiles of the merged histograms, and the
// per-repeat figures' median and spread.
type TagSummary struct {
	Tag      string           `json:"tag"`
	Merged   Latency          `json:"merged"` // response time, all repeats' histograms merged
	Service  Latency          `json:"service_merged"`
	P99      Spread           `json:"p99_ms"`
	P50      Spread           `json:"p50_ms"`
	RPS      Spread           `json:"rps"`
	Errors   int64            `json:"errors"`
	Non2xx   int64            `json:"non_2xx"`
	ErrKinds map[string]int64 `json:"error_kinds,omitempty"`
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
	Verdict   string `json:"verdict"` // e.g. isolated | starved | n/a
	Why       string `json:"why"`
}

// Claim is one conclusion of the study, checked against this run.
type Claim struct {
	ID      string `json:"id"`
	Text    string `json:"text"`
	Verdict string `json:"verdict"` // holds | fails | partly | untested
	Why     string `json:"why"`
}
