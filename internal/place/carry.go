package place

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/results"
)

// Carry has the server agent run spec on its host, the load from the placed load agents,
// recording command; the run's progress goes to progress. At the end (or at Ctrl-C, once the
// agent has saved what it finished) the run's folder is fetched into runsDir. It returns the
// folder ("" when there was none to fetch) and how the run ended.
func (s *Server) Carry(ctx context.Context, spec results.RunSpec, command []string, runsDir string, progress io.Writer) (string, agent.RunStatus, error) {
	req := agent.RunRequest{Spec: spec, LoadAgents: s.LoadAddrs, ServerAddress: s.Address, Command: command}
	end, runErr := s.Agent.RunRemote(ctx, req, progress)
	if runErr == nil && end.Error != "" {
		runErr = fmt.Errorf("server agent %s: %s", s.Where, end.Error)
	}
	// The remote run ends on its own or by ctx; either way it saved what it finished, and
	// the folder comes back even after a Ctrl-C.
	fetchCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	dir, fetchErr := s.Agent.FetchRun(fetchCtx, spec.ID, runsDir, time.Minute)
	if fetchErr != nil {
		if runErr != nil { // a run that failed before it made its folder has none to fetch
			return "", end, runErr
		}
		return "", end, fetchErr
	}
	return dir, end, runErr
}
