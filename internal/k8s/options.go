// Package k8s places arena's agents on a Kubernetes cluster: the server agent as one Pod
// and the load agents as one Indexed Job, every container with integer CPUs whose
// requests equal their limits (Guaranteed QoS, so exclusive cores where the kubelet runs
// the static CPU manager policy), the load agents kept off the server's node. It writes
// the objects as YAML (arena k8s manifests) and launches them through client-go, waiting
// until every agent is ready and cleaning up when anything fails.
package k8s

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/validate/content"
)

// Defaults an Options left at zero takes, and the flags of arena k8s start from.
const (
	DefaultNamespace       = "arena"
	DefaultPort            = 7600
	DefaultServerCPUs      = 2
	DefaultAgentCPUs       = 1
	DefaultServerMemoryMiB = 4096 // a JVM contender's heap plus a Maven build beside it
	DefaultAgentMemoryMiB  = 1024
)

// Labels on every object and pod of a run; Cleanup finds them by LabelRun.
const (
	LabelRun   = "arena.dev/run"
	LabelRole  = "arena.dev/role"
	RoleServer = "server"
	RoleLoad   = "load"
)

// IndexKey is the label (Kubernetes 1.28 and later) and the annotation (every version
// with Indexed Jobs) through which the Job controller gives each pod its completion index.
const IndexKey = "batch.kubernetes.io/job-completion-index"

// Options say what to place on the cluster.
type Options struct {
	Namespace       string // default DefaultNamespace; it must exist
	Image           string // the agent image, e.g. "arena:dev"; required: there is no default registry
	LoadImage       string // the load agents' image when it is another (e.g. built by ko); default Image
	Agents          int    // load agents, one pod each, at least 1
	RunID           string // labels every object (LabelRun) and names them
	ServerCPUs      int    // whole cores, requests == limits
	AgentCPUs       int    // whole cores per load agent, requests == limits
	ServerMemoryMiB int
	AgentMemoryMiB  int
	Port            int // the agents' port, default DefaultPort
	// Secret is the run's secret (agent.NewSecret), put in the run's Secret; required.
	Secret string
	// CoordinatorCIDR, when set, is where a coordinator outside the cluster calls the agents
	// from (its address as the pods see it, e.g. 10.1.2.3/32); pods labelled
	// LabelCoordinator=true in the namespace may always call them.
	CoordinatorCIDR string

	// Node selectors, e.g. {"arena.dev/pool": "server"}: the label a cluster's nodes are
	// given to say which run the server and which run load.
	ServerNodeSelector map[string]string
	AgentNodeSelector  map[string]string
}

// WithDefaults fills the fields that have a default (namespace, port, load image) when
// left at zero.
func (o Options) WithDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Port == 0 {
		o.Port = DefaultPort
	}
	if o.LoadImage == "" {
		o.LoadImage = o.Image
	}
	return o
}

// Validate checks o as it is (call WithDefaults first to have the defaults) and says, for
// each field that is wrong, what to give instead.
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if o.Agents < 1 {
		bad("agents %d: give at least 1 load agent", o.Agents)
	}
	if strings.TrimSpace(o.Image) == "" {
		bad("image: name the agent image (built by deploy/Dockerfile), e.g. arena:dev")
	}
	for _, image := range []string{o.Image, o.LoadImage} {
		if strings.ContainsAny(image, " \t\n") {
			bad("image %q: an image reference has no spaces", image)
		}
	}
	for _, c := range []struct {
		name string
		n    int
	}{{"server cores", o.ServerCPUs}, {"agent cores", o.AgentCPUs}} {
		if c.n < 1 {
			bad("%s %d: give at least 1 (whole cores, requests equal to limits, for Guaranteed QoS)", c.name, c.n)
		}
	}
	for _, m := range []struct {
		name string
		mib  int
	}{{"server memory", o.ServerMemoryMiB}, {"agent memory", o.AgentMemoryMiB}} {
		if m.mib < 64 {
			bad("%s %d MiB: give at least 64 MiB", m.name, m.mib)
		}
	}
	if len(o.Secret) < 32 || strings.ContainsAny(o.Secret, " \t\r\n") {
		bad("secret: give the run's secret, 32 characters or more, no spaces (arena makes one)")
	}
	if o.CoordinatorCIDR != "" {
		if _, _, err := net.ParseCIDR(o.CoordinatorCIDR); err != nil {
			bad("coordinator CIDR %q: give an address block, e.g. 10.1.2.3/32", o.CoordinatorCIDR)
		}
	}
	if o.Port < 1 || o.Port > 65535 {
		bad("port %d: give a TCP port between 1 and 65535", o.Port)
	}
	for _, msg := range content.IsDNS1123Label(o.Namespace) {
		bad("namespace %q: %s", o.Namespace, msg)
	}
	if o.RunID == "" {
		bad("run id: give one (lower-case letters, digits and '-'), e.g. 20261125-101500")
	} else {
		// The longest name built from it must still be a DNS label: the Job's name is
		// copied into its pods' job-name label, which allows 63 characters.
		for _, msg := range content.IsDNS1123Label(serverName(o.RunID)) {
			bad("run id %q: %s", o.RunID, msg)
		}
	}
	checkSelector := func(which string, sel map[string]string) {
		for _, k := range sortedKeys(sel) {
			for _, msg := range content.IsLabelKey(k) {
				bad("%s node selector key %q: %s", which, k, msg)
			}
			for _, msg := range content.IsLabelValue(sel[k]) {
				bad("%s node selector value %q: %s", which, sel[k], msg)
			}
		}
	}
	checkSelector("server", o.ServerNodeSelector)
	checkSelector("agent", o.AgentNodeSelector)
	return errors.Join(errs...)
}

// serverName and jobName name a run's objects; the Job's pods are named by Kubernetes
// after the Job (<job>-<index>-<random>).
func serverName(runID string) string { return "arena-" + runID + "-server" }
func jobName(runID string) string    { return "arena-" + runID + "-load" }

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
