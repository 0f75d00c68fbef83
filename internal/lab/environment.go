package lab

import (
	"bufio"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/shirou/gopsutil/v4/cpu"
	"github.com/shirou/gopsutil/v4/host"
	"github.com/shirou/gopsutil/v4/mem"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
)

// Environment records the machine and the settings every contender of the run shares.
func Environment(root string, settings contender.Settings, serverCPUs, clientCPUs []int) results.Environment {
	env := results.Environment{
		GoVersion:  runtime.Version(),
		Cores:      runtime.NumCPU(),
		ServerCPUs: FormatCPUs(serverCPUs),
		ClientCPUs: FormatCPUs(clientCPUs),
		HeapMB:     settings.HeapMB,
	}
	env.Host, _ = os.Hostname()
	if info, err := host.Info(); err == nil {
		env.OS = strings.TrimSpace(info.Platform + " " + info.PlatformVersion)
		env.Kernel = info.KernelVersion
	}
	if infos, err := cpu.Info(); err == nil && len(infos) > 0 {
		env.CPUModel = infos[0].ModelName
	}
	if vm, err := mem.VirtualMemory(); err == nil {
		env.MemoryGB = float64(vm.Total) / (1 << 30)
	}
	if settings.JDK.Home != "" {
		env.JavaHome = settings.JDK.Home
		env.JavaVersion = javaVersion(settings.JDK)
		env.JavaOpts = settings.JavaOpts()
		// Each start adds its own GC log (StartContender): recorded with a placeholder path.
		if gc, err := contender.GCLogFlag("logs/<cell>.gc.log"); err == nil {
			env.JavaOpts += " " + gc
		}
	}
	env.NodeVersion = contender.RuntimeVersion(root, "node") // the lab's Node, which the node contenders run on
	if out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output(); err == nil {
		env.ArenaRev = strings.TrimSpace(string(out))
	}
	for _, c := range serverCPUs {
		for _, k := range clientCPUs {
			if c == k {
				env.Notes = append(env.Notes, "The client and the contenders share CPU "+FormatCPUs([]int{c})+": the client's work shows in the server's figures.")
			}
		}
	}
	if gov := governor(); gov != "" {
		env.Notes = append(env.Notes, "CPU frequency governor: "+gov+".")
	}
	return env
}

// javaVersion is `java -version`'s runtime line, e.g. "OpenJDK Runtime Environment Temurin-25.0.1+8".
func javaVersion(j contender.JDK) string {
	out, err := exec.Command(j.Home+"/bin/java", "-version").CombinedOutput()
	if err != nil {
		return j.Version
	}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimSpace(sc.Text()))
	}
	if len(lines) >= 2 {
		return lines[1]
	}
	return j.Version
}

func governor() string {
	raw, err := os.ReadFile("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(raw))
}
