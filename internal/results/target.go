package results

import (
	"maps"
	"slices"
	"strings"
)

// Target is a server the lab did not start (arena run --target): it is not built, started,
// pinned, capped or stopped by the lab; every cell's load goes to its address, one after the
// other against the same process. It stands in the results where a contender would, under
// Name.
type Target struct {
	Name string `json:"name"` // its name in the results and the report (--target-name)
	URL  string `json:"url"`  // http://host:port, as given
	Addr string `json:"addr"` // host:port: where every load, the watchdog and verify go
	// Pid is the root of its process tree as the user gave it (--target-pid): probed as a
	// contender's tree is. 0: the lab has no server resources to show.
	Pid int `json:"pid,omitempty"`
	// Cgroup is the folder of its cgroup as the user gave it (--target-cgroup), in place of a
	// pid: every process of it and of the cgroups below it is probed (a container, a unit).
	Cgroup string `json:"cgroup,omitempty"`
	// Env is the contract variables the user says it was started with (--target-env); Knobs
	// are those it honours (--target-knobs; every contract variable unless said otherwise).
	// A level setting a variable it honours runs only when Env holds that value.
	Env   map[string]string `json:"env,omitempty"`
	Knobs []string          `json:"knobs"`
	// SkipVerify: the user asked for no verify (--skip-verify); every cell is marked.
	SkipVerify bool `json:"skip_verify,omitempty"`
	// Ready is the path of its readiness the user named (--target-ready), answered with a
	// 2xx; "": the first route the scenario sends (a WebSocket handshake for chat and stream).
	Ready string `json:"ready,omitempty"`
}

// Differences are what of now differs from was, one line each: every field names what was
// measured.
func (was *Target) Differences(now *Target) []string {
	text := func(t *Target) string {
		if t == nil {
			return ""
		}
		var env []string
		for _, k := range slices.Sorted(maps.Keys(t.Env)) {
			env = append(env, k+"="+t.Env[k])
		}
		return strings.Join([]string{t.Name, t.Addr, strings.Join(env, ","), strings.Join(t.Knobs, ",")}, " ")
	}
	if a, b := text(was), text(now); a != b {
		return []string{"target: " + orNone(a) + " → " + orNone(b)}
	}
	return nil
}

// Probed says whether the lab was given the target's processes to probe.
func (t *Target) Probed() bool { return t.Pid > 0 || t.Cgroup != "" }

// NoServerProcess is why a target's cells have no server resources: the lab was not given
// its process.
const NoServerProcess = "no server resources: the lab did not start this server and was given no --target-pid or --target-cgroup to probe"
