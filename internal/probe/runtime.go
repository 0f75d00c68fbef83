package probe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/arena-lab/arena/internal/results"
)

// procRoot is where processes are read; tests point it at a fake tree.
var procRoot = "/proc"

// TreeOf is pid and its descendants, the root first, parents before their children: the
// tree Start samples.
func TreeOf(pid int) []int32 {
	kids := childrenByParent()
	tree := []int32{int32(pid)}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, kids[tree[i]]...)
	}
	return tree
}

// Census counts the threads of pids by name (/proc/PID/task/TID/comm), and the processes
// by theirs, each name with its digits taken out (NormalName), so that a pool's threads
// ("vert.x-eventloop-thread-0", "-1") count as one group. A process gone before it was read
// is left out; none read at all is an error.
func Census(pids []int32) (threads, procs map[string]int, err error) {
	named, procs, err := threadNames(pids)
	return countNames(named), procs, err
}

// threadNames are the kernel's names of pids' threads, by thread id, and their processes
// counted by name.
func threadNames(pids []int32) (threads map[int32]string, procs map[string]int, err error) {
	threads, procs = map[int32]string{}, map[string]int{}
	for _, pid := range pids {
		dir := filepath.Join(procRoot, strconv.Itoa(int(pid)))
		name, err := os.ReadFile(filepath.Join(dir, "comm"))
		if err != nil {
			continue
		}
		tids, err := os.ReadDir(filepath.Join(dir, "task"))
		if err != nil {
			continue
		}
		procs[NormalName(string(name))]++
		for _, tid := range tids {
			id, err := strconv.ParseInt(tid.Name(), 10, 32)
			if err != nil {
				continue
			}
			if comm, err := os.ReadFile(filepath.Join(dir, "task", tid.Name(), "comm")); err == nil {
				threads[int32(id)] = string(comm)
			}
		}
	}
	if len(procs) == 0 {
		return nil, nil, fmt.Errorf("none of the %d processes could be read from %s", len(pids), procRoot)
	}
	return threads, procs, nil
}

// countNames counts names by NormalName.
func countNames(names map[int32]string) map[string]int {
	if names == nil {
		return nil
	}
	counts := map[string]int{}
	for _, n := range names {
		counts[NormalName(n)]++
	}
	return counts
}

// NormalName is a thread's or process's name without its digits and surrounding space:
// "reactor-http-epoll-3" is "reactor-http-epoll-", "XNIO-1 task-12" is "XNIO- task-".
func NormalName(name string) string {
	return strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsDigit(r) {
			return -1
		}
		return r
	}, name))
}

// JVMOf is the first process of pids running java (its executable named java), or 0.
func JVMOf(pids []int32) int32 {
	for _, pid := range pids {
		exe, err := os.Readlink(filepath.Join(procRoot, strconv.Itoa(int(pid)), "exe"))
		if err == nil && filepath.Base(exe) == "java" {
			return pid
		}
	}
	return 0
}

// jcmdCommands are the diagnostic commands ReadJVM sends in one attach: the flags, VM.info
// for the processor count the JVM started with, Thread.print for its threads' whole names
// (the kernel keeps 15 characters: Tomcat's "http-nio-127.0.0.1-8080-exec-1" and its
// poller are both "http-nio-127.0."), and the virtual-thread scheduler last (JDK 24 and
// newer have it: on an older JDK those before it are still answered).
const jcmdCommands = "VM.flags -all\nVM.info\nThread.print\nThread.vthread_scheduler\n"

// jcmdTimeout bounds an attach: a JVM that does not reach a safepoint in it is not waited for.
const jcmdTimeout = 20 * time.Second

// ReadJVM asks the JVM pid for its settings with the jcmd at jcmd (the lab's JDK's, never
// the machine's default), in one attach: the settings, what its answer lacks (in unread, by
// key) and its platform threads' names by thread id.
func ReadJVM(ctx context.Context, jcmd string, pid int) (jvm *results.JVM, unread map[string]string, names map[int32]string, err error) {
	ctx, cancel := context.WithTimeout(ctx, jcmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, jcmd, strconv.Itoa(pid), "-f", "/dev/stdin")
	cmd.Stdin = strings.NewReader(jcmdCommands)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%s %d: %w: %s", jcmd, pid, err, strings.TrimSpace(lastLine(stderr.String()+string(out))))
	}
	jvm, unread, names = ParseJcmd(out)
	jvm.Pid = pid
	return jvm, unread, names, nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}

var (
	// a VM.flags -all line: "     bool UseSerialGC    = true    {product} {command line}"
	flagLine = regexp.MustCompile(`^\s*\w+\s+(\w+)\s+:?=\s+(\S+)\s+\{`)
	// VM.info's "CPU: total 2 (initial active 1) …"
	cpuLine = regexp.MustCompile(`^CPU: total \d+ \(initial active (\d+)\)`)
	// Thread.vthread_scheduler: "java.util.concurrent.ForkJoinPool@75563b2d[Running, parallelism = 1, size = 1, …]"
	schedulerLine = regexp.MustCompile(`ForkJoinPool@\w+\[.*parallelism = (\d+), size = (\d+)`)
	// a thread of Thread.print: `"main" #3 [18392] prio=5 … nid=18392 …` (nid in hex on older JDKs: nid=0x47d8)
	threadLine = regexp.MustCompile(`^"(.*)" .*\bnid=(0x[0-9a-fA-F]+|\d+)\b`)
	// the collectors' flags, by the name recorded
	collectors = []struct{ flag, name string }{{"UseSerialGC", "Serial"}, {"UseG1GC", "G1"}, {"UseParallelGC", "Parallel"},
		{"UseZGC", "Z"}, {"UseShenandoahGC", "Shenandoah"}, {"UseEpsilonGC", "Epsilon"}}
)

// ParseJcmd reads jcmdCommands' answer: the JVM's settings, what it lacks (in unread, by the
// JVM key it would have filled, with why), and its threads' names by thread id.
func ParseJcmd(out []byte) (*results.JVM, map[string]string, map[int32]string) {
	jvm := &results.JVM{}
	flags := map[string]string{}
	names := map[int32]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := flagLine.FindStringSubmatch(line); m != nil {
			flags[m[1]] = m[2]
		} else if m := cpuLine.FindStringSubmatch(line); m != nil {
			jvm.Processors, _ = strconv.Atoi(m[1])
		} else if m := threadLine.FindStringSubmatch(line); m != nil {
			if nid, err := strconv.ParseInt(m[2], 0, 32); err == nil {
				names[int32(nid)] = m[1]
			}
		} else if m := schedulerLine.FindStringSubmatch(line); m != nil {
			jvm.VirtualThreadParallelism, _ = strconv.Atoi(m[1])
			size, _ := strconv.Atoi(m[2])
			jvm.Carriers = &size
		}
	}
	unread := map[string]string{}
	for _, c := range collectors {
		if flags[c.flag] == "true" {
			jvm.Collector = c.name
		}
	}
	if jvm.Collector == "" {
		unread["collector"] = "no Use…GC flag is true in VM.flags -all"
	}
	heap := func(flag, key string) float64 {
		v, err := strconv.ParseFloat(flags[flag], 64)
		if err != nil {
			unread[key] = flag + " not in VM.flags -all"
			return 0
		}
		return v / (1 << 20)
	}
	jvm.InitialHeapMB = heap("InitialHeapSize", "initial_heap_mb")
	jvm.MaxHeapMB = heap("MaxHeapSize", "max_heap_mb")
	if n, err := strconv.Atoi(flags["ActiveProcessorCount"]); err == nil {
		jvm.ActiveProcessorCountFlag = n
	} else {
		unread["active_processor_count_flag"] = "ActiveProcessorCount not in VM.flags -all"
	}
	if jvm.Processors == 0 {
		unread["processors"] = "no \"CPU: total N (initial active N)\" line in VM.info"
	}
	if jvm.Carriers == nil {
		unread["vthread_parallelism"] = "no scheduler in Thread.vthread_scheduler's answer (JDK 24 and newer have the command)"
	}
	return jvm, unread, names
}

// ErrNoJVM is a Java server's tree without a java process.
var ErrNoJVM = errors.New("no java process in the server's tree")

// ReadRuntime reads what the server whose tree is rooted at root runs with: its threads and
// processes by name and, when jcmd is not "" (a Java contender), its JVM's settings. The
// threads are listed before the JVM is attached to (the attach starts a thread of its own);
// a JVM's threads then take their whole Java names from its thread dump.
func ReadRuntime(ctx context.Context, root int, jcmd string) *results.Runtime {
	rt := &results.Runtime{Unread: map[string]string{}}
	tree := TreeOf(root)
	threads, procs, err := threadNames(tree)
	if err != nil {
		rt.Unread["threads"] = err.Error()
	}
	rt.Processes = procs
	if jcmd != "" {
		if pid := JVMOf(tree); pid == 0 {
			rt.Unread["jvm"] = ErrNoJVM.Error()
		} else if jvm, unread, names, err := ReadJVM(ctx, jcmd, int(pid)); err != nil {
			rt.Unread["jvm"] = err.Error()
		} else {
			rt.JVM = jvm
			maps.Copy(rt.Unread, unread)
			for tid, name := range names {
				if _, ok := threads[tid]; ok {
					threads[tid] = name
				}
			}
		}
	}
	rt.Threads = countNames(threads)
	if len(rt.Unread) == 0 {
		rt.Unread = nil
	}
	return rt
}
