package place

import (
	"context"
	"errors"
	"fmt"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/results"
)

// MaxInProcess is the most load agents a run keeps in its own process.
const MaxInProcess = 64

// InProcess deals the load out among Agents load agents inside this process (the code
// remote agents run, merged as theirs are); with none, the lab drives the load itself.
type InProcess struct {
	Agents  int
	Resolve agent.Resolver // plans a job as the coordinator did (agent.PlanResolver)
}

var _ Placement = InProcess{}

// Remote is false: the lab runs here.
func (p InProcess) Remote() bool { return false }

// Open makes the agents; there is nothing to stop.
func (p InProcess) Open(_ context.Context, l *lab.Lab) (*Placed, error) {
	switch {
	case p.Agents < 0 || p.Agents > MaxInProcess:
		return nil, fmt.Errorf("--agents %d: give 1 to %d", p.Agents, MaxInProcess)
	case p.Agents == 0:
		return &Placed{}, nil
	case l == nil:
		return nil, errors.New("agents in this process need the lab that runs here")
	}
	fleet := &agent.Fleet{}
	cpus := lab.FormatCPUs(l.ClientCPUs) // where the lab pins itself, once the run begins
	topo := results.Topology{Launcher: "in-process", Server: results.TopoHost{Name: "server", Host: "localhost", CPUs: lab.FormatCPUs(l.ServerCPUs)}}
	for i := 0; i < p.Agents; i++ {
		self := agent.Self(fmt.Sprintf("in-process-%d", i))
		self.CPUs = cpus
		fleet.Runners = append(fleet.Runners, &agent.InProcess{Self: self, Resolve: p.Resolve})
		topo.Agents = append(topo.Agents, results.TopoHost{Name: self.Name, Host: self.Host, Addr: "in-process", CPUs: cpus})
	}
	return &Placed{Agents: &lab.Agents{Fleet: fleet, Topology: topo}}, nil
}
