package findings

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// poolWords pick, from the thread groups a cell read, those that are a server's event loops,
// workers and carriers (Netty, Reactor, Vert.x, Tomcat, Jetty, Undertow, the virtual-thread
// scheduler, tokio, …) for the setup row; every group is in results.json as read.
var poolWords = []string{"eventloop", "event-loop", "epoll", "nio", "worker", "exec", "qtp", "xnio", "tokio",
	"acceptor", "selector", "dispatcher", "forkjoinpool", "vert.x", "reactor", "blocking", "helidon"}

// runtimeOf is the setup row of what the study's stacks ran with, read from their cells'
// processes (results.Runtime) over every run of the study: per contender, its JVM's
// collector, processors, heap and virtual-thread carriers, its pools' thread counts and its
// processes; a count that differed between cells as a range.
func runtimeOf(runs []Run, stacks []string) string {
	var parts []string
	for _, name := range stacks {
		var rts []*results.Runtime
		for _, r := range runs {
			for _, c := range r.Cells {
				if c.Contender == name && c.Runtime != nil {
					rts = append(rts, c.Runtime)
				}
			}
		}
		if len(rts) > 0 {
			parts = append(parts, name+": "+runtimeLine(rts))
		}
	}
	if len(parts) == 0 {
		return "not read (runs made before arena read each server's runtime)"
	}
	return strings.Join(parts, "; ")
}

// runtimeLine is one contender's readings over its cells.
func runtimeLine(rts []*results.Runtime) string {
	var jvms []*results.JVM
	var why []string
	for _, rt := range rts {
		if rt.JVM != nil {
			jvms = append(jvms, rt.JVM)
		} else if w := rt.Unread["jvm"]; w != "" && !slices.Contains(why, w) {
			why = append(why, w)
		}
	}
	var out []string
	if len(jvms) > 0 {
		out = append(out, jvmLine(jvms))
	} else if len(why) > 0 {
		out = append(out, "JVM not read ("+why[0]+")")
	}
	threads, procs := map[string][]int{}, map[string][]int{}
	for _, rt := range rts {
		for g, n := range rt.Threads {
			if isPool(g) {
				threads[g] = append(threads[g], n)
			}
		}
		for g, n := range rt.Processes {
			procs[g] = append(procs[g], n)
		}
	}
	for _, g := range sortedKeys(threads) {
		out = append(out, fmt.Sprintf("%s ×%s", g, span(threads[g])))
	}
	if len(procs) > 1 || (len(procs) == 1 && slices.Max(procs[sortedKeys(procs)[0]]) > 1) {
		for _, g := range sortedKeys(procs) {
			out = append(out, fmt.Sprintf("%s processes ×%s", g, span(procs[g])))
		}
	}
	if len(out) == 0 {
		return "nothing read"
	}
	return strings.Join(out, ", ")
}

// jvmLine is the JVM's settings over its cells.
func jvmLine(jvms []*results.JVM) string {
	var collectors, procs, heaps, carriers []string
	for _, j := range jvms {
		add := func(list *[]string, s string) {
			if !slices.Contains(*list, s) {
				*list = append(*list, s)
			}
		}
		add(&collectors, orUnread(j.Collector))
		add(&procs, orUnread(countOrEmpty(j.Processors)))
		add(&heaps, fmt.Sprintf("%.0f/%.0f", j.InitialHeapMB, j.MaxHeapMB))
		switch {
		case j.Carriers == nil:
			add(&carriers, "unread")
		case *j.Carriers == 0:
			add(&carriers, "none started")
		default:
			add(&carriers, fmt.Sprintf("%d (parallelism %d)", *j.Carriers, j.VirtualThreadParallelism))
		}
	}
	return fmt.Sprintf("%s GC, %s processor(s), heap %s MiB (initial/max), virtual-thread carriers %s",
		strings.Join(collectors, " or "), strings.Join(procs, " or "), strings.Join(heaps, " or "), strings.Join(carriers, " or "))
}

func isPool(group string) bool {
	g := strings.ToLower(group)
	for _, w := range poolWords {
		if strings.Contains(g, w) {
			return true
		}
	}
	return false
}

// span is "2", or "10–200" when the cells read different counts.
func span(ns []int) string {
	lo, hi := slices.Min(ns), slices.Max(ns)
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

func sortedKeys(m map[string][]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func orUnread(s string) string {
	if s == "" {
		return "unread"
	}
	return s
}

func countOrEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n)
}
