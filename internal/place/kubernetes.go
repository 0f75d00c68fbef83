package place

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/k8s"
	"github.com/arena-lab/arena/internal/lab"
)

// Kubernetes places the run on a cluster: a server agent's pod, which carries the run out,
// and the load agents as an Indexed Job, all removed at the end.
type Kubernetes struct {
	Options k8s.Options // Agents 0 is one; RunID and Secret are made when not given
	// Client is the cluster's; nil is the current kube context's (KUBECONFIG,
	// ~/.kube/config, or the pod's service account inside a cluster).
	Client   kubernetes.Interface
	Progress io.Writer // the pods' state as it changes
}

var _ Placement = Kubernetes{}

// Remote is true: the server agent carries the run out.
func (p Kubernetes) Remote() bool { return true }

// Open creates the server pod and the load agents' Job, waits for them, and splits the server
// pod's cores: the first for the lab, the rest for the contender.
func (p Kubernetes) Open(ctx context.Context, _ *lab.Lab) (*Placed, error) {
	o, err := p.options()
	if err != nil {
		return nil, err
	}
	client := p.Client
	if client == nil {
		if client, err = kubeClient(); err != nil {
			return nil, err
		}
	}
	l := &k8s.Launcher{Client: client, Options: o, Progress: p.Progress}
	agents, err := l.Launch(ctx)
	if err != nil {
		return nil, err
	}
	placed := &Placed{stop: func() { p.cleanup(ctx, l) }}
	server, err := agent.Dial(ctx, agents.Server, o.Secret)
	if err != nil {
		placed.Stop()
		return nil, err
	}
	cpus, err := lab.ParseCPUs(server.Hello().CPUs)
	if err != nil || len(cpus) < 2 {
		placed.Stop()
		return nil, fmt.Errorf("the server pod may use CPUs %q: it needs two or more, one for the lab and the rest for the contender (--server-cores)", server.Hello().CPUs)
	}
	host, _, _ := net.SplitHostPort(agents.Server)
	placed.Server = &Server{Agent: server, LoadAddrs: agents.Load, Address: host, LabCPUs: lab.FormatCPUs(cpus[:1]), CPUs: lab.FormatCPUs(cpus[1:]),
		Where: fmt.Sprintf("pod %s-server in namespace %s", "arena-"+o.RunID, o.Namespace)}
	return placed, nil
}

// options are the run's: one load agent at least, a run id and a secret made for it.
func (p Kubernetes) options() (k8s.Options, error) {
	o := p.Options
	if o.Agents == 0 {
		o.Agents = 1
	}
	if o.RunID == "" {
		o.RunID = time.Now().UTC().Format("20060102-150405")
	}
	if o.Secret == "" {
		var err error
		if o.Secret, err = agent.NewSecret(); err != nil {
			return o, err
		}
	}
	return o.WithDefaults(), nil
}

// cleanup removes the run's objects, even after a Ctrl-C, saying how to when it cannot.
func (p Kubernetes) cleanup(ctx context.Context, l *k8s.Launcher) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := l.Cleanup(cctx); err != nil && p.Progress != nil {
		o := l.Options
		fmt.Fprintf(p.Progress, "arena: removing the run's pods: %v (kubectl delete %s -n %s -l arena.dev/run=%s)\n", err, k8s.Kinds, o.Namespace, o.RunID)
	}
}

// kubeClient is the current kube context's client.
func kubeClient() (kubernetes.Interface, error) {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("--kubernetes: no usable kube context (%v): set KUBECONFIG or run inside the cluster", err)
	}
	return kubernetes.NewForConfig(cfg)
}
