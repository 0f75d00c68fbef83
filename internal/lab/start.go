package lab

import (
	"context"
	"fmt"
	"strings"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/profile"
)

// StartContender starts m pinned to the lab's server CPUs with the lab's settings, on port
// (0: a free one), with vars and its output in logPath; with prof, under its profiler, which
// may then signal it. It does not wait for readiness. The cells, verify, the bench family and
// the floors all start contenders through it.
func (l *Lab) StartContender(m *contender.Manifest, port int, vars map[string]string, logPath string, prof *profile.Session) (*contender.Instance, error) {
	opts := contender.StartOptions{Settings: l.Settings, CPUs: FormatCPUs(l.ServerCPUs), Port: port, Vars: vars, LogPath: logPath}
	if m.Runtime == "java" {
		// Every JVM logs its collections beside its output; a path JAVA_OPTS cannot carry
		// starts it without, and the cell's heap reading says why (readHeap).
		if flag, err := contender.GCLogFlag(GCLogPath(logPath)); err == nil {
			opts.Flags = append(opts.Flags, flag)
		}
	}
	if prof != nil {
		if err := prof.Apply(&opts); err != nil {
			return nil, fmt.Errorf("profile: %w", err)
		}
	}
	in, err := contender.Start(m, opts)
	if err != nil {
		return nil, err
	}
	if prof != nil {
		prof.Signal, prof.Pid = in.Signal, in.Pid
	}
	return in, nil
}

// GCLogPath is where a JVM started with its output in logPath logs its collections:
// name.log's name.gc.log, beside it.
func GCLogPath(logPath string) string { return strings.TrimSuffix(logPath, ".log") + ".gc.log" }

// StartReady builds m when its sources changed, starts it (StartContender, on a free port)
// and waits until path answers (contender.ReadinessPath for a contender; a stack's minimal
// example has only the path it is measured on). On error it is stopped, and its output's last
// lines join the error.
func (l *Lab) StartReady(ctx context.Context, m *contender.Manifest, path, logPath string, prof *profile.Session) (*contender.Instance, error) {
	if _, err := l.Builder().Build(ctx, m, false); err != nil {
		return nil, err
	}
	in, err := l.StartContender(m, 0, nil, logPath, prof)
	if err != nil {
		return nil, err
	}
	if err := in.WaitAnswer(ctx, path, readyTimeout); err != nil {
		in.Stop()
		return nil, fmt.Errorf("%v\n%s", err, strings.Join(in.Tail(), "\n"))
	}
	return in, nil
}
