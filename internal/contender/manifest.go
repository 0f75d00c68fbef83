// Package contender knows the contenders: their manifests, their builds and the life of a
// running one (start pinned, wait for ready, watch, stop the whole process group).
package contender

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"
)

// ManifestFile is the file that makes a folder of contenders/ a contender.
const ManifestFile = "contender.toml"

// Models are the concurrency models a contender may declare.
var Models = []string{
	"thread-per-request",   // a pool thread blocks for each request (Tomcat, Jetty)
	"async-servlet",        // servlet threads released, futures completed elsewhere
	"reactive",             // Reactor on an event loop (WebFlux)
	"virtual-threads",      // blocking code on virtual threads
	"event-loop",           // callbacks on a few loop threads (Vert.x, Netty, Node)
	"event-loop-bus",       // loop handlers that talk over a message bus (Vert.x EventBus)
	"event-loop-workers",   // IO loop for fast work, a worker pool for blocking work (Undertow)
	"event-loop-processes", // one event loop per process, several processes (Node cluster)
	"actors",               // actor messages and futures (Play on Akka)
	"goroutines",           // a goroutine per request, blocking calls (Go)
	"coroutines",           // a coroutine per request, suspending waits on a few threads (Kotlin: Ktor)
}

// Features are the parts of the contract beyond HTTP that a contender may implement.
var Features = []string{"chat", "stream", "db"}

// Knobs are the contract's variables a contender may honour.
var Knobs = []string{"WORKER_THREADS", "DOWNSTREAM_URL", "BACKPRESSURE", "PPROF_ADDR", "BIND_ADDRESS"}

// Manifest is a contender's contender.toml.
type Manifest struct {
	Name        string   `toml:"name"`
	Description string   `toml:"description"`
	Stack       string   `toml:"stack"`
	Model       string   `toml:"model"`
	Runtime     string   `toml:"runtime"`
	Build       string   `toml:"build"`
	Sources     []string `toml:"sources"`
	Artifact    string   `toml:"artifact"` // optional: a build output whose absence forces a rebuild
	Start       string   `toml:"start"`
	Knobs       []string `toml:"knobs"`
	Features    []string `toml:"features"` // "chat" (/chat), "stream" (/stream), "db" (/db): verified and run only when listed
	Notes       string   `toml:"notes"`
	// Requires and MemoryEnv are for runtime "other" alone: the commands the build and start
	// need on PATH, and the variable that holds its heap (e.g. "MAX_HEAP_MB={heap_mb}").
	Requires  []string `toml:"requires"`
	MemoryEnv string   `toml:"memory_env"`

	Dir string `toml:"-"` // absolute path of the contender's folder
}

// Has reports whether the contender implements a feature of the contract beyond HTTP.
func (m *Manifest) Has(feature string) bool { return slices.Contains(m.Features, feature) }

// Honours reports whether the contender takes the contract variable knob.
func (m *Manifest) Honours(knob string) bool { return slices.Contains(m.Knobs, knob) }

// Load reads and checks the manifest in dir.
func Load(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	var m Manifest
	md, err := toml.DecodeFile(path, &m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if undec := md.Undecoded(); len(undec) > 0 {
		return nil, fmt.Errorf("%s: unknown field %q (known: name, description, stack, model, runtime, build, sources, artifact, start, knobs, features, notes, requires, memory_env)", path, undec[0].String())
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	m.Dir = abs
	if err := m.check(filepath.Base(abs)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &m, nil
}

// validName is what a contender may be called: it names files, cgroups, URLs and report
// entries, so nothing that could mean anything else in any of them.
var validName = regexp.MustCompile(`^[a-z0-9-]+$`)

func (m *Manifest) check(folder string) error {
	var errs []error
	if m.Name != folder {
		errs = append(errs, fmt.Errorf("name %q must equal the folder's name %q", m.Name, folder))
	}
	if !validName.MatchString(m.Name) {
		errs = append(errs, fmt.Errorf("name %q: use only a-z, 0-9 and -", m.Name))
	}
	if strings.TrimSpace(m.Stack) == "" {
		errs = append(errs, errors.New("stack is empty: say which stack and version"))
	}
	if !slices.Contains(Models, m.Model) {
		errs = append(errs, fmt.Errorf("model %q is not one of %s", m.Model, strings.Join(Models, ", ")))
	}
	errs = append(errs, m.checkRuntime()...)
	if strings.TrimSpace(m.Start) == "" {
		errs = append(errs, errors.New("start is empty: the command that runs the server"))
	}
	if m.Build != "" && len(m.Sources) == 0 {
		errs = append(errs, errors.New("sources is empty: list what the build reads, so a change rebuilds it"))
	}
	for _, k := range m.Knobs {
		if !slices.Contains(Knobs, k) {
			errs = append(errs, fmt.Errorf("knob %q is not one of %s", k, strings.Join(Knobs, ", ")))
		}
	}
	for _, f := range m.Features {
		if !slices.Contains(Features, f) {
			errs = append(errs, fmt.Errorf("feature %q is not one of %s", f, strings.Join(Features, ", ")))
		}
	}
	return errors.Join(errs...)
}

// checkRuntime: a known runtime, or "other" with the memory setting spelled out (or said to
// be none) and what it needs; requires and memory_env belong to "other" alone.
func (m *Manifest) checkRuntime() []error {
	switch {
	case !slices.Contains(Runtimes, m.Runtime):
		return []error{fmt.Errorf("runtime %q is not one of %s (a language arena has no entry for: %q, with requires and memory_env)", m.Runtime, strings.Join(Runtimes, ", "), OtherRuntime)}
	case m.Runtime != OtherRuntime && (len(m.Requires) > 0 || m.MemoryEnv != ""):
		return []error{fmt.Errorf("requires and memory_env are for runtime %q; runtime %s has its own", OtherRuntime, m.Runtime)}
	case m.Runtime != OtherRuntime:
		return nil
	}
	var errs []error
	if len(m.Requires) == 0 {
		errs = append(errs, errors.New(`runtime "other": requires is empty: name the commands the build and start need (e.g. ["sh"])`))
	}
	name, value, ok := strings.Cut(m.MemoryEnv, "=")
	if m.MemoryEnv != "none" && (!ok || !validEnvName.MatchString(name) || !strings.Contains(value, HeapPlaceholder)) {
		errs = append(errs, fmt.Errorf(`runtime "other": memory_env %q: give NAME=...%s... (the heap in MiB goes where %s is), or "none" when the runtime has no heap setting`, m.MemoryEnv, HeapPlaceholder, HeapPlaceholder))
	}
	return errs
}

var validEnvName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Discover loads every contender under root (a folder per contender; names starting with
// "_" or "." hold shared parts and are skipped), sorted by name.
func Discover(root string) ([]*Manifest, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("reading contenders: %w", err)
	}
	var out []*Manifest
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || strings.HasPrefix(e.Name(), "_") || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err != nil {
			continue
		}
		m, err := Load(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, errors.Join(errs...)
}

// Select picks contenders by name, in the order given; an unknown name is an error that
// lists the known ones.
func Select(all []*Manifest, names []string) ([]*Manifest, error) {
	if len(names) == 0 {
		return all, nil
	}
	byName := map[string]*Manifest{}
	var known []string
	for _, m := range all {
		byName[m.Name] = m
		known = append(known, m.Name)
	}
	var out []*Manifest
	for _, n := range names {
		m, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("no contender %q (known: %s)", n, strings.Join(known, ", "))
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out, nil
}
