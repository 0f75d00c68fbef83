package findings

import (
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// The setup row says, per stack, what its processes were read to run with: the JVM's
// settings, its pools (not the JVM's own threads), a count that differed between cells as a
// range, a cluster's processes, and a JVM that could not be read as such; a stack with no
// reading is left out, and runs without any say so.
func TestRuntimeRowReadsTheCells(t *testing.T) {
	run := func(cells ...results.Cell) Run { return Run{Run: &results.Run{Cells: cells}} }
	fn1, fn2 := results.Cell{Contender: "spring-webflux-fn", Repeat: 1, Runtime: runtimeRead("spring-webflux-fn", 1)},
		results.Cell{Contender: "spring-webflux-fn", Repeat: 2, Runtime: runtimeRead("spring-webflux-fn", 2)}
	node := results.Cell{Contender: "node-express-cluster", Runtime: &results.Runtime{
		Threads: map[string]int{"node": 10}, Processes: map[string]int{"node": 3}}}
	got := runtimeOf([]Run{run(fn1, node), run(fn2, results.Cell{Contender: "vertx"})}, []string{"spring-webflux-fn", "vertx", "node-express-cluster"})
	want := "spring-webflux-fn: Serial GC, 1 processor(s), heap 512/512 MiB (initial/max), virtual-thread carriers none started, " +
		"reactor-http-epoll- ×3–4; node-express-cluster: node processes ×3"
	if got != want {
		t.Errorf("row\n%s\nwant\n%s", got, want)
	}
	if strings.Contains(got, "CompilerThread") || strings.Contains(got, "main") {
		t.Errorf("the JVM's own threads are in the row: %s", got)
	}
	unread := runtimeOf([]Run{run(fn2)}, []string{"spring-webflux-fn"})
	if !strings.Contains(unread, "JVM not read (jcmd 10: exit status 1: Unable to open socket file)") {
		t.Errorf("an unread JVM: %s", unread)
	}
	if none := runtimeOf([]Run{run(results.Cell{Contender: "vertx"})}, []string{"vertx"}); !strings.HasPrefix(none, "not read") {
		t.Errorf("runs without readings: %s", none)
	}
}
