package cmd

import (
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/k8s"
)

func newK8sCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "k8s",
		Short: "Place arena's agents on a Kubernetes cluster",
		Long: `arena's agents on Kubernetes: the server agent as a Pod, the load agents as one Indexed
Job, every container with whole CPUs whose requests equal their limits (Guaranteed QoS:
exclusive cores on nodes with the static CPU manager policy), the load agents kept off
the server's node. See docs/distributed.md.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newK8sManifestsCmd())
	return cmd
}

// k8sFlags are the settings of the objects placed on the cluster.
type k8sFlags struct {
	o          k8s.Options
	secretFile string
}

func (f *k8sFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.o.Agents, "agents", 1, "load agents (one pod each)")
	fl.StringVar(&f.o.RunID, "run-id", "", "labels (arena.dev/run) and names the objects (default: the time, e.g. 20261125-101500)")
	fl.IntVar(&f.o.Port, "port", k8s.DefaultPort, "the agents' port")
	registerPlacement(fl, &f.o, "")
}

// registerPlacement registers the settings of the pods a run places, for arena k8s manifests
// and for arena run --kubernetes (whose help says so with prefix).
func registerPlacement(fl *pflag.FlagSet, o *k8s.Options, prefix string) {
	fl.StringVar(&o.Image, "image", "", prefix+"the agents' image, built from deploy/Dockerfile (required), e.g. registry.example/arena:dev")
	fl.StringVar(&o.LoadImage, "load-image", "", prefix+"the load agents' image when it is another, e.g. one built by ko (default: --image)")
	fl.StringVar(&o.Namespace, "namespace", k8s.DefaultNamespace, prefix+"namespace of the run's objects (it must exist)")
	fl.IntVar(&o.ServerCPUs, "server-cores", k8s.DefaultServerCPUs, prefix+"whole cores for the server agent and its contender (requests = limits): one for the lab, the rest for the contender")
	fl.IntVar(&o.AgentCPUs, "agent-cores", k8s.DefaultAgentCPUs, prefix+"whole cores for each load agent (requests = limits)")
	fl.IntVar(&o.ServerMemoryMiB, "server-memory", k8s.DefaultServerMemoryMiB, prefix+"MiB for the server agent, its contender and the contender's build")
	fl.IntVar(&o.AgentMemoryMiB, "agent-memory", k8s.DefaultAgentMemoryMiB, prefix+"MiB for each load agent")
	fl.StringToStringVar(&o.ServerNodeSelector, "server-node", nil, prefix+"node labels the server's node must have, e.g. arena.dev/pool=server")
	fl.StringVar(&o.CoordinatorCIDR, "coordinator-cidr", "", prefix+"where a coordinator outside the cluster calls the agents from, as the pods see it (e.g. 10.1.2.3/32); pods labelled arena.dev/coordinator=true in the namespace always may")
	fl.StringToStringVar(&o.AgentNodeSelector, "agent-node", nil, prefix+"node labels the load agents' nodes must have, e.g. arena.dev/pool=load")
}

// options are the flags' options, with a run id from the clock when none was given.
func (f *k8sFlags) options(now time.Time) k8s.Options {
	o := f.o
	if o.RunID == "" {
		o.RunID = now.UTC().Format("20060102-150405")
	}
	return o.WithDefaults()
}

func newK8sManifestsCmd() *cobra.Command {
	var f k8sFlags
	cmd := &cobra.Command{
		Use:   "manifests",
		Short: "Write the Kubernetes objects of a run as YAML, to read or to kubectl apply",
		Long: `Writes to stdout the objects arena's Kubernetes launcher creates for a run: the server
agent's Pod and the load agents' Indexed Job, the run's secret (a Secret, made afresh
unless --secret-file names one), the server's Service, the NetworkPolicies and the Role the
launcher needs, labelled arena.dev/run=<run id>. Nothing is sent to a cluster. The output
holds the secret: keep it as you would the secret.`,
		Example: `  arena k8s manifests --agents 4 --image registry.example/arena:dev > lab.yaml
  kubectl create namespace arena && kubectl apply -f lab.yaml
  kubectl get pods -n arena -l arena.dev/run -o wide`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o := f.options(time.Now())
			var err error
			if o.Secret, err = agent.ReadSecret(f.secretFile); err == nil && o.Secret == "" {
				o.Secret, err = agent.NewSecret()
			}
			if err != nil {
				return err
			}
			y, err := k8s.YAML(o)
			if err != nil {
				return err
			}
			_, err = cmd.OutOrStdout().Write(y)
			return err
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&f.secretFile, "secret-file", "", "a file holding the run's secret (default: $"+agent.SecretEnv+", else a new one)")
	return cmd
}
