package cmd

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// targetFlags are arena run's flags for a server arena did not start (--target): where it
// answers, its name, its process, what it was started with and honours, and whether to verify.
type targetFlags struct {
	url, name  string
	pid        int
	cgroup     string
	env        map[string]string
	knobs      []string
	skipVerify bool
	ready      string
}

// targetOnly are the flags that mean something only with --target.
var targetOnly = []string{"target-name", "target-pid", "target-cgroup", "target-env", "target-knobs", "skip-verify", "target-ready"}

func (f *targetFlags) register(cmd *cobra.Command) {
	f.registerVerify(cmd)
	cmd.Flags().BoolVar(&f.skipVerify, "skip-verify", false, "with --target: measure it without verifying it first; recorded, and every cell is marked unverified")
}

// registerVerify registers the flags that describe a target, as arena verify checks one:
// all of arena run's but --skip-verify.
func (f *targetFlags) registerVerify(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.url, "target", "", "run the scenario against a server arena did not start, at http://IP:port (its /chat and /stream are reached at ws:// on the same address): verified there first, then measured; it must keep the contract (contenders/README.md)")
	fl.StringVar(&f.name, "target-name", "", `with --target: its name in the results and the report, a-z, 0-9 and - (default: "target")`)
	fl.IntVar(&f.pid, "target-pid", 0, `with --target: the pid of its process on this host, whose tree is probed (CPU, RSS, threads) as a contender's is (default: none, and the report says "no server resources")`)
	fl.StringVar(&f.cgroup, "target-cgroup", "", `with --target, in place of --target-pid: the folder of its cgroup on this host (a container's, a systemd unit's, e.g. /sys/fs/cgroup/system.slice/docker-ID.scope, or under /sys/fs/cgroup/pids/ on cgroup v1), whose processes, and those of the cgroups below it, are probed as a contender's tree is`)
	fl.StringToStringVar(&f.env, "target-env", nil, "with --target: a contract variable it was started with, e.g. WORKER_THREADS=11; a level that sets a variable it honours runs only when this says it was started so")
	fl.StringSliceVar(&f.knobs, "target-knobs", nil, "with --target: the contract variables it honours, as a manifest's knobs, or none (default: every one of "+strings.Join(contender.Knobs, ", ")+")")
	fl.StringVar(&f.ready, "target-ready", "", "with --target: the path of its readiness, e.g. /healthz, ready when it answers 2xx (default: the first route the scenario sends answered 2xx; for chat and stream, a WebSocket handshake to /chat or /stream answered 101)")
}

// target is the server the flags describe, checked; nil without --target, where every other
// target flag is refused.
func (f *targetFlags) target(cmd *cobra.Command) (*results.Target, error) {
	if f.url == "" {
		for _, name := range targetOnly {
			if cmd.Flags().Changed(name) {
				return nil, fmt.Errorf("--%s goes with --target", name)
			}
		}
		return nil, nil
	}
	addr, err := targetAddr(f.url)
	if err != nil {
		return nil, err
	}
	knobs := slices.Clone(contender.Knobs)
	if cmd.Flags().Changed("target-knobs") {
		knobs = []string{}
		for _, k := range f.knobs {
			if k != "none" {
				knobs = append(knobs, k)
			}
		}
	}
	t := &results.Target{Name: cmp.Or(f.name, "target"), URL: f.url, Addr: addr, Pid: f.pid, Cgroup: f.cgroup, Env: f.env, Knobs: knobs, SkipVerify: f.skipVerify, Ready: f.ready}
	return t, checkTarget(t)
}

// targetAddr is the host:port of a target's URL: http:// (its WebSocket paths are ws:// on
// the same address), an IP address (the agents' guard compares addresses) or localhost, a
// port, and no path, query or credentials.
func targetAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("--target %q: %w", raw, err)
	}
	switch {
	case u.Scheme == "ws":
		return "", fmt.Errorf("--target %s: give the server's http:// URL; its /chat and /stream are reached at ws:// on the same address", raw)
	case u.Scheme == "https" || u.Scheme == "wss":
		return "", fmt.Errorf("--target %s: the load speaks plain HTTP/1.1 (and ws://): no TLS", raw)
	case u.Scheme != "http":
		return "", fmt.Errorf("--target %q: give http://IP:port", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || (u.Path != "" && u.Path != "/"):
		return "", fmt.Errorf("--target %s: give http://IP:port alone: the scenario's paths are the contract's", raw)
	}
	host, port := u.Hostname(), u.Port()
	if host == "localhost" {
		host = "127.0.0.1"
	}
	if net.ParseIP(host) == nil {
		return "", fmt.Errorf("--target %s: give the server's IP address, not a name: the load goes to that one address", raw)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return "", fmt.Errorf("--target %s: give the port, 1 to 65535", raw)
	}
	return net.JoinHostPort(host, port), nil
}

// targetName is what a target may be called: it names files and report entries, as a
// contender's name does.
var targetName = regexp.MustCompile(`^[a-z0-9-]+$`)

// checkTarget refuses a target's description that cannot be right: a name that is no name,
// a pid of no process here, a variable that is not the contract's or that it does not honour.
func checkTarget(t *results.Target) error {
	if !targetName.MatchString(t.Name) {
		return fmt.Errorf("--target-name %q: use only a-z, 0-9 and -", t.Name)
	}
	if t.Ready != "" && !strings.HasPrefix(t.Ready, "/") {
		return fmt.Errorf("--target-ready %q: give a path on the target, beginning with /", t.Ready)
	}
	if t.Pid < 0 || t.Pid > 0 && errors.Is(syscall.Kill(t.Pid, 0), syscall.ESRCH) {
		return fmt.Errorf("--target-pid %d: no such process on this host (the lab probes a target's process only where it runs itself)", t.Pid)
	}
	if t.Cgroup != "" {
		switch pids, err := probe.CgroupProcs(t.Cgroup); {
		case t.Pid != 0:
			return errors.New("--target-pid and --target-cgroup: give one; a cgroup's processes are probed whole, its tree or not")
		case err != nil:
			return fmt.Errorf("--target-cgroup: %w (give the folder of a cgroup on this host, which holds a cgroup.procs file)", err)
		case len(pids) == 0:
			return fmt.Errorf("--target-cgroup %s: the cgroup holds no process, nor do those below it: is the server running, in it?", t.Cgroup)
		}
	}
	for _, k := range t.Knobs {
		if !slices.Contains(contender.Knobs, k) {
			return fmt.Errorf("--target-knobs %s: not a contract variable (%s, or none)", k, strings.Join(contender.Knobs, ", "))
		}
	}
	for k := range t.Env {
		switch {
		case !slices.Contains(contender.Knobs, k):
			return fmt.Errorf("--target-env %s: not a contract variable (%s)", k, strings.Join(contender.Knobs, ", "))
		case !slices.Contains(t.Knobs, k):
			return fmt.Errorf("--target-env %s: not among --target-knobs, the variables it honours", k)
		}
	}
	return nil
}

// checkTargetSpec refuses what makes no sense with a target, whose every setting is the
// user's: contenders, building, profiling, a port or variables for the lab to start with; and
// a target that can run none of the scenario's levels, with why for each.
func checkTargetSpec(spec results.RunSpec, plan scenario.Plan) error {
	t := spec.Target
	switch {
	case len(spec.Contenders) > 0:
		return errors.New("--target runs the scenario against that server alone: no --contenders")
	case spec.Profile:
		return errors.New("--profile starts each contender under its profiler: not a server arena did not start")
	case spec.Rebuild:
		return errors.New("--rebuild: a target is not built by arena")
	case spec.Reverify:
		return errors.New("--reverify: a target is verified on every run (or, with --skip-verify, not at all)")
	case spec.Port != 0:
		return errors.New("--port is the port arena starts contenders on: a target's is in --target")
	case len(spec.Env) > 0:
		return errors.New("--env sets variables at a contender's start: say what the target was started with with --target-env")
	}
	if err := checkTarget(t); err != nil {
		return err
	}
	// A spec read from a file or sent to a server agent carries an address beside its URL:
	// the load goes to the address, so it must be the URL's, derived and not taken as sent.
	if addr, err := targetAddr(t.URL); err != nil || addr != t.Addr {
		return fmt.Errorf("the target's address %q is not its URL's (%s %v): a spec's address is derived from its URL", t.Addr, t.URL, err)
	}
	if runnable, refused := lab.TargetLevels(t, plan.Levels); len(runnable) == 0 {
		return fmt.Errorf("the target can run none of the scenario's levels:\n  %s", strings.Join(refused, "\n  "))
	}
	return nil
}

// checkTargetFlags refuses flags that place or shape what a target does not have: a run
// carried out on another host (where arena starts the contender), agents on this host that
// send load to loopback only when the target is elsewhere, a server address for agents (the
// target's is fixed), the contenders' heap.
func checkTargetFlags(cmd *cobra.Command, af *agentFlags, t *results.Target) error {
	if t == nil {
		return nil
	}
	host, _, _ := net.SplitHostPort(t.Addr)
	switch {
	case cmd.Flags().Changed("contenders"):
		return errors.New("--target runs the scenario against that server alone: no --contenders")
	case af.hosts != "" || af.kubernetes:
		return errors.New("--hosts and --kubernetes carry the run out where arena starts the contender: with --target, drive the load from here (--agents) or from agents already running (--agent-addrs)")
	case af.serverAddress != "":
		return errors.New("--server-address is where agents reach a contender arena starts: with --target, they reach --target's address (start them with --server-address set to it)")
	case af.processes != 0 && host != "127.0.0.1":
		return fmt.Errorf("--agent-processes start agents that send load to 127.0.0.1 only: a target at %s needs --agent-addrs of agents started with --server-address %s", t.Addr, t.Addr)
	case cmd.Flags().Changed("heap"):
		return errors.New("--heap is the heap arena gives the contenders it starts: a target's is its own")
	}
	return nil
}

// openTarget opens the lab for a target run: its CPUs (the client's, and the server CPUs
// the target is said to run on, where other work is looked for) and no contender. A target
// may not take a contender's name: the studies' claims name the lab's own contenders, built
// here, and a server of unknown build must not be judged as one of them.
func openTarget(lf labFlags, w io.Writer, t *results.Target) (*lab.Lab, error) {
	l, err := lf.open(w)
	if err != nil {
		return nil, err
	}
	all, _ := contender.Discover(filepath.Join(l.Root, "contenders")) // a broken manifest is no name a target could take
	for _, m := range all {
		if m.Name == t.Name {
			return nil, fmt.Errorf("--target-name %s: a contender of this lab has that name, and the studies' claims about it would read the target as it; name the target otherwise", t.Name)
		}
	}
	return l, nil
}

// describeTarget is the line a target run begins with.
func describeTarget(t *results.Target, l *lab.Lab) string {
	probed := "no --target-pid or --target-cgroup: no server resources"
	switch {
	case t.Cgroup != "":
		probed = fmt.Sprintf("the processes of cgroup %s probed", t.Cgroup)
	case t.Pid > 0:
		probed = fmt.Sprintf("process %d and its tree probed", t.Pid)
	}
	return fmt.Sprintf("the target %s at %s, a server arena did not start (%s; said to run on CPU %s), client on CPU %s",
		t.Name, t.URL, probed, lab.FormatCPUs(l.ServerCPUs), lab.FormatCPUs(l.ClientCPUs))
}

// withTarget puts the target the flags describe into spec (none without --target), once the
// flags that make no sense beside one are refused; a first look's contenders give way to it.
func (rf *runFlags) withTarget(cmd *cobra.Command, spec *results.RunSpec) error {
	t, err := rf.tf.target(cmd)
	if err != nil || t == nil {
		return err
	}
	if err := checkTargetFlags(cmd, &rf.af, t); err != nil {
		return err
	}
	spec.Target, spec.Contenders = t, nil
	return nil
}

// openFor opens the lab for spec: with its contenders found, or for its target with none.
func openFor(lf labFlags, w io.Writer, spec results.RunSpec) (*lab.Lab, []*contender.Manifest, error) {
	if spec.Target == nil {
		return lf.openWith(w, spec.Contenders)
	}
	l, err := openTarget(lf, w, spec.Target)
	return l, nil, err
}

// resourceCells are a summary row's CPU %, RSS and threads; a server the lab had no process
// of (a target given neither --target-pid nor --target-cgroup) has "-" there, never zeros.
func resourceCells(s results.CellSummary) []string {
	if s.ServerUnprobed != "" {
		return []string{"-", "-", "-"}
	}
	return []string{fmt.Sprintf("%.0f", s.CPUPct.Median), fmt.Sprintf("%.0f", s.RSSMB.Median), fmt.Sprintf("%.0f", s.Threads.Median)}
}
