package contender

import (
	"context"
	"errors"
	"fmt"
	"os"
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
	// Install, when set, puts the runtime's own binaries in the lab's tools folder (once;
	// kept while they answer the right version) and returns their bin folder, which goes
	// first on PATH: the runtime the lab benchmarks is then the one it names, not the
	// machine's (node: InstallNode).
	Install func(ctx context.Context, root string, note func(string)) (binDir string, err error)
	// Version is the runtime's version as the lab would run it (e.g. "v24.22.3"), "" when
	// it is not there.
	Version func(root string) string
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
	{Name: "java", StartStop: 9 * time.Second, Version: func(string) string {
		if j, err := FindJDK(); err == nil {
			return j.Version
		}
		return ""
	}},
	// node: the lab installs its own Node (NodeVersion) with the machine's npm, which also
	// runs the contenders' `npm ci` (under the lab's node, first on PATH: npm's script
	// starts with `#!/usr/bin/env node`); the Node package holds no npm of its own.
	{Name: "node", Requires: []Tool{{"npm", nodeNeedsNpm}, {"node", nodeNeedsNpm}}, StartStop: 2 * time.Second,
		Memory: func(heapMB int, flags []string) []string {
			opts := append([]string{fmt.Sprintf("--max-old-space-size=%d", heapMB)}, flags...)
			return []string{"NODE_OPTIONS=" + strings.Join(opts, " "), "NODE_ENV=production"}
		},
		Install: InstallNode, Version: LabNodeVersion},
	{Name: "go", Requires: []Tool{{"go", "Go 1.22 or newer (go.dev/dl)"}}, StartStop: time.Second,
		Memory:  func(heapMB int, _ []string) []string { return []string{fmt.Sprintf("GOMEMLIMIT=%dMiB", heapMB)} },
		Version: func(string) string { return strings.TrimPrefix(Versions("go", "env", "GOVERSION"), "go") }},
	{Name: "python", Requires: []Tool{{"python3", "apt-get install python3 python3-venv"}}, StartStop: 2 * time.Second,
		Version: func(string) string { return strings.TrimPrefix(Versions("python3", "--version"), "Python ") }},
	// Debian 12's cargo (0.66) is older than the Rust contenders' crates allow.
	{Name: "rust", Requires: []Tool{{"cargo", "a current Rust toolchain with rustup (rustup.rs; Debian 12's apt cargo 0.66 is too old for the contenders' crates)"}}, StartStop: time.Second,
		Version: func(string) string { return firstField(Versions("rustc", "--version"), 1) }},
}

// nodeNeedsNpm is the node runtime's hint: the lab installs Node itself, with npm.
var nodeNeedsNpm = "npm reaching the npm registry (Debian and Ubuntu: apt-get install npm): arena installs Node.js " + NodeVersion + " with it into .arena/tools"

// firstField is s's i-th space-separated field, "" when it has fewer.
func firstField(s string, i int) string {
	f := strings.Fields(s)
	if i >= len(f) {
		return ""
	}
	return f[i]
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

// PrepareToolchains readies the toolchains ms need: for each runtime that brings its own
// (Install), it is installed into root's tools folder and its bin folder put first on this
// process's PATH, which Settings.Env hands every build and start, and which the recorded
// versions read; then CheckToolchain.
func PrepareToolchains(ctx context.Context, root string, ms []*Manifest, note func(string)) error {
	installed := map[string]bool{}
	for _, m := range ms {
		r := RuntimeOf(m)
		if r.Install == nil || installed[r.Name] {
			continue
		}
		installed[r.Name] = true
		bin, err := r.Install(ctx, root, note)
		if err != nil {
			return fmt.Errorf("contender %s (runtime %s): %w", m.Name, m.Runtime, err)
		}
		path := os.Getenv("PATH")
		if strings.HasPrefix(path, bin+string(os.PathListSeparator)) { // prepared before
			continue
		}
		if err := os.Setenv("PATH", bin+string(os.PathListSeparator)+path); err != nil {
			return err
		}
	}
	return CheckToolchain(ms)
}

// RuntimeVersion is the version of runtime name as the lab runs it, "" when unknown or absent.
func RuntimeVersion(root, name string) string {
	for _, r := range runtimes {
		if r.Name == name && r.Version != nil {
			return r.Version(root)
		}
	}
	return ""
}

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
