package lab

import (
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/scenario"
)

// A cell records what its server ran with, read from its processes at the load's end: here
// a python server with a sleep beside it in its tree, each counted by name; not a Java
// contender, so no JVM is asked for.
func TestACellRecordsItsServersRuntime(t *testing.T) {
	short(t)
	r := runAlone(t, testLab(t, nil), pyServer(t, "runtime", "sleep 600 &"), scenario.Level{Name: "ready", Load: readiness(2 * time.Second)})
	c := r.wait(t)
	rt := c.Runtime
	if rt == nil {
		t.Fatalf("no runtime recorded (outcome %+v)", c.Outcome)
	}
	t.Logf("recorded: threads %v, processes %v, unread %v", rt.Threads, rt.Processes, rt.Unread)
	if rt.Processes["sleep"] != 1 || rt.Processes["python"] != 1 || rt.Threads["python"] < 1 {
		t.Errorf("processes %v, threads %v; want the python server and its sleep", rt.Processes, rt.Threads)
	}
	if rt.JVM != nil || len(rt.Unread) != 0 {
		t.Errorf("jvm %+v, unread %v; want neither for a python server read whole", rt.JVM, rt.Unread)
	}
}
