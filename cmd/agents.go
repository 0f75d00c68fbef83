package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/agent"
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
}

func (f *agentFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.inProcess, "agents", 0, "deal every load out among N load agents inside this process (the same code remote agents run), merged exactly")
	fl.StringSliceVar(&f.addrs, "agent-addrs", nil, "drive the load from arena agents already running at these host:port addresses (see arena agent), merged exactly")
	fl.StringVar(&f.serverAddress, "server-address", "", "with --agent-addrs: this host's address the agents reach the contender on (given to it as BIND_ADDRESS)")
	fl.StringVar(&f.hosts, "hosts", "", "a hosts file (TOML, docs/distributed.md): start a load agent on each client host over SSH, pinned with taskset, and stop it at the end")
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
	if given > 1 {
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
	hosts, err := launch.ParseHosts(f.hosts)
	if err != nil {
		return nil, nothing, err
	}
	if hosts.Server.SSH != "" {
		return nil, nothing, fmt.Errorf("%s: the server host is reached over SSH (ssh = %q); this arena runs the contender on its own host: leave the server's ssh empty and run arena there",
			f.hosts, hosts.Server.SSH)
	}
	if err := checkLocalAddress(hosts.Server.Address); err != nil {
		return nil, nothing, fmt.Errorf("%s: server address: %w", f.hosts, err)
	}
	if hosts.Server.CPUs != "" {
		if l.ServerCPUs, err = lab.ParseCPUs(hosts.Server.CPUs); err != nil {
			return nil, nothing, fmt.Errorf("%s: server cpus: %w", f.hosts, err)
		}
	}
	bin, err := os.Executable()
	if err != nil {
		return nil, nothing, err
	}
	launcher := &launch.SSHLauncher{SSH: hosts.SSHArgs(), Binary: bin, Stderr: stderr}
	remotes, err := launcher.Start(ctx, hosts.Clients)
	if err != nil {
		return nil, nothing, err
	}
	stop := func() {
		for _, r := range remotes {
			if err := r.Stop(); err != nil {
				fmt.Fprintf(stderr, "arena: stopping agent %s: %v\n", r.Name, err)
			}
		}
	}
	var addrs []string
	for _, r := range remotes {
		addrs = append(addrs, r.Addr)
	}
	a, err := dialAgents(ctx, l, addrs, hosts.Server.Address, "ssh")
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
		return dialAgents(ctx, l, f.addrs, f.serverAddress, "agents")
	}
	return nil, nil
}

// dialAgents greets agents already running at addrs and records them in the topology.
func dialAgents(ctx context.Context, l *lab.Lab, addrs []string, serverAddress, launcher string) (*lab.Agents, error) {
	fleet := &agent.Fleet{}
	topo := results.Topology{Launcher: launcher, Server: results.TopoHost{Name: "server", Host: serverAddress, CPUs: lab.FormatCPUs(l.ServerCPUs)}}
	for _, addr := range addrs {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return nil, fmt.Errorf("agent address %q: give host:port", addr)
		}
		r, err := agent.Dial(ctx, addr)
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
