package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/k8s"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/launch"
	"github.com/arena-lab/arena/internal/place"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/scenarios"
)

// agentFlags choose where a run's load comes from: this process (none set), N agents inside
// it (--agents), N agent processes on this host (--agent-processes), agents already running
// on other hosts (--agent-addrs, with --server-address where they reach the contender),
// hosts over SSH (--hosts) or Kubernetes.
type agentFlags struct {
	inProcess     int
	processes     int
	addrs         []string
	serverAddress string
	hosts         string
	kubernetes    bool
	k8s           k8s.Options
	secretFile    string // the secret of agents started by hand (--agent-addrs)
}

func (f *agentFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.inProcess, "agents", 0, "deal every load out among N load agents inside this process (the same code remote agents run), merged exactly; with --kubernetes, N load agents' pods")
	fl.IntVar(&f.processes, "agent-processes", 0, "deal every load out among N arena agent processes on this host, pinned to the client CPUs, each holding a secret made for the run (what --hosts runs, on one host), merged exactly")
	fl.StringSliceVar(&f.addrs, "agent-addrs", nil, "drive the load from arena agents already running at these host:port addresses (see arena agent), merged exactly")
	fl.StringVar(&f.secretFile, "agent-secret-file", "", "with --agent-addrs: the file holding the secret the agents were started with (default: $"+agent.SecretEnv+")")
	fl.StringVar(&f.serverAddress, "server-address", "", "with --agent-addrs: this host's address the agents reach the contender on (given to it as BIND_ADDRESS)")
	fl.BoolVar(&f.kubernetes, "kubernetes", false, "carry the run out on Kubernetes, in the current kube context: a server agent's pod and --agents load agents as an Indexed Job (docs/distributed.md)")
	registerPlacement(fl, &f.k8s, "with --kubernetes: ")
	fl.StringVar(&f.hosts, "hosts", "", "a hosts file (TOML, docs/distributed.md): over SSH, a load agent on each client host, pinned with taskset, and when the server host has an ssh destination the whole run carried out there by a server agent; all stopped at the end")
}

// placement is where the flags place the run's agents: nowhere (the lab drives the load
// itself), N in this process, agents already running, hosts over SSH, or Kubernetes.
func (f *agentFlags) placement(stderr io.Writer) (place.Placement, error) {
	given := 0
	for _, set := range []bool{f.inProcess != 0 && !f.kubernetes, f.processes != 0, len(f.addrs) > 0, f.hosts != "", f.kubernetes} {
		if set {
			given++
		}
	}
	switch {
	case f.kubernetes && (f.hosts != "" || len(f.addrs) > 0 || f.serverAddress != "" || f.processes != 0):
		return nil, errors.New("--kubernetes places its own agents: no --hosts, --agent-addrs, --agent-processes or --server-address with it")
	case given > 1:
		return nil, errors.New("--agents, --agent-processes, --agent-addrs and --hosts: give one")
	case f.serverAddress != "" && len(f.addrs) == 0:
		return nil, errors.New("--server-address goes with --agent-addrs")
	case f.kubernetes:
		o := f.k8s
		o.Agents = f.inProcess
		return place.Kubernetes{Options: o, Progress: stderr}, nil
	case f.hosts != "":
		hosts, err := launch.ParseHosts(f.hosts)
		if err != nil {
			return nil, err
		}
		return place.SSH{Hosts: hosts, File: f.hosts, Progress: stderr}, nil
	case f.processes != 0:
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("--agent-processes: finding arena's own binary: %w", err)
		}
		return place.Processes{Agents: f.processes, Exe: exe}, nil
	case len(f.addrs) > 0:
		secret, err := agent.ReadSecret(f.secretFile)
		if err != nil {
			return nil, err
		}
		return place.Running{Addrs: f.addrs, ServerAddress: f.serverAddress, Secret: secret}, nil
	}
	return place.InProcess{Agents: f.inProcess, Resolve: agent.PlanResolver(scenarios.Find)}, nil
}

// describeAgents is the line a run prints about where its load comes from.
func describeAgents(a *lab.Agents) string {
	var parts []string
	for _, h := range a.Topology.Agents {
		parts = append(parts, fmt.Sprintf("%s (%s, CPU %s)", h.Name, h.Addr, h.CPUs))
	}
	return fmt.Sprintf("load from %d agent(s): %s", len(parts), strings.Join(parts, ", "))
}

// runRemote has the server agent pl places carry spec out on its host, shows its progress,
// and prints the summary of the run's folder, fetched into runsDir (default: <lab>/runs).
// Every agent is stopped on the way out.
func runRemote(ctx context.Context, pl place.Placement, spec results.RunSpec, runsDir string, stdout, stderr io.Writer) error {
	if runsDir == "" {
		root, err := lab.FindRoot()
		if err != nil {
			return err
		}
		runsDir = filepath.Join(root, "runs")
	}
	placed, err := pl.Open(ctx, nil)
	if err != nil {
		return err
	}
	defer placed.Stop()
	srv := placed.Server
	// The run's id is the coordinator's; its CPUs are where the server host has them.
	spec.ID = time.Now().Format("20060102-150405") + "-" + spec.Scenario
	spec.ServerCPUs, spec.ClientCPUs = srv.CPUs, srv.LabCPUs
	fmt.Fprintf(stderr, "arena run: carried out on %s: the contender on CPU %s, the lab on CPU %s; load agents %s\n",
		srv.Where, srv.CPUs, srv.LabCPUs, strings.Join(srv.LoadAddrs, ", "))
	dir, end, runErr := srv.Carry(ctx, spec, os.Args, runsDir, stderr)
	if dir == "" {
		return runErr
	}
	if run, err := results.Load(dir); err == nil {
		if err := printSummary(stdout, run); err != nil {
			fmt.Fprintf(stderr, "summary: not printed: %v\n", err)
		}
	}
	fmt.Fprintf(stderr, "\nresults: %s (carried out on %s)\nreport:  %s\n", dir, srv.Where, filepath.Join(dir, "report.html"))
	if ctx.Err() != nil || end.Status == results.RunInterrupted {
		fmt.Fprintln(stderr, "interrupted: finished cells are kept in the results")
		return errInterrupted
	}
	return runErr
}
