package place

import (
	"context"
	"errors"
	"fmt"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/lab"
)

// Running is load agents someone else started (`arena agent` by hand, or the load agents a
// coordinator names to its server agent), reached at Addrs with the run's Secret; they
// reach the contender at ServerAddress, an address of this host.
type Running struct {
	Addrs         []string
	ServerAddress string
	Secret        string
}

var _ Placement = Running{}

// Remote is false: the lab runs here.
func (p Running) Remote() bool { return false }

// Open greets the agents; they are not this run's to stop.
func (p Running) Open(ctx context.Context, l *lab.Lab) (*Placed, error) {
	switch {
	case len(p.Addrs) == 0:
		return nil, errors.New("no agent addresses")
	case l == nil:
		return nil, errors.New("agents already running need the lab that runs here")
	case p.Secret == "":
		return nil, errors.New("--agent-addrs needs the agents' secret (--agent-secret-file, or " + agent.SecretEnv + "): there is no agent without one")
	case p.ServerAddress == "":
		return nil, errors.New("--agent-addrs needs --server-address: the address of this host the agents reach the contender on")
	}
	if err := CheckLocalAddress(p.ServerAddress); err != nil {
		return nil, fmt.Errorf("--server-address: %w", err)
	}
	a, err := dial(ctx, l, p.Addrs, p.ServerAddress, p.Secret, "agents")
	if err != nil {
		return nil, err
	}
	return &Placed{Agents: a}, nil
}
