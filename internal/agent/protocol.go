// Package agent runs a level's load from several client hosts and merges what they measured
// exactly. An agent is the arena binary started as `arena agent`; the coordinator (the
// `arena run` the user typed) asks each agent for its share of a level over a small HTTP +
// JSON protocol, all from one start time agreed in advance, and adds their histograms.
//
// The protocol, version 1 (docs/distributed.md has it whole):
//
//	GET  /v1/hello  → Hello: protocol, build version, name, host, CPUs, pid
//	GET  /v1/clock  → Clock: the agent's time, for the coordinator's offset estimate
//	POST /v1/load   Job → Share: runs its share from Job.Start, answers when it is done
//
// Every call carries the run's secret, and an agent holds every job to its own bounds and
// server addresses (guard.go). A coordinator refuses an agent of another protocol or build
// (Check).
package agent

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// Protocol is the version of the wire format below; a change to it raises the number.
const Protocol = 1

// DefaultPort is where an agent listens unless told otherwise.
const DefaultPort = 7600

// Version is the build: its VCS revision when the binary carries one ("devel" when not,
// "+dirty" for a changed tree), and the first 12 hex digits of the executable's SHA-256.
// Agents and coordinator must agree on it, because an agent plans the level itself and
// another build could plan another load; the hash tells two "devel" builds apart. Go builds
// are reproducible: the same sources, toolchain and flags give the same hash on every host.
func Version() string { return version() }

var version = sync.OnceValue(func() string {
	rev, dirty := "devel", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value[:min(12, len(s.Value))]
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if dirty {
		rev += "+dirty"
	}
	return rev + "-" + exeHash()
})

// exeHash is the running executable's SHA-256, 12 hex digits ("unknown" if unreadable).
func exeHash() string {
	path, err := os.Executable()
	if err != nil {
		return "unknown"
	}
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "unknown"
	}
	return hex.EncodeToString(h.Sum(nil))[:12]
}

// Hello is who an agent is.
type Hello struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	Name     string `json:"name"`
	Host     string `json:"host"`
	CPUs     string `json:"cpus"` // the CPUs it may run on (its affinity), as a taskset list
	Pid      int    `json:"pid"`
}

// Check refuses an agent that speaks another protocol or runs another build.
func (h Hello) Check() error {
	if h.Protocol != Protocol {
		return fmt.Errorf("agent %s speaks protocol %d, this arena %d: run the same arena build on every host", h.Name, h.Protocol, Protocol)
	}
	if v := Version(); h.Version != v {
		return fmt.Errorf("agent %s runs arena build %s, this one %s: run the same arena build on every host", h.Name, h.Version, v)
	}
	return nil
}

// Clock is an agent's time when it answered.
type Clock struct {
	UnixNano int64 `json:"unix_nano"`
}

// Job is one share of one load of a level: the agent plans the scenario itself from the same
// options, takes the level's load (or one of its warm-ups), and runs its share.
type Job struct {
	Scenario string           `json:"scenario"`
	Options  scenario.Options `json:"options"`
	Level    string           `json:"level"`
	Warmup   int              `json:"warmup"` // -1: the level's load; k ≥ 0: its k-th warm-up
	Part     int              `json:"part"`   // this share, of Parts
	Parts    int              `json:"parts"`
	Target   string           `json:"target"` // host:port of the contender
	// Start is when every share begins, on the coordinator's clock; Offset is the agent's
	// clock minus the coordinator's, as measured, so the agent begins at Start + Offset.
	Start  time.Time     `json:"start"`
	Offset time.Duration `json:"offset_ns"`
	// Slack is how late past Start an agent may still begin; later, it refuses the job, and
	// the level is aborted rather than its schedule shifted.
	Slack time.Duration `json:"slack_ns"`
	// Interval is the timeline's window, counted from Start, the same on every agent so that
	// windows line up in absolute time.
	Interval time.Duration `json:"interval_ns"`
	// Closed, when set, is the load itself instead of a scenario's level: a plain closed
	// loop, for arena bench agents.
	Closed *ClosedJob `json:"closed,omitempty"`
}

// ClosedJob is a closed loop named in full: GET Path over Connections for Duration.
type ClosedJob struct {
	Tag         string        `json:"tag"`
	Path        string        `json:"path"`
	Connections int           `json:"connections"`
	Duration    time.Duration `json:"duration_ns"`
	Timeout     time.Duration `json:"timeout_ns"`
}

// Load is the closed loop the job names.
func (c ClosedJob) Load() load.ClosedLoop {
	return load.ClosedLoop{Tag: c.Tag, Request: load.Request{Path: c.Path}, Connections: c.Connections, Duration: c.Duration, Timeout: c.Timeout}
}

// Share is what one agent measured of its share.
type Share struct {
	Agent Hello `json:"agent"`
	// Began is how late after the agreed start (on its clock) the agent began: a few
	// microseconds when all is well.
	BeganLate time.Duration `json:"began_late_ns"`
	Elapsed   time.Duration `json:"elapsed_ns"`
	Tags      []ShareTag    `json:"tags"`
	// Client is the agent process's own resources over its load, from the agreed start.
	Client []results.Sample `json:"client"`
	// Figures are what the load measured beyond latency, as its JSON, with their kind.
	FiguresKind string          `json:"figures_kind,omitempty"`
	Figures     json.RawMessage `json:"figures,omitempty"`
	// Err: the load could not run (nobody could connect, say).
	Err string `json:"error,omitempty"`
	// figures are Figures as the load returned them, for a share that never left the
	// process: a load that is not split needs no Join to read them back.
	figures results.Figures
}

// ShareTag is one tag's record: its counters, its whole-load histograms and its windows,
// each histogram encoded as results.EncodeHist does (compressed HDR, base64).
type ShareTag struct {
	results.TagStats
	Response string        `json:"response_hist"`
	Service  string        `json:"service_hist"`
	Windows  []ShareWindow `json:"windows"`
}

// ShareWindow is window K of the timeline: [Start + K·Interval, Start + (K+1)·Interval),
// the last one cut where the load ended.
type ShareWindow struct {
	K      int     `json:"k"`
	EndS   float64 `json:"end_s"` // seconds from the agreed start
	Errors int64   `json:"errors"`
	// Timeouts are the timed-out attempts of Errors (their waits are in Hist).
	Timeouts int64  `json:"timeouts,omitempty"`
	Hist     string `json:"hist"`
}

// Self is this process as an agent: name (the host name when empty), host, pid and the CPUs
// its affinity allows.
func Self(name string) Hello {
	host, _ := os.Hostname()
	if name == "" {
		name = host
	}
	return Hello{Protocol: Protocol, Version: Version(), Name: name, Host: host, CPUs: affinity(), Pid: os.Getpid()}
}

// affinity is the CPUs this process may run on, as a taskset list ("0-1,3").
func affinity() string {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return ""
	}
	var out []string
	for c, start := 0, -1; c <= 1024; c++ {
		in := c < 1024 && set.IsSet(c)
		switch {
		case in && start < 0:
			start = c
		case !in && start >= 0:
			if c-1 == start {
				out = append(out, strconv.Itoa(start))
			} else {
				out = append(out, fmt.Sprintf("%d-%d", start, c-1))
			}
			start = -1
		}
	}
	return strings.Join(out, ",")
}
