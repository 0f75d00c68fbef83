// Package cmd is arena's command line: one file per subcommand, each a thin layer over the
// lab (internal/lab), the scenarios and the report.
package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
)

// Exit statuses (exitHelp says them in --help): the shell's convention for a run stopped
// with Ctrl-C, a check that failed (as Gatling's assertions exit 2), and any other error.
const (
	exitError       = 1
	exitFailed      = 2
	exitInterrupted = 130
)

// errInterrupted ends a command that the user stopped after it saved what it had.
var errInterrupted = errors.New("interrupted")

// gateFailed ends a command that ran (or compared) to the end but failed a check it was
// asked to: a --fail-on word, a --threshold, a regression (exit status 2).
type gateFailed struct{ what string }

func (e *gateFailed) Error() string { return e.what }

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
	root.AddCommand(newRunCmd(), newListCmd(), newVerifyCmd(), newBuildCmd(), newReportCmd(), newBenchCmd(), newDownstreamCmd(), newDBCmd(), newChatServerCmd(), newStreamServerCmd(), newMatrixCmd(), newReproduceCmd(), newCompareCmd(), newAgentCmd(), newK8sCmd())
	return root
}

// Execute runs the command line and exits with its status.
func Execute() {
	ctx := interrupts(os.Stderr, os.Interrupt, syscall.SIGTERM)
	os.Exit(runArena(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// interrupts is a context that ends at the first of sigs (Ctrl-C: the cell under way stops,
// its contender gets its grace after SIGTERM, the results are saved and the report drawn),
// and hurries at the second (the contender is killed at once, and the run saves and draws
// what it has all the same). A third ends arena outright; the kernel then kills the
// contender with it, and the next run sweeps the memory cgroup it leaves.
func interrupts(stderr io.Writer, sigs ...os.Signal) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	hurry := make(chan struct{})
	ch := make(chan os.Signal, len(sigs)*3)
	signal.Notify(ch, sigs...)
	go func() {
		<-ch
		cancel()
		<-ch
		fmt.Fprintln(stderr, "\narena: stopping now: the contender is killed, what finished is saved (Ctrl-C again ends arena at once)")
		close(hurry)
		signal.Stop(ch)
	}()
	return context.WithValue(ctx, hurryKey{}, (<-chan struct{})(hurry))
}

// hurryKey holds, in a command's context, the channel a second Ctrl-C closes.
type hurryKey struct{}

// hurryOf is the channel a second Ctrl-C closes, or nil (never) outside Execute.
func hurryOf(ctx context.Context) <-chan struct{} {
	h, _ := ctx.Value(hurryKey{}).(<-chan struct{})
	return h
}

// runArena runs arena with args, every command writing its results to stdout and its
// progress and errors to stderr, and returns the exit status.
func runArena(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	_, failed := err.(*gateFailed) // the command's own error, not joined to another
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case failed:
		fmt.Fprintln(stderr, "arena:", err)
		return exitFailed
	default:
		fmt.Fprintln(stderr, "arena:", err)
		return exitError
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

// open finds the lab and checks the shared settings; the lab reports progress to w (the
// command's stderr).
func (f *labFlags) open(w io.Writer) (*lab.Lab, error) {
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
		Settings: contender.Settings{HeapMB: f.heapMB}, Progress: lab.NewProgress(w)}, nil
}

// openWith opens the lab and selects contenders by name (all when none), finding a JDK
// 21+ only when one of them runs on Java.
func (f *labFlags) openWith(w io.Writer, names []string) (*lab.Lab, []*contender.Manifest, error) {
	l, err := f.open(w)
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
	if err := toolchainsFor(l, ms); err != nil {
		return nil, nil, err
	}
	return l, ms, nil
}

// toolchainsFor installs the runtimes the lab brings itself (Node.js) into its tools folder,
// checks that every other toolchain ms need is on this machine (one error naming what to
// install) and finds a JDK 21+ for the lab when one of them runs on Java.
func toolchainsFor(l *lab.Lab, ms []*contender.Manifest) error {
	var note func(string)
	if l.Progress != nil {
		note = l.Progress.Note
	}
	if err := contender.PrepareToolchains(context.Background(), l.Root, ms, note); err != nil {
		return err
	}
	for _, m := range ms {
		if m.Runtime == "java" {
			jdk, err := contender.FindJDK()
			l.Settings.JDK = jdk
			return err
		}
	}
	return nil
}
