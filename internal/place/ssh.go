package place

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/launch"
)

// SSH places the run on the hosts of a hosts file: a load agent on every client host,
// pinned with taskset, and when the server host has an ssh destination a server agent there
// that carries the whole run out; otherwise the lab runs here, on the server host. Every
// agent has the secret made for the run and is stopped at the end.
type SSH struct {
	Hosts    *launch.Hosts
	File     string    // the hosts file's name, for errors
	Progress io.Writer // the agents' start and stop
}

var _ Placement = SSH{}

// Remote is whether the server host has an ssh destination.
func (p SSH) Remote() bool { return p.Hosts.Server.SSH != "" }

// Open starts the agents.
func (p SSH) Open(ctx context.Context, l *lab.Lab) (*Placed, error) {
	if p.Remote() {
		return p.openServer(ctx)
	}
	if l == nil {
		return nil, errors.New("a hosts file without a server ssh destination needs the lab that runs here")
	}
	return p.openFleet(ctx, l)
}

// openFleet starts a load agent on every client host and greets them all, for the lab here.
func (p SSH) openFleet(ctx context.Context, l *lab.Lab) (*Placed, error) {
	server := p.Hosts.Server
	if err := CheckLocalAddress(server.Address); err != nil {
		return nil, fmt.Errorf("%s: server address: %w", p.File, err)
	}
	if server.CPUs != "" {
		cpus, err := lab.ParseCPUs(server.CPUs)
		if err != nil {
			return nil, fmt.Errorf("%s: server cpus: %w", p.File, err)
		}
		l.ServerCPUs = cpus
	}
	launcher, err := p.launcher()
	if err != nil {
		return nil, err
	}
	remotes, err := startAgents(ctx, launcher, p.Hosts.Clients)
	if err != nil {
		return nil, err
	}
	placed := &Placed{stop: func() { stopAgents(remotes, p.Progress) }}
	var addrs []string
	for _, r := range remotes {
		addrs = append(addrs, r.Addr)
	}
	if placed.Agents, err = dial(ctx, l, addrs, server.Address, launcher.Secret, "ssh"); err != nil {
		placed.Stop()
		return nil, err
	}
	placed.Agents.Topology.Server.Name = server.Name
	for i, r := range remotes {
		placed.Agents.Topology.Agents[i].Host = r.Host
	}
	return placed, nil
}

// openServer starts a load agent on every client host and the server agent (the lab, in
// the host's root) on the server host.
func (p SSH) openServer(ctx context.Context) (*Placed, error) {
	launcher, err := p.launcher()
	if err != nil {
		return nil, err
	}
	hosts := p.Hosts
	all := append(append([]launch.ClientHost{}, hosts.Clients...), hosts.Server.Agent())
	remotes, err := startAgents(ctx, launcher, all)
	if err != nil {
		return nil, err
	}
	placed := &Placed{stop: func() { stopAgents(remotes, p.Progress) }}
	server, err := agent.Dial(ctx, remotes[len(remotes)-1].Addr, launcher.Secret)
	if err != nil {
		placed.Stop()
		return nil, err
	}
	placed.Server = &Server{Agent: server, Address: hosts.Server.Address, CPUs: hosts.Server.CPUs, LabCPUs: hosts.Server.LabCPUs,
		Where: fmt.Sprintf("%s (ssh %s)", hosts.Server.Name, hosts.Server.SSH)}
	for _, r := range remotes[:len(remotes)-1] {
		addr, err := resolvedAddr(ctx, r.Addr)
		if err != nil {
			placed.Stop()
			return nil, err
		}
		placed.Server.LoadAddrs = append(placed.Server.LoadAddrs, addr)
	}
	return placed, nil
}

// resolvedAddr is addr with its host name resolved here: the server agent takes load agents
// by IP:port only, never a name it would resolve where the request's sender chose.
func resolvedAddr(ctx context.Context, addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || net.ParseIP(host) != nil {
		return addr, err
	}
	ips, err := net.DefaultResolver.LookupIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return "", fmt.Errorf("load agent %s: resolving %s: %v", addr, host, err)
	}
	for _, ip := range ips { // IPv4 first, as the hosts' agents listen
		if ip.To4() != nil {
			return net.JoinHostPort(ip.String(), port), nil
		}
	}
	return net.JoinHostPort(ips[0].String(), port), nil
}

// launcher starts this binary's agents with a secret made for the run, held to the server
// host's address.
func (p SSH) launcher() (*launch.SSHLauncher, error) {
	bin, err := os.Executable()
	if err != nil {
		return nil, err
	}
	secret, err := agent.NewSecret()
	if err != nil {
		return nil, err
	}
	return &launch.SSHLauncher{SSH: p.Hosts.SSHArgs(), Binary: bin, Stderr: p.Progress, Secret: secret, ServerAddress: p.Hosts.Server.Address}, nil
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

// stopAgents stops agents started over SSH, saying which could not be cleaned up.
func stopAgents(remotes []*launch.Remote, progress io.Writer) {
	for _, r := range remotes {
		if err := r.Stop(); err != nil && progress != nil {
			fmt.Fprintf(progress, "arena: stopping agent %s: %v\n", r.Name, err)
		}
	}
}
