package probe

import (
	"bufio"
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/contender"
)

// A real answer of Temurin 25 (VM.info cut to its CPU line, Thread.print whole), from a JVM started with
// -Xms64m -Xmx64m -XX:+UseSerialGC under taskset -c 1, reads back as it was started.
func TestParseJcmdOfARealAnswer(t *testing.T) {
	out, err := os.ReadFile("testdata/jcmd-temurin25-serial.txt")
	if err != nil {
		t.Fatal(err)
	}
	jvm, unread, names := ParseJcmd(out)
	if len(unread) != 0 {
		t.Errorf("unread: %v", unread)
	}
	if jvm.Collector != "Serial" || jvm.InitialHeapMB != 64 || jvm.MaxHeapMB != 64 || jvm.ActiveProcessorCountFlag != -1 ||
		jvm.Processors != 1 || jvm.VirtualThreadParallelism != 1 || jvm.Carriers == nil || *jvm.Carriers != 1 {
		t.Errorf("read %+v (carriers %v); want Serial, 64/64 MiB, flag -1, 1 processor, parallelism 1, 1 carrier", jvm, jvm.Carriers)
	}
	// Its platform threads by their native ids, the GC's and the VM's own included.
	if len(names) != 15 || names[18392] != "main" || names[18454] != "ForkJoinPool-1-worker-1" || names[18398] != "VM Thread" {
		t.Errorf("%d thread names: %v", len(names), names)
	}
	if _, _, old := ParseJcmd([]byte(`"main" #1 prio=5 os_prio=0 cpu=10.2ms elapsed=1.1s tid=0x00007f nid=0x47d8 waiting on condition`)); old[0x47d8] != "main" {
		t.Errorf("a JDK 21 thread line (nid in hex): %v", old)
	}
	// An older JDK's answer has no scheduler, and a cut one no VM.info: each figure missing
	// says why, none is a zero taken for a reading.
	flagsOnly := out[:strings.Index(string(out), "------")]
	jvm, unread, _ = ParseJcmd(flagsOnly)
	if jvm.Collector != "Serial" || unread["processors"] == "" || unread["vthread_parallelism"] == "" || jvm.Carriers != nil {
		t.Errorf("flags only: %+v, unread %v", jvm, unread)
	}
	if _, unread, _ = ParseJcmd([]byte("16057:\njava.lang.IllegalArgumentException: Unknown diagnostic command\n")); len(unread) != 6 {
		t.Errorf("an answer of nothing: unread %v; want all six figures", unread)
	}
}

// A fake /proc: a JVM with two event loops and a worker, and a two-worker cluster beside it.
func TestCensusCountsThreadsAndProcessesByName(t *testing.T) {
	root := t.TempDir()
	write := func(path, body string) {
		t.Helper()
		p := filepath.Join(root, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("10/comm", "java")
	for tid, name := range map[string]string{"10": "java", "11": "vert.x-eventloo", "12": "vert.x-eventloo", "13": "vert.x-worker-t", "14": "ForkJoinPool-1-"} {
		write("10/task/"+tid+"/comm", name)
	}
	for _, pid := range []string{"20", "21"} {
		write(pid+"/comm", "node")
		write(pid+"/task/"+pid+"/comm", "node")
	}
	old := procRoot
	procRoot = root
	t.Cleanup(func() { procRoot = old })
	threads, procs, err := Census([]int32{10, 20, 21, 99}) // 99: gone before it was read
	if err != nil {
		t.Fatal(err)
	}
	wantThreads := map[string]int{"java": 1, "vert.x-eventloo": 2, "vert.x-worker-t": 1, "ForkJoinPool--": 1, "node": 2}
	if !maps.Equal(threads, wantThreads) || !maps.Equal(procs, map[string]int{"java": 1, "node": 2}) {
		t.Errorf("threads %v, processes %v; want %v and java 1, node 2", threads, procs, wantThreads)
	}
	if _, _, err := Census([]int32{99}); err == nil {
		t.Error("a census of no process read succeeded")
	}
}

// The test's own process, read from the real /proc: its threads are Go's, named after it.
func TestCensusOfThisProcess(t *testing.T) {
	threads, procs, err := Census(TreeOf(os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	self, _ := os.ReadFile("/proc/self/comm")
	name := NormalName(string(self))
	if procs[name] != 1 || threads[name] < 2 {
		t.Errorf("threads %v, processes %v; want %q with its threads", threads, procs, name)
	}
}

func TestNormalName(t *testing.T) {
	for in, want := range map[string]string{"reactor-http-epoll-3": "reactor-http-epoll-", "XNIO-1 task-12": "XNIO- task-",
		"qtp1932274274-41": "qtp-", "tokio-runtime-w": "tokio-runtime-w", "java\n": "java"} {
		if got := NormalName(in); got != want {
			t.Errorf("NormalName(%q) = %q, want %q", in, got, want)
		}
	}
}

// A real JVM, started by the JDK the lab finds with the collector the lab names, reads back
// as Serial with its heap, its carrier among its threads; a process without java in its
// tree has no JVM to read, and says so.
func TestReadRuntimeOfARealJVM(t *testing.T) {
	jdk, err := contender.FindJDK()
	if err != nil {
		t.Skipf("no JDK %d or newer to start: %v", contender.MinJava, err)
	}
	src := filepath.Join(t.TempDir(), "Wait.java")
	body := `public class Wait { public static void main(String[] a) throws Exception {
		Thread.ofVirtual().start(() -> {}).join(); System.out.println("ready"); Thread.sleep(60_000); } }`
	if err := os.WriteFile(src, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(jdk.Home, "bin", "java"), "-Xms32m", "-Xmx32m", contender.JavaCollector, src)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	ready := make(chan bool, 1)
	go func() { line, _ := bufio.NewReader(stdout).ReadString('\n'); ready <- line == "ready\n" }()
	select {
	case ok := <-ready:
		if !ok {
			t.Fatal("the JVM did not say ready")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the JVM was not ready in 60 s")
	}
	rt := ReadRuntime(context.Background(), cmd.Process.Pid, filepath.Join(jdk.Home, "bin", "jcmd"))
	if rt.JVM == nil {
		t.Fatalf("no JVM read: %v", rt.Unread)
	}
	if j := rt.JVM; j.Collector != "Serial" || j.MaxHeapMB != 32 || j.InitialHeapMB != 32 || j.Processors < 1 || j.Pid != cmd.Process.Pid {
		t.Errorf("read %+v; want Serial, 32/32 MiB, ≥ 1 processor, pid %d", j, cmd.Process.Pid)
	}
	if jdk.Major >= 24 && (rt.JVM.VirtualThreadParallelism < 1 || rt.JVM.Carriers == nil) {
		t.Errorf("JDK %d: no scheduler read: %v", jdk.Major, rt.Unread)
	}
	if rt.Processes["java"] != 1 || rt.Threads["ForkJoinPool--worker-"] < 1 || rt.Threads["Attach Listener"] != 0 {
		t.Errorf("processes %v, threads %v; want one java with a carrier by its Java name, and not the attach's own thread", rt.Processes, rt.Threads)
	}
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Process.Kill(); _ = other.Wait() })
	if rt := ReadRuntime(context.Background(), other.Process.Pid, filepath.Join(jdk.Home, "bin", "jcmd")); rt.JVM != nil || rt.Unread["jvm"] != ErrNoJVM.Error() {
		t.Errorf("sleep read as a JVM: %+v %v", rt.JVM, rt.Unread)
	}
}
