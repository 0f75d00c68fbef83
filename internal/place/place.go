// Package place is where a run's agents run: in this process, in processes of this host,
// on hosts reached over SSH, or on Kubernetes. Each placement opens a fleet of load agents
// and, where it has one, a server agent that carries the whole run out beside the contender,
// and stops what it started.
package place

import (
	"context"
	"fmt"
	"net"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
)

// A Placement opens a run's agents and says where the run's lab is.
type Placement interface {
	// Remote says a server agent carries the run out on another host: Open is then called
	// without a lab and returns Placed.Server; otherwise the lab runs in this process and
	// Open returns its fleet in Placed.Agents (nil: the lab drives the load itself).
	Remote() bool
	// Open starts or greets the agents; l is the lab that runs here (nil for a remote run),
	// whose CPUs the topology records and a hosts file may set. What Open started is stopped
	// by Placed.Stop; on error nothing is left running.
	Open(ctx context.Context, l *lab.Lab) (*Placed, error)
}

// Placed is what a placement opened.
type Placed struct {
	Agents *lab.Agents // the load agents the lab here drives; nil: its own process drives
	Server *Server     // the server agent that carries the run out; nil: the lab runs here
	stop   func()
}

// Stop ends what the placement started; safe on nil and twice.
func (p *Placed) Stop() {
	if p == nil || p.stop == nil {
		return
	}
	stop := p.stop
	p.stop = nil
	stop()
}

// Server is a server agent on the contender's host, with what it needs to run a spec there.
type Server struct {
	Agent     *agent.Remote
	LoadAddrs []string // the load agents, which it drives
	Address   string   // the contender's, given as BIND_ADDRESS
	CPUs      string   // the contender's, on the server host
	LabCPUs   string   // the lab's, on the server host
	Where     string   // where it runs, for the progress line
}

// dial greets agents already running at addrs with the run's secret, and records them in
// the topology under launcher; serverAddress is where they reach the contender.
func dial(ctx context.Context, l *lab.Lab, addrs []string, serverAddress, secret, launcher string) (*lab.Agents, error) {
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

// CheckLocalAddress makes sure addr is an IP address of this host, by binding it: the
// contender will listen there, and it is the one place every agent sends its load.
func CheckLocalAddress(addr string) error {
	if ip := net.ParseIP(addr); ip == nil || ip.IsUnspecified() || ip.IsMulticast() {
		return fmt.Errorf("%q: give an IP address of this host, the one the agents reach (not all of its interfaces)", addr)
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		return fmt.Errorf("%s is no address of this host (%v): the contender runs here and listens on it", addr, err)
	}
	return ln.Close()
}
