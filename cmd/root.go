// Package cmd is arena's command line: one file per subcommand, each a thin layer over the
// lab (internal/lab), the scenarios and the report.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
)

// exitInterrupted is the shell's convention for a run stopped with Ctrl-C.
const exitInterrupted = 130

// errInterrupted ends a command that the user stopped after it saved what it had.
var errInterrupted = errors.New("interrupted")

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "arena",
		Short: "Run server stacks side by side on identical workloads, and report honestly",
		Long: `arena builds reactive and thread-per-request server stacks ("contenders"), checks each
against one contract, drives them through the published studies' workloads ("scenarios")
with a coordinated-omission-correct client, probes CPU, memory and threads on the same
timeline, and writes results (JSON, CSV, .hlog) and a self-contained HTML report.

Start with:  arena run            (the default comparison)
             arena list           (what can be run)`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newRunCmd(), newListCmd(), newVerifyCmd(), newBuildCmd(), newReportCmd(), newBenchCmd(), newDownstreamCmd(), newChatServerCmd(), newStreamServerCmd(), newMatrixCmd())
	return root
}

// Execute runs the command line and exits with its status.
func Execute() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop() // a second Ctrl-C ends arena at once; the kernel then kills the contender with it
	}()
	err := newRoot().ExecuteContext(ctx)
	switch {
	case err == nil:
	case errors.Is(err, errInterrupted):
		os.Exit(exitInterrupted)
	default:
		fmt.Fprintln(os.Stderr, "arena:", err)
		os.Exit(1)
	}
}

// labFlags are the settings every command that starts contenders shares.
type labFlags struct {
	serverCPUs string
	clientCPUs string
	heapMB     int
}

func (f *labFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.serverCPUs, "server-cpus", "1", "CPUs the contender is pinned to (taskset list, e.g. 1 or 2-3)")
	cmd.Flags().StringVar(&f.clientCPUs, "client-cpus", "0", "CPUs the client (arena itself) is pinned to")
	cmd.Flags().IntVar(&f.heapMB, "heap", 512, "heap in MiB for every contender (JVM -Xms/-Xmx, Node --max-old-space-size, Go GOMEMLIMIT)")
}

// open finds the lab and checks the shared settings.
func (f *labFlags) open() (*lab.Lab, error) {
	root, err := lab.FindRoot()
	if err != nil {
		return nil, err
	}
	server, err := lab.ParseCPUs(f.serverCPUs)
	if err != nil {
		return nil, fmt.Errorf("--server-cpus: %w", err)
	}
	client, err := lab.ParseCPUs(f.clientCPUs)
	if err != nil {
		return nil, fmt.Errorf("--client-cpus: %w", err)
	}
	if f.heapMB < 64 || f.heapMB > 65536 {
		return nil, fmt.Errorf("--heap %d: give MiB between 64 and 65536", f.heapMB)
	}
	return &lab.Lab{Root: root, ServerCPUs: server, ClientCPUs: client,
		Settings: contender.Settings{HeapMB: f.heapMB}, Progress: lab.NewProgress(os.Stderr)}, nil
}

// openWith opens the lab and selects contenders by name (all when none), finding a JDK
// 21+ only when one of them runs on Java.
func (f *labFlags) openWith(names []string) (*lab.Lab, []*contender.Manifest, error) {
	l, err := f.open()
	if err != nil {
		return nil, nil, err
	}
	all, err := contender.Discover(filepath.Join(l.Root, "contenders"))
	if err != nil {
		return nil, nil, err
	}
	ms, err := contender.Select(all, names)
	if err != nil {
		return nil, nil, err
	}
	for _, m := range ms {
		if m.Runtime == "java" {
			if l.Settings.JDK, err = contender.FindJDK(); err != nil {
				return nil, nil, err
			}
			break
		}
	}
	return l, ms, nil
}
