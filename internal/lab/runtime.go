package lab

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/results"
)

// readRuntime reads what the cell's server ran with from its processes, once its load has
// ended and before it is stopped (results.Runtime says why then): its threads and processes
// by name and, for a Java contender, its JVM's settings through the lab's JDK's jcmd. A
// server already gone has nothing to read, and the record says so.
func (l *Lab) readRuntime(ctx context.Context, c cellPlan, srv *cellServer) *results.Runtime {
	jcmd := ""
	if c.m.Runtime == "java" {
		jcmd = filepath.Join(l.Settings.JDK.Home, "bin", "jcmd")
	}
	if srv.gone() {
		const why = "the server had exited before the reading"
		rt := &results.Runtime{Unread: map[string]string{"threads": why}}
		if jcmd != "" {
			rt.Unread["jvm"] = why
		}
		return rt
	}
	l.Progress.Step("runtime")
	rt := probe.ReadRuntime(ctx, srv.in.Pid(), jcmd)
	l.Progress.Done(runtimeLine(rt))
	return rt
}

// runtimeLine is the progress line of a reading: the JVM's collector and processors, or
// how many threads.
func runtimeLine(rt *results.Runtime) string {
	threads := 0
	for _, n := range rt.Threads {
		threads += n
	}
	if rt.JVM != nil {
		return fmt.Sprintf("%s, %d processor(s), %d threads", rt.JVM.Collector, rt.JVM.Processors, threads)
	}
	if why := rt.Unread["jvm"]; why != "" {
		return fmt.Sprintf("%d threads; no JVM read: %s", threads, why)
	}
	return fmt.Sprintf("%d threads", threads)
}
