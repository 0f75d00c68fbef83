package contender

import (
	"fmt"
	"os"
	"strings"
)

// Settings are what every contender of a run shares: the one JDK, the heap, the CPUs.
type Settings struct {
	JDK    JDK // zero when no Java contender is involved
	HeapMB int
}

// JavaOpts are the JVM flags every Java contender gets. The heap is fixed (Xms = Xmx) so
// that no contender measures heap growth the others skip; an OutOfMemoryError ends the
// process, so running out of memory is an outcome the lab sees rather than a hung JVM.
// The collector is named, the same for every JVM (JavaCollector), rather than left to
// HotSpot's ergonomics, which pick by the CPUs and memory they see (Serial on the one core
// a server gets, G1 on two): a run on other CPUs would otherwise compare other collectors
// without saying so. Each start adds its own GC log to these (GCLogFlag).
func (s Settings) JavaOpts() string {
	return fmt.Sprintf("-Xms%dm -Xmx%dm %s -XX:+ExitOnOutOfMemoryError", s.HeapMB, s.HeapMB, JavaCollector)
}

// GCLogFlag is the flag that makes a JVM log each collection to path (HotSpot's unified
// logging, -Xlog:gc: one line a collection, the heap used before and after it, what is
// committed, the pause), the cheapest reading of the heap after collection, which is the
// live data a fixed heap's RSS does not show. Every JVM the lab starts gets one, at a path of
// its start's own (the lab's, beside its output), so that all pay its cost alike.
// Decorators: `time`, the wall clock with milliseconds, which lines a collection up with the
// cell's timeline (the probe's samples are on the same clock) without knowing when the JVM
// started to the millisecond, as `uptimemillis` alone would need; `uptimemillis`, level and
// tags beside it for a reader. The file is bounded: at most GCLogFiles rotations of
// GCLogFileMB besides the current file (a line is about 110 bytes: ~150,000 collections a
// file). The name is quoted for -Xlog (a ':' in it would end the option); JAVA_OPTS is split
// on blanks by the start's shell, so a path with one cannot be passed.
func GCLogFlag(path string) (string, error) {
	if strings.ContainsAny(path, " \t\n\"") {
		return "", fmt.Errorf("the GC log's path %q has a blank or a quote, which JAVA_OPTS cannot carry", path)
	}
	return fmt.Sprintf(`-Xlog:gc:file="%s":time,uptimemillis,level,tags:filecount=%d,filesize=%dM`, path, GCLogFiles, GCLogFileMB), nil
}

// The GC log's bound: GCLogFiles rotations of GCLogFileMB each, besides the current file.
const (
	GCLogFiles  = 2
	GCLogFileMB = 16
)

// JavaCollector is the collector flag of every JVM: Serial, what ergonomics chose on the
// lab's one server core anyway, so that runs recorded before it was named are alike; a
// concurrent collector would have only that core to run its concurrent phases on.
const JavaCollector = "-XX:+UseSerialGC"

// inheritedButUnfair are variables that would silently change one runtime's settings.
var inheritedButUnfair = []string{
	"JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "JAVA_OPTS", "JAVA_HOME",
	"NODE_OPTIONS", "GOMAXPROCS", "GOMEMLIMIT", "GOGC", "VIRTUAL_ENV", "RUSTFLAGS", "TOKIO_WORKER_THREADS", "RUST_MIN_STACK",
	"PORT", "WORKER_THREADS", "DOWNSTREAM_URL", "BACKPRESSURE", "PPROF_ADDR", "BIND_ADDRESS", "ARENA_V8_PROFILE_DIR",
}

// secretEnv is where an agent started by hand, or a coordinator of such agents, reads the
// run's secret (agent.SecretEnv, named here because agent imports this package).
const secretEnv = "ARENA_AGENT_SECRET"

// secretWords mark a variable that holds a credential: the agents' secret, a CI's tokens
// (GitHub's ACTIONS_RUNTIME_TOKEN, ACTIONS_ID_TOKEN_REQUEST_TOKEN), a cloud's keys
// (AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN), a registry's password. No contender, build or
// helper of the lab needs one (builds fetch public packages), and each runs code arena
// does not vouch for: the contender measured and every dependency's build script.
var secretWords = []string{"SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "API_KEY", "PRIVATE_KEY"}

// holdsSecret says whether the variable name is one a child of the lab never gets: the
// agents' secret, or any name holding one of secretWords, in any case.
func holdsSecret(name string) bool {
	upper := strings.ToUpper(name)
	if upper == secretEnv {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(upper, w) {
			return true
		}
	}
	return false
}

// Environ is this process's environment less every variable that holds a secret
// (holdsSecret): what anything the lab starts inherits, at least.
func Environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); !holdsSecret(name) {
			env = append(env, kv)
		}
	}
	return env
}

// Env is the environment a contender is built and started with: the machine's, less its
// secrets (Environ) and anything that would tune one runtime behind the lab's back, plus
// the runtime's settings and the contract variables in vars. flags join the runtime's options (JAVA_OPTS,
// NODE_OPTIONS): a profiler's, when a run takes profiles.
func (s Settings) Env(m *Manifest, vars map[string]string, flags ...string) ([]string, error) {
	var env []string
	path := os.Getenv("PATH")
	for _, kv := range Environ() {
		name, _, _ := strings.Cut(kv, "=")
		// Every PYTHON* variable tunes CPython (its path, bytecode, buffering, asyncio's debug
		// mode, the hash seed): a machine's own would make its Python contenders differ.
		if name == "PATH" || contains(inheritedButUnfair, name) || strings.HasPrefix(name, "PYTHON") {
			continue
		}
		env = append(env, kv)
	}
	if m.Runtime == "java" {
		if s.JDK.Home == "" {
			return nil, fmt.Errorf("%s needs a JDK %d+ and none was found", m.Name, MinJava)
		}
		path = s.JDK.Home + "/bin:" + path
		env = append(env, "JAVA_HOME="+s.JDK.Home, "JAVA_OPTS="+strings.Join(append([]string{s.JavaOpts()}, flags...), " "))
	} else if mem := RuntimeOf(m).Memory; mem != nil {
		env = append(env, mem(s.HeapMB, flags)...)
	}
	env = append(env, "PATH="+path)
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	return env, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
