package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/launch"
	"github.com/arena-lab/arena/internal/netns"
	"github.com/arena-lab/arena/internal/results"
)

// A sleep level and a chat level across simulated hosts (issue 13): two client namespaces
// with their own sshd, a load agent started on each over SSH and pinned there; the contender
// on this host bound to the bridge, then on a host of its own (srv), where a server agent
// started over SSH carries the run out. The same levels from two agents inside the process
// must count the same, exactly, with percentiles that agree within the noise; and once the
// runs end no agent is left on any host.
func TestSleepAndChatAcrossHosts(t *testing.T) {
	e2e(t)
	topo, hostsFile, srvFile := simulatedHosts(t)
	folders := agentFolders(t)
	levels := map[string]string{"sleep": "sleep-c200", "chat": "r2-u5"}
	for _, sc := range []string{"sleep", "chat"} {
		byHosts, inProc, onSrv := t.TempDir(), t.TempDir(), t.TempDir()
		common := []string{"run", sc, "--quick", "--levels", levels[sc], "--contenders", "go-nethttp"}
		log, code := arena(t, 10*time.Minute, append(common, "--hosts", hostsFile, "--out", byHosts)...)
		if code != 0 {
			t.Fatalf("arena run %s --hosts exited %d:\n%s", sc, code, log)
		}
		log3, code := arena(t, 10*time.Minute, append(common, "--hosts", srvFile, "--out", onSrv)...)
		if code != 0 {
			t.Fatalf("arena run %s --hosts (server agent on srv) exited %d:\n%s", sc, code, log3)
		}
		checkOnServerHost(t, sc, loadRun(t, onSrv, sc), topo.Host("srv").IP, log3)
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
	onlySSHDLeft(t, topo, "after the runs")
	noNewAgentFolders(t, folders)
}

// checkOnServerHost: the run carried out by the server agent on srv came back whole: the
// contender bound srv's address, the load came from both client hosts, every count adds up.
func checkOnServerHost(t *testing.T, sc string, run *results.Run, srvIP, log string) {
	t.Helper()
	c := onlyCell(t, run)
	if c.Outcome.Status != results.OutcomeOK {
		t.Fatalf("%s on srv: outcome %s (%s)\n%s", sc, c.Outcome.Status, c.Outcome.Detail, log)
	}
	if c.Env["BIND_ADDRESS"] != srvIP {
		t.Errorf("%s on srv: the contender got BIND_ADDRESS %q, want srv's %s", sc, c.Env["BIND_ADDRESS"], srvIP)
	}
	if len(c.Agents) != 2 || c.Tags[0].Completed == 0 || c.Tags[0].Completed != c.Tags[0].Sent {
		t.Errorf("%s on srv: %d agents, sent %d, completed %d", sc, len(c.Agents), c.Tags[0].Sent, c.Tags[0].Completed)
	}
	if run.Env.Topology == nil || run.Env.Topology.Server.Host != srvIP {
		t.Errorf("%s on srv: topology %+v, want the server at %s", sc, run.Env.Topology, srvIP)
	}
}

func onlyCell(t *testing.T, run *results.Run) results.Cell {
	t.Helper()
	if len(run.Cells) != 1 {
		t.Fatalf("%d cells, want 1", len(run.Cells))
	}
	return run.Cells[0]
}

// simulatedHosts makes three hosts on this machine, srv, c1 and c2, each a network namespace
// with its own sshd, and two hosts files: the contender on this host (the coordinator's) with
// load agents on c1 and c2, and the same with the contender on srv, where a server agent
// started over SSH carries the run out.
func simulatedHosts(t *testing.T) (*netns.Topology, string, string) {
	t.Helper()
	netns.Require(t)
	topo, err := netns.Up("srv", "c1", "c2")
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
	// Two hosts files: the contender on this host (the coordinator's), and on a host of its
	// own, srv, where a server agent started over SSH carries the run out.
	clients := ""
	for _, h := range []string{"c1", "c2"} {
		clients += fmt.Sprintf("\n[[client]]\nname = %q\nssh = %q\naddress = %q\ncpus = \"0\"\n", h, h, topo.Host(h).IP)
	}
	hostsFile := filepath.Join(t.TempDir(), "hosts.toml")
	here := fmt.Sprintf("ssh_config = %q\n\n[server]\nname = \"this-host\"\naddress = %q\ncpus = \"1\"\n", ssh.ConfigPath, topo.GatewayIP)
	if err := os.WriteFile(hostsFile, []byte(here+clients), 0o644); err != nil {
		t.Fatal(err)
	}
	srvFile := filepath.Join(t.TempDir(), "hosts-srv.toml")
	srv := fmt.Sprintf("ssh_config = %q\n\n[server]\nname = \"srv\"\nssh = \"srv\"\naddress = %q\ncpus = \"1\"\nroot = %q\nlab_cpus = \"0\"\n",
		ssh.ConfigPath, topo.Host("srv").IP, mustAbs(t, "."))
	if err := os.WriteFile(srvFile, []byte(srv+clients), 0o644); err != nil {
		t.Fatal(err)
	}
	return topo, hostsFile, srvFile
}

// Ctrl-C during a run carried out by a server agent on another host: the remote run stops
// as one on this machine would (the cell under way interrupted, the finished one kept), its
// folder still comes back, and nothing of arena is left on any host.
func TestCtrlCOnAServerHostKeepsItsCells(t *testing.T) {
	e2e(t)
	topo, _, srvFile := simulatedHosts(t)
	folders := agentFolders(t)
	out := t.TempDir()
	cmd := exec.Command(arenaBin, "run", "sleep", "--quick", "--levels", "sleep-c200,sleep-c400", "--contenders", "go-nethttp",
		"--hosts", srvFile, "--out", out)
	err := interruptAt(t, cmd, "[2/2]", 3*time.Second) // into the second cell
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit %v; want 130 after Ctrl-C", err)
	}
	run := loadRun(t, out, "sleep")
	if run.Status != results.RunInterrupted || len(run.Cells) != 2 {
		t.Fatalf("status %s, %d cells; want interrupted with both cells recorded", run.Status, len(run.Cells))
	}
	if run.Cells[0].Outcome.Status != results.OutcomeOK || run.Cells[1].Outcome.Status != results.OutcomeInterrupted {
		t.Fatalf("outcomes %s, %s; want ok then interrupted", run.Cells[0].Outcome.Status, run.Cells[1].Outcome.Status)
	}
	onlySSHDLeft(t, topo, "after Ctrl-C")
	noNewAgentFolders(t, folders)
}

// onlySSHDLeft: on every simulated host, nothing of arena is left (no agent, no contender,
// no downstream): the host's sshd alone.
func onlySSHDLeft(t *testing.T, topo *netns.Topology, when string) {
	t.Helper()
	for _, h := range topo.Hosts {
		pids, err := topo.Pids(h.Name)
		if err != nil {
			t.Fatal(err)
		}
		for _, pid := range pids {
			cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			if line := strings.ReplaceAll(string(cmdline), "\x00", " "); line != "" && !strings.Contains(line, "sshd") {
				t.Errorf("%s, on %s: %s (pid %d) is left", when, h.Name, line, pid)
			}
		}
	}
}

// The same open-loop level from one agent and from three (issue 13's merge check, on a real
// contender), the three in this process and as agent processes with the run's secret (issue
// 22's local placement): the same hits scheduled and sent per stream, each agent a third of
// them, and percentiles that agree within the noise; no agent process is left.
func TestOpenLoopFromOneAgentAndFromThreeAgree(t *testing.T) {
	e2e(t)
	one := t.TempDir()
	common := []string{"run", "isolation", "--quick", "--duration", "5s", "--contenders", "go-nethttp"}
	if log, code := arena(t, 5*time.Minute, append(common, "--out", one)...); code != 0 {
		t.Fatalf("one agent: exit %d\n%s", code, log)
	}
	a := onlyCell(t, loadRun(t, one, "isolation"))
	for _, c := range []struct{ flag, launcher string }{{"--agents", "in-process"}, {"--agent-processes", "processes"}} {
		three := t.TempDir()
		if log, code := arena(t, 5*time.Minute, append(common, c.flag, "3", "--out", three)...); code != 0 {
			t.Fatalf("%s 3: exit %d\n%s", c.flag, code, log)
		}
		run := loadRun(t, three, "isolation")
		if topo := run.Env.Topology; topo == nil || topo.Launcher != c.launcher || len(topo.Agents) != 3 {
			t.Fatalf("%s 3: topology %+v, want 3 agents from %s", c.flag, run.Env.Topology, c.launcher)
		}
		sameLoadFromThree(t, c.flag, a, onlyCell(t, run))
		noAgentProcessLeft(t)
	}
}

// sameLoadFromThree compares a cell driven by this process with b, driven by three agents.
func sameLoadFromThree(t *testing.T, how string, a, b results.Cell) {
	t.Helper()
	if len(b.Agents) != 3 {
		t.Fatalf("%s: %d agents recorded, want 3", how, len(b.Agents))
	}
	for i, ta := range a.Tags {
		tb := b.Tags[i]
		if ta.Tag != tb.Tag || ta.Scheduled != tb.Scheduled || ta.Sent != tb.Sent || tb.Sent != tb.Scheduled {
			t.Errorf("%s %s: one agent scheduled %d, sent %d; three %s %d, %d", how, ta.Tag, ta.Scheduled, ta.Sent, tb.Tag, tb.Scheduled, tb.Sent)
		}
		var parts int64
		for _, ag := range b.Agents {
			for _, at := range ag.Tags {
				if at.Tag == tb.Tag {
					parts += at.Sent
					if at.Sent*3 < tb.Sent-3 || at.Sent*3 > tb.Sent+3 {
						t.Errorf("%s %s: agent %s sent %d of %d, want a third", how, tb.Tag, ag.Name, at.Sent, tb.Sent)
					}
				}
			}
		}
		if parts != tb.Sent {
			t.Errorf("%s %s: the agents sent %d between them, the merge says %d", how, tb.Tag, parts, tb.Sent)
		}
		// /delayed waits 10 s (past the 5-s schedule it times out alike); the others answer in
		// milliseconds: within 5× of each other, or both under 50 ms. Three agent processes
		// share the 2 cores with the server, so a fast path's p50 moves a few ms with the
		// scheduler (1.4 against 7.0 ms in CI); a merge or clock error is seconds, or 1000×.
		if pa, pb := ta.Response.P50, tb.Response.P50; (pa > 50 || pb > 50) && (pa > 5*pb || pb > 5*pa) {
			t.Errorf("%s %s: p50 %.2f ms from one agent, %.2f from three", how, ta.Tag, pa, pb)
		}
	}
}

// noAgentProcessLeft: no process runs the test's arena binary as an agent.
func noAgentProcessLeft(t *testing.T) {
	t.Helper()
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range cmdlines {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		args := strings.Split(string(raw), "\x00")
		for i, arg := range args {
			if arg == arenaBin && i+1 < len(args) && args[i+1] == "agent" {
				t.Errorf("an agent process is left: %s", strings.Join(args, " "))
			}
		}
	}
}

// agentFolders are the folders agents started over SSH work in (the simulated hosts share
// this machine's files): the binary, and a server agent's runs.
func agentFolders(t *testing.T) map[string]bool {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(os.TempDir(), "arena-agent-*"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, p := range paths {
		out[p] = true
	}
	return out
}

// noNewAgentFolders: every folder the runs made on the hosts is gone.
func noNewAgentFolders(t *testing.T, before map[string]bool) {
	t.Helper()
	for p := range agentFolders(t) {
		if !before[p] {
			t.Errorf("%s is left on a host", p)
		}
	}
}

// Agents on simulated hosts, started over SSH as a run starts them, answer only their
// coordinator (issue 22): a call without the run's secret, or with another, gets 401, hello
// included; a job aimed at another host, a CRLF in a path or 100,000 connections is refused
// with a 400 before anything is sent; a load agent refuses runs; a server agent busy with its
// coordinator's load gives another coordinator a bare 401 and its own a 409.
func TestAgentsAnswerOnlyTheirCoordinator(t *testing.T) {
	e2e(t)
	netns.Require(t)
	topo, err := netns.Up("srv", "c1")
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
	folders := agentFolders(t)
	// The contender's stand-in: a server on the coordinator's host, the one address the
	// agents are started with.
	ln, err := net.Listen("tcp", net.JoinHostPort(topo.GatewayIP, "0"))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { time.Sleep(5 * time.Millisecond) }))
	}()
	t.Cleanup(func() { ln.Close() })
	secret, err := agent.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	pin, err := agent.ClientTLS(secret)
	if err != nil {
		t.Fatal(err)
	}
	agentClient = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{Proxy: nil, TLSClientConfig: pin}}
	l := &launch.SSHLauncher{SSH: []string{"-F", ssh.ConfigPath}, Binary: arenaBin, Secret: secret, ServerAddress: topo.GatewayIP}
	server := launch.ServerHost{Name: "srv", SSH: "srv", Address: topo.Host("srv").IP, CPUs: "1", LabCPUs: "0", Port: launch.DefaultPort, Root: mustAbs(t, ".")}.Agent()
	remotes, err := l.Start(context.Background(), []launch.ClientHost{{Name: "c1", SSH: "c1", Address: topo.Host("c1").IP, CPUs: "0", Port: launch.DefaultPort}, server})
	if err != nil {
		t.Fatal(err)
	}
	loadAgent, serverAgent := "https://"+remotes[0].Addr, "https://"+remotes[1].Addr
	other := strings.Repeat("0", len(secret))
	for _, url := range []string{loadAgent, serverAgent} {
		for _, s := range []string{"", other} {
			if code, body := agentCall(t, url, "GET", "/v1/hello", s, nil); code != http.StatusUnauthorized || strings.Contains(body, "srv") || strings.Contains(body, "c1") {
				t.Errorf("%s hello with secret %q: %d %s, want a bare 401", url, s, code, body)
			}
		}
		if code, _ := agentCall(t, url, "GET", "/v1/hello", secret, nil); code != http.StatusOK {
			t.Errorf("%s hello with the secret: %d", url, code)
		}
		// The transport is TLS with the run's key: a coordinator of another run refuses the
		// agent before it sends anything, and nothing answers in clear.
		if _, err := agent.Dial(context.Background(), strings.TrimPrefix(url, "https://"), other); !errors.Is(err, agent.ErrNotPinned) {
			t.Errorf("%s from a coordinator pinning another key: %v, want %v", url, err, agent.ErrNotPinned)
		}
		if resp, err := (&http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}).Get("http" + strings.TrimPrefix(url, "https") + "/v1/hello"); err == nil {
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				t.Errorf("%s answered in clear: %s %s", url, resp.Status, raw)
			}
		}
	}
	target := ln.Addr().String()
	job := func(mend func(j *agent.Job)) agent.Job {
		j := agent.Job{Target: target, Parts: 1, Warmup: -1, Interval: time.Second, Start: time.Now(), Slack: time.Second,
			Closed: &agent.ClosedJob{Tag: "x", Path: "/", Connections: 2, Duration: 4 * time.Second, Timeout: time.Second}}
		mend(&j)
		return j
	}
	for name, mend := range map[string]func(j *agent.Job){
		"another target":      func(j *agent.Job) { j.Target = net.JoinHostPort(topo.Host("srv").IP, "22") },
		"CRLF in the path":    func(j *agent.Job) { j.Closed.Path = "/ HTTP/1.1\r\nHost: x\r\n\r\nGET /evil" },
		"100,000 connections": func(j *agent.Job) { j.Closed.Connections = 100_000 },
	} {
		if code, body := agentCall(t, loadAgent, "POST", "/v1/load", secret, job(mend)); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s, want 400", name, code, body)
		}
	}
	if code, body := agentCall(t, loadAgent, "POST", "/v1/run", secret, agent.RunRequest{Spec: results.RunSpec{ID: "x", Scenario: "sleep"}}); code != http.StatusNotFound {
		t.Errorf("a run on the load agent: %d %s, want 404", code, body)
	}
	busy := make(chan int, 1)
	go func() {
		code, _ := agentCall(t, serverAgent, "POST", "/v1/load", secret, job(func(*agent.Job) {}))
		busy <- code
	}()
	time.Sleep(time.Second) // the server agent is under its 4-s load
	if code, body := agentCall(t, serverAgent, "POST", "/v1/run", other, agent.RunRequest{Spec: results.RunSpec{ID: "taken", Scenario: "sleep"}}); code != http.StatusUnauthorized || strings.Contains(body, "busy") {
		t.Errorf("another coordinator's run on a busy server agent: %d %s, want a bare 401", code, body)
	}
	if code, body := agentCall(t, serverAgent, "POST", "/v1/run", secret, agent.RunRequest{Spec: results.RunSpec{ID: "second", Scenario: "sleep"}}); code != http.StatusConflict {
		t.Errorf("its own coordinator's run while busy: %d %s, want 409", code, body)
	}
	if code := <-busy; code != http.StatusOK {
		t.Errorf("the coordinator's own load on the server agent: %d", code)
	}
	for _, r := range remotes {
		if err := r.Stop(); err != nil {
			t.Error(err)
		}
	}
	onlySSHDLeft(t, topo, "after the refusals")
	noNewAgentFolders(t, folders)
}

// agentClient reaches the test's agents as their coordinator does, its TLS pinned to the
// run's key; it has no proxy. TestAgentsAnswerOnlyTheirCoordinator sets it.
var agentClient *http.Client

// agentCall sends method path to an agent with secret ("" for none) in its header and body
// as JSON, over agentClient, and returns the status and the answer.
func agentCall(t *testing.T, url, method, path, secret string, body any) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	resp, err := agentClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}
