package cmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/place"
	"github.com/arena-lab/arena/scenarios"
)

func newAgentCmd() *cobra.Command {
	var o agentOptions
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Serve a coordinator on another host: as a load agent (its share of each load) or a server agent (the lab, beside the contender)",
		Long: `Runs this host's share of a run's load when a coordinator asks: the coordinator
(the arena run the user typed) plans the level, and every agent plans it again from the same
options, takes its share (hits k ≡ i mod N of an open loop's schedule, its part of a closed
loop's connections, whole chat rooms or stream clients), begins at the start they agreed on, and answers with
its histograms, its timeline windows and its own CPU. The coordinator adds them exactly.
As a server agent it carries out the whole run on its host, the contender's: arena run as
on one machine (build, verify, start pinned, probe, stop), its load from the load agents
the coordinator names; the coordinator fetches the run's folder at the end.

It speaks HTTP + JSON, protocol ` + fmt.Sprint(agent.Protocol) + ` (docs/distributed.md), and answers only calls
carrying the run's secret (--secret-file, mode 0600, or ` + agent.SecretEnv + `; "-" reads its first line
from stdin), over TLS 1.3 with a key derived from that secret, which the coordinator pins:
given none, it makes one in a new file of mode 0600 and prints where. It sends load only to
--server-address (IP[:port] or name[:port]; none given, nowhere), within bounds of its own. A load agent takes no runs: only
--role server does, one at a time. A coordinator of another arena build refuses it. Pin it
with taskset to the CPUs it may use; it reports them. With --exit-with-stdin it ends when
its standard input closes: how an agent started over SSH dies with its session.`,
		Example: `  umask 077; head -c 32 /dev/urandom | xxd -p -c 64 > ~/.arena-secret
  taskset -c 0 arena agent --listen 10.0.0.2:7600 --secret-file ~/.arena-secret --server-address 10.0.0.1
  arena run sleep --agent-addrs 10.0.0.2:7600 --agent-secret-file ~/.arena-secret --server-address 10.0.0.1 --levels sleep-c800`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.serve(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", fmt.Sprintf("127.0.0.1:%d", agent.DefaultPort), "host:port to listen on (the coordinator must reach it)")
	f.StringVar(&o.name, "name", "", "this agent's name in the results (default: the host name)")
	f.BoolVar(&o.exitWithStdin, "exit-with-stdin", false, "exit when standard input closes (an agent started over SSH)")
	f.StringVar(&o.secretFile, "secret-file", "", "the run's secret: a file (mode 0600) holding it, or - for the first line of stdin (default: $"+agent.SecretEnv+")")
	f.StringSliceVar(&o.targets, "server-address", nil, "the server's address(es), IP[:port] or name[:port], the only ones this agent sends load to, on that port when one is given (default: none, no load is sent)")
	f.BoolVar(&o.allowTargetProbe, "allow-target-probe", false, "as a server agent: let a run's --target-pid or --target-cgroup probe a process or cgroup of this host")
	f.StringVar(&o.role, "role", "load", "load (shares of loads only) or server (also carries whole runs out: the lab beside the contender)")
	f.StringVar(&o.runsDir, "runs", "", "as a server agent: the folder for the runs it carries out (default: a folder under the system's temp)")
	return cmd
}

// agentOptions are arena agent's flags.
type agentOptions struct {
	listen, name, runsDir, secretFile, role string
	exitWithStdin, allowTargetProbe         bool
	targets                                 []string
}

// serve runs the agent until its context ends (or, with --exit-with-stdin, its stdin closes).
func (o *agentOptions) serve(cmd *cobra.Command) error {
	if _, _, err := net.SplitHostPort(o.listen); err != nil {
		return fmt.Errorf("--listen %q: give host:port, e.g. 0.0.0.0:%d", o.listen, agent.DefaultPort)
	}
	if o.role != "load" && o.role != "server" {
		return fmt.Errorf("--role %q: give load or server", o.role)
	}
	if err := agent.CheckAllowed(o.targets); err != nil {
		return err
	}
	if err := agent.CheckRunsDir(o.runsDir); o.runsDir != "" && err != nil {
		return fmt.Errorf("--runs: %w", err)
	}
	stdin := bufio.NewReader(cmd.InOrStdin())
	secret, err := readAgentSecret(o.secretFile, stdin)
	if err != nil {
		return err
	}
	if secret == "" && o.secretFile == "" {
		var file string
		if secret, file, err = agent.MakeSecretFile(); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "arena agent: no --secret-file nor %s: made the run's secret in %s (mode 0600); hand it to the coordinator (--agent-secret-file)\n", agent.SecretEnv, file)
	}
	if err := agent.CheckListen(o.listen, secret); err != nil {
		return err
	}
	self := agent.Self(o.name)
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen %s: %w", o.listen, err)
	}
	transport := "TLS 1.3, its key the run's secret's"
	served, err := agent.Listen(agent.LimitListener(ln, agent.MaxOpenConns), secret)
	if err != nil {
		ln.Close()
		return err
	}
	ln = served
	as := &agent.Server{Self: self, Resolve: agent.PlanResolver(scenarios.Find), Secret: secret, Targets: o.targets, RunsDir: o.runsDir,
		AllowTargetProbe: o.allowTargetProbe}
	if o.role == "server" {
		as.Run = runHere(secret)
	}
	srv, handshakes := agent.NewHTTPServer(as.Handler(), cmd.ErrOrStderr())
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	go handshakes.Summarise(ctx, agent.SummariseEvery)
	if o.exitWithStdin {
		go func() {
			_, _ = io.Copy(io.Discard, stdin)
			cancel()
		}()
	}
	go func() {
		<-ctx.Done()
		sctx, scancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer scancel()
		_ = srv.Shutdown(sctx) // a job in flight ends with its coordinator's request
		_ = srv.Close()
	}()
	fmt.Fprintf(cmd.OutOrStdout(), "arena agent %s listening on %s\n", self.Version, ln.Addr())
	fmt.Fprintf(cmd.ErrOrStderr(), "arena agent %s: protocol %d, pid %d, CPUs %s, %s\n", self.Name, agent.Protocol, self.Pid, self.CPUs, transport)
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// runHere is how a server agent runs the spec it is given: here, in this process, with the
// lab as arena run does, its load from the load agents the coordinator names (with the run's
// secret), or from the lab's own process when it names none.
func runHere(secret string) agent.RunFunc {
	return func(ctx context.Context, req agent.RunRequest, runsDir string, out io.Writer) (string, error) {
		var pl place.Placement = place.InProcess{}
		if len(req.LoadAgents) > 0 {
			pl = place.Running{Addrs: req.LoadAgents, ServerAddress: req.ServerAddress, Secret: secret}
		}
		status, err := runSpec(ctx, req.Spec, pl, runsDir, req.Command, "", out, out)
		if errors.Is(err, errInterrupted) { // the status says so
			err = nil
		}
		return status, err
	}
}

// readAgentSecret reads the run's secret from file, from stdin's first line when file is
// "-", or from the environment when no file is named.
func readAgentSecret(file string, stdin *bufio.Reader) (string, error) {
	if file != "-" {
		return agent.ReadSecret(file)
	}
	line, err := stdin.ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("--secret-file -: no secret on stdin: %w", err)
	}
	return strings.TrimSpace(line), nil
}
