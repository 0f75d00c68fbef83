package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/k8s"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/launch"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/scenarios"
)

// agentFlags choose where a run's load comes from: this process (none set), N agents inside
// it (--agents), or agents already running on other hosts (--agent-addrs, with
// --server-address where they reach the contender).
type agentFlags struct {
	inProcess     int
	addrs         []string
	serverAddress string
	hosts         string
	kubernetes    bool
	k8s           k8s.Options
	secretFile    string        // the secret of agents started by hand (--agent-addrs)
	parsed        *launch.Hosts // the hosts file, once remoteRun has read it
}

func (f *agentFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.inProcess, "agents", 0, "deal every load out among N load agents inside this process (the same code remote agents run), merged exactly; with --kubernetes, N load agents' pods")
	fl.StringSliceVar(&f.addrs, "agent-addrs", nil, "drive the load from arena agents already running at these host:port addresses (see arena agent), merged exactly")
	fl.StringVar(&f.secretFile, "agent-secret-file", "", "with --agent-addrs: the file holding the secret the agents were started with (default: $"+agent.SecretEnv+")")
	fl.StringVar(&f.serverAddress, "server-address", "", "with --agent-addrs: this host's address the agents reach the contender on (given to it as BIND_ADDRESS)")
	fl.BoolVar(&f.kubernetes, "kubernetes", false, "carry the run out on Kubernetes, in the current kube context: a server agent's pod and --agents load agents as an Indexed Job (docs/distributed.md)")
	registerPlacement(fl, &f.k8s, "with --kubernetes: ")
	fl.StringVar(&f.hosts, "hosts", "", "a hosts file (TOML, docs/distributed.md): over SSH, a load agent on each client host, pinned with taskset, and when the server host has an ssh destination the whole run carried out there by a server agent; all stopped at the end")
}

// open makes the run's agents, or nil when the load stays in this process; stop ends those
// it started (always safe to call). The topology records where everything ran.
func (f *agentFlags) open(ctx context.Context, l *lab.Lab, stderr io.Writer) (a *lab.Agents, stop func(), err error) {
	stop = func() {}
	given := 0
	for _, set := range []bool{f.inProcess != 0, len(f.addrs) > 0, f.hosts != ""} {
		if set {
			given++
		}
	}
	if given > 1 && !f.kubernetes {
		return nil, stop, errors.New("--agents, --agent-addrs and --hosts: give one")
	}
	if f.hosts != "" {
		return f.overSSH(ctx, l, stderr)
	}
	a, err = f.local(ctx, l)
	return a, stop, err
}

// overSSH starts an agent on every client host of the hosts file and greets them all.
func (f *agentFlags) overSSH(ctx context.Context, l *lab.Lab, stderr io.Writer) (*lab.Agents, func(), error) {
	nothing := func() {}
	hosts, err := f.parsed, error(nil)
	if hosts == nil { // remoteRun, which reads it first in a run, was not asked
		if hosts, err = launch.ParseHosts(f.hosts); err != nil {
			return nil, nothing, err
		}
	}
	if err := checkLocalAddress(hosts.Server.Address); err != nil {
		return nil, nothing, fmt.Errorf("%s: server address: %w", f.hosts, err)
	}
	if hosts.Server.CPUs != "" {
		if l.ServerCPUs, err = lab.ParseCPUs(hosts.Server.CPUs); err != nil {
			return nil, nothing, fmt.Errorf("%s: server cpus: %w", f.hosts, err)
		}
	}
	launcher, err := sshLauncher(hosts, stderr)
	if err != nil {
		return nil, nothing, err
	}
	remotes, err := startAgents(ctx, launcher, hosts.Clients)
	if err != nil {
		return nil, nothing, err
	}
	stop := func() { stopAgents(remotes, stderr) }
	var addrs []string
	for _, r := range remotes {
		addrs = append(addrs, r.Addr)
	}
	a, err := dialAgents(ctx, l, addrs, hosts.Server.Address, launcher.Secret, "ssh")
	if err != nil {
		stop()
		return nil, nothing, err
	}
	a.Topology.Server.Name = hosts.Server.Name
	for i, r := range remotes {
		a.Topology.Agents[i].Host = r.Host
	}
	return a, stop, nil
}

// local is agents in this process, or agents already running at given addresses.
func (f *agentFlags) local(ctx context.Context, l *lab.Lab) (*lab.Agents, error) {
	switch {
	case f.inProcess < 0 || f.inProcess > 64:
		return nil, fmt.Errorf("--agents %d: give 1 to 64", f.inProcess)
	case f.serverAddress != "" && len(f.addrs) == 0:
		return nil, errors.New("--server-address goes with --agent-addrs")
	case f.inProcess > 0:
		fleet := &agent.Fleet{}
		topo := results.Topology{Launcher: "in-process", Server: results.TopoHost{Name: "server", Host: "localhost", CPUs: lab.FormatCPUs(l.ServerCPUs)}}
		for i := 0; i < f.inProcess; i++ {
			self := agent.Self(fmt.Sprintf("in-process-%d", i))
			self.CPUs = lab.FormatCPUs(l.ClientCPUs) // where the lab pins itself, once the run begins
			fleet.Runners = append(fleet.Runners, &agent.InProcess{Self: self, Resolve: agent.PlanResolver(scenarios.Find)})
			topo.Agents = append(topo.Agents, results.TopoHost{Name: self.Name, Host: self.Host, Addr: "in-process", CPUs: lab.FormatCPUs(l.ClientCPUs)})
		}
		return &lab.Agents{Fleet: fleet, Topology: topo}, nil
	case len(f.addrs) > 0:
		if f.serverAddress == "" {
			return nil, errors.New("--agent-addrs needs --server-address: the address of this host the agents reach the contender on")
		}
		if err := checkLocalAddress(f.serverAddress); err != nil {
			return nil, fmt.Errorf("--server-address: %w", err)
		}
		// A server agent's run has its coordinator's secret; a run typed by hand names it.
		secret := agent.SecretOf(ctx)
		if secret == "" {
			var err error
			if secret, err = agent.ReadSecret(f.secretFile); err != nil {
				return nil, err
			}
		}
		return dialAgents(ctx, l, f.addrs, f.serverAddress, secret, "agents")
	}
	return nil, nil
}

// dialAgents greets agents already running at addrs, with the run's secret, and records them
// in the topology.
func dialAgents(ctx context.Context, l *lab.Lab, addrs []string, serverAddress, secret, launcher string) (*lab.Agents, error) {
	fleet := &agent.Fleet{}
	topo := results.Topology{Launcher: launcher, Server: results.TopoHost{Name: "server", Host: serverAddress, CPUs: lab.FormatCPUs(l.ServerCPUs)}}
	for _, addr := range addrs {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("agent address %q: give host:port", addr)
		}
		r, err := agent.Dial(ctx, addr, secret)
		if err != nil {
			return nil, err
		}
		h := r.Hello()
		fleet.Runners = append(fleet.Runners, r)
		topo.Agents = append(topo.Agents, results.TopoHost{Name: h.Name, Host: h.Host, Addr: addr, CPUs: h.CPUs})
	}
	return &lab.Agents{Fleet: fleet, ServerAddress: serverAddress, Topology: topo}, nil
}

// describeAgents is the line a run prints about where its load comes from.
func describeAgents(a *lab.Agents) string {
	var parts []string
	for _, h := range a.Topology.Agents {
		parts = append(parts, fmt.Sprintf("%s (%s, CPU %s)", h.Name, h.Addr, h.CPUs))
	}
	return fmt.Sprintf("load from %d agent(s): %s", len(parts), strings.Join(parts, ", "))
}

// checkLocalAddress makes sure addr is an IP address of this host, by binding it: the
// contender will listen there, and it is the one place every agent sends its load.
func checkLocalAddress(addr string) error {
	if net.ParseIP(addr) == nil {
		return fmt.Errorf("%q: give an IP address of this host", addr)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return fmt.Errorf("%s is no address of this host (%v): the contender runs here and listens on it", addr, err)
	}
	return ln.Close()
}

// remote is where a run carried out on another host stands: the server agent, the load
// agents' addresses, the contender's address and CPUs there, and how to stop it all.
type remote struct {
	server        *agent.Remote
	loadAddrs     []string
	address       string // the contender's, given as BIND_ADDRESS
	cpus, labCPUs string // the contender's and the lab's, on the server host
	where         string // for the progress line
	stop          func()
}

// remoteRun says whether the run is carried out by a server agent on another host: with
// --kubernetes, or a hosts file whose server host has an ssh destination.
func (f *agentFlags) remoteRun() (bool, error) {
	if f.kubernetes {
		if f.hosts != "" || len(f.addrs) > 0 || f.serverAddress != "" {
			return false, errors.New("--kubernetes places its own agents: no --hosts, --agent-addrs or --server-address with it")
		}
		return true, nil
	}
	if f.hosts == "" {
		return false, nil
	}
	hosts, err := launch.ParseHosts(f.hosts)
	f.parsed = hosts
	return err == nil && hosts.Server.SSH != "", err
}

// place starts the server agent and the load agents where the flags say.
func (f *agentFlags) place(ctx context.Context, stderr io.Writer) (*remote, error) {
	if f.kubernetes {
		client, err := newKubeClient()
		if err != nil {
			return nil, err
		}
		return f.onKubernetes(ctx, stderr, client)
	}
	return overSSH(ctx, f.parsed, stderr) // remoteRun parsed the file
}

// overSSH starts a load agent on every client host and the server agent (the lab, in the
// host's root) on the server host.
func overSSH(ctx context.Context, hosts *launch.Hosts, stderr io.Writer) (*remote, error) {
	launcher, err := sshLauncher(hosts, stderr)
	if err != nil {
		return nil, err
	}
	all := append(append([]launch.ClientHost{}, hosts.Clients...), hosts.Server.Agent())
	remotes, err := startAgents(ctx, launcher, all)
	if err != nil {
		return nil, err
	}
	stop := func() { stopAgents(remotes, stderr) }
	server, err := agent.Dial(ctx, remotes[len(remotes)-1].Addr, launcher.Secret)
	if err != nil {
		stop()
		return nil, err
	}
	rm := &remote{server: server, address: hosts.Server.Address, cpus: hosts.Server.CPUs, labCPUs: hosts.Server.LabCPUs,
		where: fmt.Sprintf("%s (ssh %s)", hosts.Server.Name, hosts.Server.SSH), stop: stop}
	for _, r := range remotes[:len(remotes)-1] {
		rm.loadAddrs = append(rm.loadAddrs, r.Addr)
	}
	return rm, nil
}

// sshLauncher starts this binary's agents on hosts with a secret made for the run, held to
// the server host's address.
func sshLauncher(hosts *launch.Hosts, stderr io.Writer) (*launch.SSHLauncher, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	secret, err := agent.NewSecret()
	if err != nil {
		return nil, err
	}
	return &launch.SSHLauncher{SSH: hosts.SSHArgs(), Binary: bin, Stderr: stderr, Secret: secret, ServerAddress: hosts.Server.Address}, nil
}

// stopAgents stops agents started over SSH, saying which could not be cleaned up.
func stopAgents(remotes []*launch.Remote, stderr io.Writer) {
	for _, r := range remotes {
		if err := r.Stop(); err != nil {
			fmt.Fprintf(stderr, "arena: stopping agent %s: %v\n", r.Name, err)
		}
	}
}

// startAgents starts agents over SSH that live until Stop: a Ctrl-C while they start stops
// them, but one after they started is the run's to handle (it saves what it finished, and
// a server agent's folder must still be fetched) before they are stopped.
func startAgents(ctx context.Context, l *launch.SSHLauncher, hosts []launch.ClientHost) ([]*launch.Remote, error) {
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	stopWatch := context.AfterFunc(ctx, end)
	remotes, err := l.Start(life, hosts)
	if !stopWatch() || err != nil { // Ctrl-C came during the start, or the start failed
		end()
		if err == nil {
			for _, r := range remotes {
				_ = r.Stop()
			}
			err = ctx.Err()
		}
		return nil, err
	}
	return remotes, nil
}

// newKubeClient is the current kube context's client (KUBECONFIG, ~/.kube/config, or the
// pod's service account inside a cluster); tests replace it with a fake.
var newKubeClient = func() (kubernetes.Interface, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--kubernetes: no usable kube context (%v): set KUBECONFIG or run inside the cluster", err)
	}
	return kubernetes.NewForConfig(cfg)
}

// onKubernetes creates the server pod and the load agents' Indexed Job, waits for them, and
// splits the server pod's cores: the first for the lab, the rest for the contender.
func (f *agentFlags) onKubernetes(ctx context.Context, stderr io.Writer, client kubernetes.Interface) (*remote, error) {
	o := f.k8s
	o.Agents = f.inProcess
	if o.Agents == 0 {
		o.Agents = 1
	}
	if o.RunID == "" {
		o.RunID = time.Now().UTC().Format("20060102-150405")
	}
	if o.Secret == "" {
		var err error
		if o.Secret, err = agent.NewSecret(); err != nil {
			return nil, err
		}
	}
	o = o.WithDefaults()
	l := &k8s.Launcher{Client: client, Options: o, Progress: stderr}
	placed, err := l.Launch(ctx)
	if err != nil {
		return nil, err
	}
	stop := func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := l.Cleanup(cctx); err != nil {
			fmt.Fprintf(stderr, "arena: removing the run's pods: %v (kubectl delete %s -n %s -l arena.dev/run=%s)\n", err, k8s.Kinds, o.Namespace, o.RunID)
		}
	}
	server, err := agent.Dial(ctx, placed.Server, o.Secret)
	if err != nil {
		stop()
		return nil, err
	}
	cpus, err := lab.ParseCPUs(server.Hello().CPUs)
	if err != nil || len(cpus) < 2 {
		stop()
		return nil, fmt.Errorf("the server pod may use CPUs %q: it needs two or more, one for the lab and the rest for the contender (--server-cores)", server.Hello().CPUs)
	}
	host, _, _ := net.SplitHostPort(placed.Server)
	return &remote{server: server, loadAddrs: placed.Load, address: host, labCPUs: lab.FormatCPUs(cpus[:1]), cpus: lab.FormatCPUs(cpus[1:]),
		where: fmt.Sprintf("pod %s-server in namespace %s", "arena-"+o.RunID, o.Namespace), stop: stop}, nil
}

// runRemote carries the run out on the server host: the server agent runs spec there with
// the load from the load agents; its progress is shown here, and at the end (or at Ctrl-C,
// once it has saved what it finished) its folder is fetched into runsDir (default:
// <lab>/runs). Every agent is stopped on the way out.
func (f *agentFlags) runRemote(ctx context.Context, spec results.RunSpec, runsDir string, stdout, stderr io.Writer) error {
	if runsDir == "" {
		root, err := lab.FindRoot()
		if err != nil {
			return err
		}
		runsDir = filepath.Join(root, "runs")
	}
	rm, err := f.place(ctx, stderr)
	if err != nil {
		return err
	}
	defer rm.stop()
	// The run's id is the coordinator's; its CPUs are where the server host has them.
	spec.ID = time.Now().Format("20060102-150405") + "-" + spec.Scenario
	spec.ServerCPUs, spec.ClientCPUs = rm.cpus, rm.labCPUs
	req := agent.RunRequest{Spec: spec, LoadAgents: rm.loadAddrs, ServerAddress: rm.address, Command: os.Args}
	fmt.Fprintf(stderr, "arena run: carried out on %s: the contender on CPU %s, the lab on CPU %s; load agents %s\n",
		rm.where, rm.cpus, rm.labCPUs, strings.Join(rm.loadAddrs, ", "))
	end, runErr := rm.server.RunRemote(ctx, req, stderr)
	if runErr == nil && end.Error != "" {
		runErr = fmt.Errorf("server agent %s: %s", rm.where, end.Error)
	}
	// The remote run ends on its own or by the cancel above; either way it saved what it
	// finished, and the folder comes back even after a Ctrl-C.
	fetchCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	dir, fetchErr := rm.server.FetchRun(fetchCtx, spec.ID, runsDir, time.Minute)
	if fetchErr != nil {
		if runErr != nil { // a run that failed before it made its folder has none to fetch
			return runErr
		}
		return fetchErr
	}
	if run, err := results.Load(dir); err == nil {
		printSummary(stdout, run)
	}
	fmt.Fprintf(stderr, "\nresults: %s (carried out on %s)\nreport:  %s\n", dir, rm.where, filepath.Join(dir, "report.html"))
	if ctx.Err() != nil || end.Status == results.RunInterrupted {
		fmt.Fprintln(stderr, "interrupted: finished cells are kept in the results")
		return errInterrupted
	}
	return runErr
}
