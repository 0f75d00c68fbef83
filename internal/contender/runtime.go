package contender

import (
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// A Runtime is what the lab knows of a toolchain: the commands a contender of it needs on
// this machine, each with what to install, and how its memory is held to the lab's heap.
type Runtime struct {
	Name     string
	Requires []Tool
	// Memory is the environment that holds the runtime's heap to heapMB, with flags (a
	// profiler's) joined to its options where it has them; nil when the runtime has no heap
	// setting (CPython, Rust): the lab's memory cap holds it, and the manifest's notes say so.
	Memory func(heapMB int, flags []string) []string
	// StartStop is about how long a contender of it takes to start and stop between two
	// cells on its one core, for a plan's ETA, which counts warm-ups apart (the gap between
	// two cells of `arena run database --quick`, its short warm-up included, 2026-11-27: a
	// Spring Boot contender 12–18 s, other JVM servers 4–9, Node and Python 2–4, Go and Rust
	// 1–2.5).
	StartStop time.Duration
}

// Tool is a command a runtime needs, and what to install when it is missing.
type Tool struct{ Command, Install string }

// OtherRuntime is the runtime of a contender in a language arena has no entry for: its
// manifest names the commands it needs (requires) and its memory setting (memory_env, or
// "none").
const OtherRuntime = "other"

// runtimes are the toolchains arena knows. Java's JDK is found apart (FindJDK: the machine's
// default java may be too old); its build tool is the manifest's build command's (Maven,
// Gradle's wrapper), not the runtime's, so none is listed.
var runtimes = []Runtime{
	{Name: "java", StartStop: 9 * time.Second},
	{Name: "node", Requires: []Tool{{"node", "Node.js 20 or newer (nodejs.org, or apt-get install nodejs)"}, {"npm", "apt-get install npm"}}, StartStop: 2 * time.Second,
		Memory: func(heapMB int, flags []string) []string {
			opts := append([]string{fmt.Sprintf("--max-old-space-size=%d", heapMB)}, flags...)
			return []string{"NODE_OPTIONS=" + strings.Join(opts, " "), "NODE_ENV=production"}
		}},
	{Name: "go", Requires: []Tool{{"go", "Go 1.22 or newer (go.dev/dl)"}}, StartStop: time.Second,
		Memory: func(heapMB int, _ []string) []string { return []string{fmt.Sprintf("GOMEMLIMIT=%dMiB", heapMB)} }},
	{Name: "python", Requires: []Tool{{"python3", "apt-get install python3 python3-venv"}}, StartStop: 2 * time.Second},
	{Name: "rust", Requires: []Tool{{"cargo", "apt-get install cargo, or rustup (rustup.rs)"}}, StartStop: time.Second},
}

// Runtimes are the names a manifest's runtime may take.
var Runtimes = append(runtimeNames(), OtherRuntime)

func runtimeNames() []string {
	var out []string
	for _, r := range runtimes {
		out = append(out, r.Name)
	}
	return out
}

// RuntimeOf is m's runtime: a known one, or for "other" the one its manifest spells out.
func RuntimeOf(m *Manifest) Runtime {
	for _, r := range runtimes {
		if r.Name == m.Runtime {
			return r
		}
	}
	r := Runtime{Name: m.Runtime}
	for _, c := range m.Requires {
		r.Requires = append(r.Requires, Tool{Command: c, Install: "the manifest's requires names it"})
	}
	if m.MemoryEnv != "" && m.MemoryEnv != "none" {
		r.Memory = func(heapMB int, _ []string) []string {
			return []string{strings.ReplaceAll(m.MemoryEnv, HeapPlaceholder, strconv.Itoa(heapMB))}
		}
	}
	return r
}

// StartStopOf is runtime's StartStop; for one arena has no entry for ("other"), the longest
// it knows, so that an ETA errs long.
func StartStopOf(runtime string) time.Duration {
	var longest time.Duration
	for _, r := range runtimes {
		if r.Name == runtime {
			return r.StartStop
		}
		longest = max(longest, r.StartStop)
	}
	return longest
}

// HeapPlaceholder stands for the heap in MiB in an "other" runtime's memory_env.
const HeapPlaceholder = "{heap_mb}"

// CheckToolchain says, for each contender of ms whose runtime's commands are not on PATH,
// what is missing and what to install, so that a missing toolchain is one clear error before
// anything is built.
func CheckToolchain(ms []*Manifest) error {
	var errs []error
	for _, m := range ms {
		for _, t := range RuntimeOf(m).Requires {
			if _, err := exec.LookPath(t.Command); err != nil {
				errs = append(errs, fmt.Errorf("contender %s (runtime %s) needs %s, which is not on PATH: install %s", m.Name, m.Runtime, t.Command, t.Install))
			}
		}
	}
	return errors.Join(errs...)
}
