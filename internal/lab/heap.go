package lab

import (
	"path/filepath"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/results"
)

// readHeap reads what a Java server's collections left of its heap during the load, from the
// GC log its start gave it (StartContender), once it has stopped: HotSpot writes each line as
// the collection ends, and the stop leaves nothing to come. Nil for a server that is no JVM;
// a heap without a figure, and why, when there is no log or no collection in the load.
func readHeap(c cellPlan, dir string, m measurement) *results.Heap {
	if c.m.Runtime != "java" {
		return nil
	}
	path := GCLogPath(c.file(dir, "logs", "log"))
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		rel = path
	}
	unread := func(why string) *results.Heap { return &results.Heap{Log: rel, Unread: why} }
	if m.inWarmup {
		return unread("no load ran")
	}
	if _, err := contender.GCLogFlag(path); err != nil {
		return unread("no GC log: " + err.Error())
	}
	events, err := probe.ReadGCLogs(path)
	if err != nil {
		return unread("no GC log read: " + err.Error())
	}
	h := probe.HeapOf(events, m.start, m.elapsed, probePeriod)
	h.Log = rel
	return h
}
