package probe

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
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
	threads, procs = map[string]int{}, map[string]int{}
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
			if comm, err := os.ReadFile(filepath.Join(dir, "task", tid.Name(), "comm")); err == nil {
				threads[NormalName(string(comm))]++
			}
		}
	}
	if len(procs) == 0 {
		return nil, nil, fmt.Errorf("none of the %d processes could be read from %s", len(pids), procRoot)
	}
	return threads, procs, nil
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
// for the processor count the JVM started with, and the virtual-thread scheduler last (JDK
// 24 and newer have it: on an older JDK the two before it are still answered).
const jcmdCommands = "VM.flags -all\nVM.info\nThread.vthread_scheduler\n"

// jcmdTimeout bounds an attach: a JVM that does not reach a safepoint in it is not waited for.
const jcmdTimeout = 20 * time.Second

// ReadJVM asks the JVM pid for its settings with the jcmd at jcmd (the lab's JDK's, never
// the machine's default), in one attach. What its answer lacks is in unread, by key.
func ReadJVM(ctx context.Context, jcmd string, pid int) (jvm *results.JVM, unread map[string]string, err error) {
	ctx, cancel := context.WithTimeout(ctx, jcmdTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, jcmd, strconv.Itoa(pid), "-f", "/dev/stdin")
	cmd.Stdin = strings.NewReader(jcmdCommands)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("%s %d: %w: %s", jcmd, pid, err, strings.TrimSpace(lastLine(stderr.String()+string(out))))
	}
	jvm, unread = ParseJcmd(out)
	jvm.Pid = pid
	return jvm, unread, nil
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
	// the collectors' flags, by the name recorded
	collectors = []struct{ flag, name string }{{"UseSerialGC", "Serial"}, {"UseG1GC", "G1"}, {"UseParallelGC", "Parallel"},
		{"UseZGC", "Z"}, {"UseShenandoahGC", "Shenandoah"}, {"UseEpsilonGC", "Epsilon"}}
)

// ParseJcmd reads jcmdCommands' answer: what it lacks is in unread, by the JVM key it would
// have filled, with why.
func ParseJcmd(out []byte) (*results.JVM, map[string]string) {
	jvm := &results.JVM{}
	flags := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := flagLine.FindStringSubmatch(line); m != nil {
			flags[m[1]] = m[2]
		} else if m := cpuLine.FindStringSubmatch(line); m != nil {
			jvm.Processors, _ = strconv.Atoi(m[1])
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
	return jvm, unread
}

// ErrNoJVM is a Java server's tree without a java process.
var ErrNoJVM = errors.New("no java process in the server's tree")

// ReadRuntime reads what the server whose tree is rooted at root runs with: its threads and
// processes by name, and, when jcmd is not "" (a Java contender), its JVM's settings.
func ReadRuntime(ctx context.Context, root int, jcmd string) *results.Runtime {
	rt := &results.Runtime{Unread: map[string]string{}}
	tree := TreeOf(root)
	var err error
	if rt.Threads, rt.Processes, err = Census(tree); err != nil {
		rt.Unread["threads"] = err.Error()
	}
	if jcmd != "" {
		if pid := JVMOf(tree); pid == 0 {
			rt.Unread["jvm"] = ErrNoJVM.Error()
		} else if jvm, unread, err := ReadJVM(ctx, jcmd, int(pid)); err != nil {
			rt.Unread["jvm"] = err.Error()
		} else {
			rt.JVM = jvm
			for k, why := range unread {
				rt.Unread[k] = why
			}
		}
	}
	if len(rt.Unread) == 0 {
		rt.Unread = nil
	}
	return rt
}
