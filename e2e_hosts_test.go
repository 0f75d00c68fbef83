package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/netns"
	"github.com/arena-lab/arena/internal/results"
)

// A sleep level and a chat level across simulated hosts (issue 13): two client namespaces
// with their own sshd, a load agent started on each over SSH and pinned there, the contender
// on this host bound to the bridge. The same levels from two agents inside the process must
// count the same, exactly, with percentiles that agree within the noise; and once the run
// ends no agent is left on any host.
func TestSleepAndChatAcrossHosts(t *testing.T) {
	e2e(t)
	netns.Require(t)
	topo, err := netns.Up("c1", "c2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := topo.Down(); err != nil {
			t.Errorf("tearing the hosts down: %v", err)
		}
	})
	ssh, err := topo.StartSSHD(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	hostsFile := filepath.Join(t.TempDir(), "hosts.toml")
	hosts := fmt.Sprintf("ssh_config = %q\n\n[server]\nname = \"this-host\"\naddress = %q\ncpus = \"1\"\n", ssh.ConfigPath, topo.GatewayIP)
	for _, h := range []string{"c1", "c2"} {
		hosts += fmt.Sprintf("\n[[client]]\nname = %q\nssh = %q\naddress = %q\ncpus = \"0\"\n", h, h, topo.Host(h).IP)
	}
	if err := os.WriteFile(hostsFile, []byte(hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	levels := map[string]string{"sleep": "sleep-c200", "chat": "r2-u5"}
	for _, sc := range []string{"sleep", "chat"} {
		byHosts, inProc := t.TempDir(), t.TempDir()
		common := []string{"run", sc, "--quick", "--levels", levels[sc], "--contenders", "go-nethttp"}
		log, code := arena(t, 10*time.Minute, append(common, "--hosts", hostsFile, "--out", byHosts)...)
		if code != 0 {
			t.Fatalf("arena run %s --hosts exited %d:\n%s", sc, code, log)
		}
		log2, code := arena(t, 10*time.Minute, append(common, "--agents", "2", "--out", inProc)...)
		if code != 0 {
			t.Fatalf("arena run %s --agents 2 exited %d:\n%s", sc, code, log2)
		}
		remote, local := loadRun(t, byHosts, sc), loadRun(t, inProc, sc)
		if topo := remote.Env.Topology; topo == nil || topo.Launcher != "ssh" || len(topo.Agents) != 2 || topo.Server.Addr != "" && topo.Server.Host != topo.Server.Addr {
			t.Errorf("%s: topology %+v, want ssh with two agents", sc, remote.Env.Topology)
		}
		r, l := onlyCell(t, remote), onlyCell(t, local)
		if r.Outcome.Status != results.OutcomeOK || l.Outcome.Status != results.OutcomeOK {
			t.Fatalf("%s: outcomes %s (%s) over SSH, %s (%s) in process\n%s", sc, r.Outcome.Status, r.Outcome.Detail, l.Outcome.Status, l.Outcome.Detail, log)
		}
		if len(r.Agents) != 2 || r.Agents[0].Name != "c1" || r.Agents[1].Name != "c2" {
			t.Fatalf("%s: agents %+v, want c1 and c2", sc, r.Agents)
		}
		rt, lt := r.Tags[0], l.Tags[0]
		var parts int64
		for _, a := range r.Agents {
			parts += a.Tags[0].Completed
			if a.CPUs != "0" {
				t.Errorf("%s: agent %s ran on CPUs %q, want the hosts file's 0", sc, a.Name, a.CPUs)
			}
			if a.Tags[0].Completed == 0 {
				t.Errorf("%s: agent %s completed nothing: the load was not shared", sc, a.Name)
			}
		}
		if parts != rt.Completed {
			t.Errorf("%s: the agents completed %d between them, the merge says %d", sc, parts, rt.Completed)
		}
		if rt.Sent != lt.Sent || rt.Completed != lt.Completed || rt.Completed != rt.Sent || rt.Scheduled != lt.Scheduled {
			t.Errorf("%s: over SSH sent %d, completed %d, scheduled %d; in process %d, %d, %d", sc, rt.Sent, rt.Completed, rt.Scheduled, lt.Sent, lt.Completed, lt.Scheduled)
		}
		if len(r.Faults) > 0 || len(l.Faults) > 0 {
			t.Errorf("%s: faults over SSH %v, in process %v", sc, r.Faults, l.Faults)
		}
		// Percentiles within the noise: a 100-ms sleep answers in 100–150 ms both ways; chat
		// deliveries on loopback and over a veth within 20× of each other and under 200 ms.
		switch sc {
		case "sleep":
			for _, p := range []float64{rt.Response.P50, lt.Response.P50} {
				if p < 100 || p > 150 {
					t.Errorf("sleep p50s %.1f ms over SSH, %.1f in process: want both near the 100-ms sleep", rt.Response.P50, lt.Response.P50)
				}
			}
		case "chat":
			if a, b := rt.Response.P50, lt.Response.P50; a > 200 || b > 200 || a > 20*b+1 || b > 20*a+1 {
				t.Errorf("chat p50s %.2f ms over SSH, %.2f in process: want them alike", a, b)
			}
		}
		if r.Hlog == "" {
			t.Errorf("%s: no merged interval log", sc)
		}
	}
	for _, h := range []string{"c1", "c2"} {
		pids, err := topo.Pids(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, pid := range pids {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if line := strings.ReplaceAll(string(cmdline), "\x00", " "); strings.Contains(line, " agent ") {
				t.Errorf("after the runs, on %s: %s (pid %d) is left", h, line, pid)
			}
		}
	}
}

func onlyCell(t *testing.T, run *results.Run) results.Cell {
	t.Helper()
	if len(run.Cells) != 1 {
		t.Fatalf("%d cells, want 1", len(run.Cells))
	}
	return run.Cells[0]
}
