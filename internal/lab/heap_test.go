package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// allocating is a Java program that fills a small heap a few dozen times, keeping one array
// in fifty, and collects the whole heap once (System.gc()) before it exits.
const allocating = `public class Alloc {
    public static void main(String[] args) throws Exception {
        java.util.List<byte[]> kept = new java.util.ArrayList<>();
        for (int round = 0; round < 30; round++) {
            for (int i = 0; i < 20000; i++) {
                byte[] b = new byte[1024];
                if (i % 50 == 0) kept.add(b);
            }
            Thread.sleep(5);
        }
        kept.clear();
        System.gc();
    }
}
`

// A JVM the lab starts logs its collections beside its output, and the cell reads them into
// its heap figure on its own clock, with its numbers. A real start of the lab's JDK.
func TestAJVMStartLogsItsCollections(t *testing.T) {
	short(t)
	jdk, err := contender.FindJDK()
	if err != nil {
		t.Skipf("no JDK %d+ to start: %v", contender.MinJava, err)
	}
	l := testLab(t, nil)
	l.Settings.JDK = jdk
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "Alloc.java"), []byte(allocating), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &contender.Manifest{Name: "alloc", Runtime: "java", Dir: dir, Start: "exec java $JAVA_OPTS Alloc.java"}
	c := cellPlan{m: m, level: scenario.Level{Name: "l"}, repeat: 1}
	run := t.TempDir()
	logPath := c.file(run, "logs", "log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	in, err := l.StartContender(m, 0, nil, logPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-in.Exited():
	case <-time.After(2 * time.Minute):
		in.Stop()
		t.Fatal("the JVM did not end within 2 minutes")
	}
	if code, _, _ := in.ExitState(); code == nil || *code != 0 {
		t.Fatalf("the JVM exited %v: %s", code, strings.Join(in.Tail(), "\n"))
	}
	h := readHeap(c, run, measurement{start: began, elapsed: time.Since(began)})
	if h == nil || h.Unread != "" || h.Log != "logs/alloc-l-r1.gc.log" {
		t.Fatalf("heap %+v; want the collections of logs/alloc-l-r1.gc.log", h)
	}
	t.Logf("%d collections (%d full), after max %.0f MB, end %.0f MB, pauses %.1f ms", h.Collections, h.FullCollections,
		h.MaxAfterMB, h.EndAfterMB, h.PauseMsTotal)
	if h.Collections < 5 || h.FullCollections < 1 || len(h.Timeline) != h.Collections || !h.Timeline[len(h.Timeline)-1].Full {
		t.Errorf("heap %+v; want young collections of the 64 MiB heap, then System.gc()'s full one last", h)
	}
	for _, p := range h.Timeline {
		if p.T < 0 || p.T > time.Since(began).Seconds() || p.HeapMB != 0 && p.HeapMB > 64 {
			t.Errorf("point %+v off the cell's clock or beyond the 64 MiB heap", p)
		}
	}
	var cell results.Cell
	cell.PutHeap(h)
	if cell.Numbers[results.NumberLiveHeapMax] != h.MaxAfterMB || cell.Numbers[results.NumberLiveHeapEnd] != h.EndAfterMB {
		t.Errorf("numbers %v", cell.Numbers)
	}
	// The same log read for a load that ended before the JVM started has no figure, and says why.
	before := readHeap(c, run, measurement{start: began.Add(-time.Hour), elapsed: time.Minute})
	if before.Collections != 0 || !strings.HasPrefix(before.Unread, "no collection during the load") || before.Numbers() != nil {
		t.Errorf("a load without collections: %+v", before)
	}
}

// A server that is no JVM has no heap figure; a JVM whose load never ran has none, and why.
func TestReadHeapWithoutAFigure(t *testing.T) {
	run := t.TempDir()
	goServer := cellPlan{m: &contender.Manifest{Name: "go", Runtime: "go"}, level: scenario.Level{Name: "l"}, repeat: 1}
	if h := readHeap(goServer, run, measurement{start: time.Now(), elapsed: time.Second}); h != nil {
		t.Errorf("a Go server's heap %+v, want none", h)
	}
	jvm := cellPlan{m: &contender.Manifest{Name: "j", Runtime: "java"}, level: scenario.Level{Name: "l"}, repeat: 1}
	if h := readHeap(jvm, run, measurement{inWarmup: true}); h == nil || h.Unread != "no load ran" {
		t.Errorf("a JVM dead in its warm-up: %+v", h)
	}
	if h := readHeap(jvm, run, measurement{start: time.Now(), elapsed: time.Second}); h == nil || !strings.HasPrefix(h.Unread, "no GC log read") {
		t.Errorf("a JVM without its log: %+v", h)
	}
}
