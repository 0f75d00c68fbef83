package results

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// RunSpec is what a run is, as one value: `arena run`'s flags build it, the lab runs it, a
// run records it, a reproduction's step embeds it, and a server agent receives it as JSON.
// Where the load comes from (agents, hosts, Kubernetes) and where the results go are the
// coordinator's, not the run's, and are not in it.
type RunSpec struct {
	Scenario string `json:"scenario"`
	Preset   string `json:"preset"` // "": the scenario's default
	Quick    bool   `json:"quick,omitempty"`
	// DurationS and TimeoutS override the preset's measured load length and per-request
	// timeout, in seconds (0: the preset's).
	DurationS float64  `json:"duration_s,omitempty"`
	TimeoutS  float64  `json:"timeout_s,omitempty"`
	Levels    []string `json:"levels,omitempty"` // all of the preset's when empty
	// Contenders are the contenders' names (all of the lab's when empty).
	Contenders []string `json:"contenders"`
	Repeat     int      `json:"repeat,omitempty"` // 0 counts as 1
	// Env sets contract variables for every level (a contender gets only those it honours).
	Env     map[string]string `json:"env,omitempty"`
	Profile bool              `json:"profile,omitempty"`
	Port    int               `json:"port,omitempty"` // 0: a free port per start
	// ServerCPUs, ClientCPUs (taskset lists) and HeapMB are the lab's; a run records those
	// it ran with.
	ServerCPUs string `json:"server_cpus,omitempty"`
	ClientCPUs string `json:"client_cpus,omitempty"`
	HeapMB     int    `json:"heap_mb,omitempty"`
	// Rebuild and Reverify build and verify contenders again even when unchanged.
	Rebuild  bool `json:"rebuild,omitempty"`
	Reverify bool `json:"reverify,omitempty"`
	// ID names the run's folder ("": its start and scenario).
	ID string `json:"id,omitempty"`
	// Target, when set, is a server the lab did not start (arena run --target): it is run in
	// the place of contenders, which the spec then has none of.
	Target *Target `json:"target,omitempty"`
}

// Differences are what of now differs from was in a way that changes what is measured:
// the plan (scenario, form, levels, contenders, repeats, variables, profiling) and where and
// with what the contenders ran. The port, the id and rebuilding or verifying again change
// nothing measured. Each is one line, "heap_mb: 512 → 1024".
func (was RunSpec) Differences(now RunSpec) []string {
	var out []string
	diff := func(name string, a, b any) {
		if as, bs := fmt.Sprint(a), fmt.Sprint(b); as != bs {
			out = append(out, fmt.Sprintf("%s: %s → %s", name, orNone(as), orNone(bs)))
		}
	}
	diff("scenario", was.Scenario, now.Scenario)
	diff("preset", was.Preset, now.Preset)
	diff("quick", was.Quick, now.Quick)
	diff("duration_s", was.DurationS, now.DurationS)
	diff("timeout_s", was.TimeoutS, now.TimeoutS)
	diff("levels", strings.Join(was.Levels, ","), strings.Join(now.Levels, ","))
	diff("contenders", strings.Join(sorted(was.Contenders), ","), strings.Join(sorted(now.Contenders), ","))
	diff("repeat", max(was.Repeat, 1), max(now.Repeat, 1))
	diff("env", envText(was.Env), envText(now.Env))
	diff("profile", was.Profile, now.Profile)
	diff("server_cpus", was.ServerCPUs, now.ServerCPUs)
	diff("client_cpus", was.ClientCPUs, now.ClientCPUs)
	diff("heap_mb", was.HeapMB, now.HeapMB)
	out = append(out, was.Target.Differences(now.Target)...)
	return out
}

// Differences are what of the machine and the lab differs between was and now in a way that
// changes what is measured: its cores and CPU model, the heap and CPUs the contenders and
// the client ran with, and arena's revision. A field either side did not record is not
// compared.
func (was Environment) Differences(now Environment) []string {
	var out []string
	diff := func(name string, a, b any, zero any) {
		if a == zero || b == zero {
			return
		}
		if a != b {
			out = append(out, fmt.Sprintf("%s: %v → %v", name, a, b))
		}
	}
	diff("cores", was.Cores, now.Cores, 0)
	diff("cpu_model", was.CPUModel, now.CPUModel, "")
	diff("heap_mb", was.HeapMB, now.HeapMB, 0)
	diff("server_cpus", was.ServerCPUs, now.ServerCPUs, "")
	diff("client_cpus", was.ClientCPUs, now.ClientCPUs, "")
	diff("arena_rev", was.ArenaRev, now.ArenaRev, "")
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func sorted(s []string) []string { return slices.Sorted(slices.Values(s)) }

func envText(env map[string]string) string {
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(env)) {
		kv = append(kv, k+"="+env[k])
	}
	return strings.Join(kv, ",")
}
