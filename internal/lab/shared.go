package lab

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shirou/gopsutil/v4/cpu"

	"github.com/arena-lab/arena/internal/results"
)

// A pinned contender owns its CPUs only if nothing else runs there. Other processes (a build,
// a browser) or a hypervisor stealing the core take a share of it, and the figures are then a
// shared core's. The lab reads what the server's and the client's CPUs spent during the load
// and subtracts what the lab's own processes used there.
const (
	// sharedServerShare of the server's CPUs spent on other work (or stolen) marks a cell
	// shared_cpu: its figures are no verdict on the server.
	sharedServerShare = 0.10
	// busyClientShare of the client's CPUs spent on other work makes it client-bound: the
	// client may have waited for its core.
	busyClientShare = 0.25
)

// cpuWork is what some CPUs spent, in seconds: busy in user or kernel mode (interrupt time
// left out: the kernel's network work for the lab's own sockets lands there), and stolen by
// a hypervisor.
type cpuWork struct{ busy, steal float64 }

// cpuWorkOn reads cpuWork of cpus from /proc/stat; ok is false where it cannot be read.
func cpuWorkOn(cpus []int) (cpuWork, bool) {
	times, err := cpu.Times(true)
	if err != nil {
		return cpuWork{}, false
	}
	var w cpuWork
	found := 0
	for _, t := range times {
		n, err := strconv.Atoi(strings.TrimPrefix(t.CPU, "cpu"))
		if err != nil || !containsCPU(cpus, n) {
			continue
		}
		found++
		w.busy += t.User + t.Nice + t.System
		w.steal += t.Steal
	}
	return w, found == len(cpus)
}

func containsCPU(cpus []int, n int) bool {
	for _, c := range cpus {
		if c == n {
			return true
		}
	}
	return false
}

// otherWork is the share of cpus' capacity over elapsed that went to work other than own
// CPU seconds, and the share stolen, from the readings before and after.
func otherWork(before, after cpuWork, own float64, cores int, elapsed time.Duration) (other, steal float64) {
	capacity := elapsed.Seconds() * float64(cores)
	if capacity <= 0 {
		return 0, 0
	}
	other = max(after.busy-before.busy-own, 0) / capacity
	steal = max(after.steal-before.steal, 0) / capacity
	return other, steal
}

// cpuShares measures, around a load, what else ran on the server's and the client's CPUs.
// Everything in it is read at one moment: the processes' own CPU seconds beside the CPUs'.
// The probes' samples, a period (250 ms) apart from the load's ends, would leave out up to a
// period of a busy contender, a quarter of a one-second load, and count it as other work.
type cpuShares struct {
	at             time.Time
	server, client cpuWork
	procs          procSeconds
	ok             bool
}

// procSeconds are CPU seconds of processes, from /proc/<pid>/stat.
type procSeconds struct {
	// server is the contender's process group's; client is arena's own process and the
	// groups of the lab's helpers on the client's CPUs (its downstream, its database).
	server, client float64
	// kernel is the server CPUs' own kernel threads' (ksoftirqd/N, kworker/N:…): at high
	// packet rates the kernel defers the lab's own network work to them.
	kernel float64
	// serverPids are the contender's processes: one that ends during the load takes its CPU
	// seconds with it, and they would count as other work.
	serverPids []int
}

// readCPUShares reads the CPUs and the processes; serverGroup (0: none) and helperGroups are
// process groups.
func readCPUShares(serverCPUs, clientCPUs []int, serverGroup int, helperGroups []int) cpuShares {
	at := time.Now()
	s, okS := cpuWorkOn(serverCPUs)
	c, okC := cpuWorkOn(clientCPUs)
	return cpuShares{at: at, server: s, client: c, procs: readProcSeconds(serverCPUs, serverGroup, helperGroups), ok: okS && okC}
}

// readProcSeconds scans /proc once for procSeconds.
func readProcSeconds(serverCPUs []int, serverGroup int, helperGroups []int) procSeconds {
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return procSeconds{}
	}
	self := os.Getpid()
	var server, client, kernel int64
	var serverPids []int
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile("/proc/" + d.Name() + "/stat")
		if err != nil {
			continue // gone since the listing
		}
		open, closing := bytes.IndexByte(raw, '('), bytes.LastIndexByte(raw, ')')
		if open < 0 || closing < open {
			continue
		}
		fields := strings.Fields(string(raw[closing+1:])) // state(0) ppid(1) pgrp(2) … utime(11) stime(12)
		if len(fields) < 13 {
			continue
		}
		pgrp, _ := strconv.Atoi(fields[2])
		u, _ := strconv.ParseInt(fields[11], 10, 64)
		st, _ := strconv.ParseInt(fields[12], 10, 64)
		switch {
		case serverGroup > 0 && pgrp == serverGroup:
			server += u + st
			serverPids = append(serverPids, pid)
		case pid == self || pgrp > 0 && slices.Contains(helperGroups, pgrp):
			client += u + st
		case perCPUThreadOf(string(raw[open+1:closing]), serverCPUs):
			kernel += u + st
		}
	}
	return procSeconds{server: float64(server) / clockTicks, client: float64(client) / clockTicks, kernel: float64(kernel) / clockTicks, serverPids: serverPids}
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux
// architecture arena runs on.
const clockTicks = 100

// perCPUThreadOf says whether comm names a kernel thread bound to one of cpus.
func perCPUThreadOf(comm string, cpus []int) bool {
	for _, prefix := range []string{"ksoftirqd/", "kworker/"} {
		rest, ok := strings.CutPrefix(comm, prefix)
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ":")
		n, err := strconv.Atoi(num)
		return err == nil && containsCPU(cpus, n)
	}
	return false
}

// interference sets the shares at the load's end against its start: the server's own use is
// its process group's and its CPUs' kernel threads', the client's is arena's and the lab's
// helpers' (downstream, database).
func (l *Lab) interference(start, end cpuShares) *results.Interference {
	if !start.ok || !end.ok || lostAny(start.procs.serverPids, end.procs.serverPids) {
		return nil // a contender that crashed or was killed at its memory cap: not measurable
	}
	elapsed := end.at.Sub(start.at)
	var i results.Interference
	serverOwn := max(end.procs.server-start.procs.server, 0) + max(end.procs.kernel-start.procs.kernel, 0)
	other, steal := otherWork(start.server, end.server, serverOwn, len(l.ServerCPUs), elapsed)
	i.ServerOtherPct, i.ServerStealPct = round1(other*100), round1(steal*100)
	other, steal = otherWork(start.client, end.client, max(end.procs.client-start.procs.client, 0), len(l.ClientCPUs), elapsed)
	i.ClientOtherPct = round1((other + steal) * 100)
	return &i
}

// lostAny says whether a pid of before is not in after.
func lostAny(before, after []int) bool {
	for _, p := range before {
		if !slices.Contains(after, p) {
			return true
		}
	}
	return false
}

// sharedWhy says whether the interference makes the server's figures a shared core's, and the
// client's CPUs busy enough to make it client-bound.
func sharedWhy(i *results.Interference, serverCPUs, clientCPUs []int) (server, client string) {
	if i == nil {
		return "", ""
	}
	if taken := i.ServerOtherPct + i.ServerStealPct; taken > sharedServerShare*100 {
		server = fmt.Sprintf("other work took %.0f%% of the server's CPU %s (stolen by the hypervisor: %.0f%%)", taken, FormatCPUs(serverCPUs), i.ServerStealPct)
	}
	if i.ClientOtherPct > busyClientShare*100 {
		client = fmt.Sprintf("other work took %.0f%% of the client's CPU %s", i.ClientOtherPct, FormatCPUs(clientCPUs))
	}
	return server, client
}

func round1(v float64) float64 { return float64(int(v*10+0.5)) / 10 }
