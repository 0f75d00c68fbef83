package lab

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// fakeTree is a cgroup mount in a temp folder, with /proc/self/cgroup saying self, and files
// as the kernel would show them. Its folders go with their files, as cgroups do.
func fakeTree(t *testing.T, self string, files map[string]string) *cgroups {
	t.Helper()
	root := t.TempDir()
	mount := filepath.Join(root, "sys", "fs", "cgroup")
	for name, body := range files {
		path := filepath.Join(mount, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	selfFile := filepath.Join(root, "self-cgroup")
	if err := os.WriteFile(selfFile, []byte(self), 0o644); err != nil {
		t.Fatal(err)
	}
	return &cgroups{self: selfFile, mount: mount, pid: 4242, rmdir: os.RemoveAll}
}

func read(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(raw))
}

// On cgroup v2, arena alone in a delegated group moves itself into a leaf of its own, hands
// the memory controller down, and caps each contender with memory.max; the group's peak and
// OOM kills are read back, and everything is undone after.
func TestMemoryCapOnCgroupV2(t *testing.T) {
	const scope = "user.slice/user-1000.slice/user@1000.service/app.slice/arena.scope"
	cs := fakeTree(t, "0::/"+scope+"\n", map[string]string{
		scope + "/cgroup.controllers":     "cpu io memory pids\n",
		scope + "/cgroup.subtree_control": "\n",
		scope + "/cgroup.procs":           "4242\n",
	})
	dir := filepath.Join(cs.mount, scope)
	cg, err := cs.newMemCgroup("undertow", 1024)
	if err != nil {
		t.Fatal(err)
	}
	leaf := filepath.Join(dir, "arena-4242-self")
	if read(t, filepath.Join(leaf, "cgroup.procs")) != "4242" || read(t, filepath.Join(dir, "cgroup.subtree_control")) != "+memory" {
		t.Fatalf("arena did not move into its leaf and hand memory down")
	}
	group := filepath.Join(dir, "arena-4242-undertow")
	if cg.dir != group || read(t, filepath.Join(group, "memory.max")) != strconv.Itoa(1024<<20) || read(t, filepath.Join(group, "memory.swap.max")) != "0" {
		t.Fatalf("group %s: memory.max or memory.swap.max not set", cg.dir)
	}
	if err := cg.add(777); err != nil || read(t, filepath.Join(group, "cgroup.procs")) != "777" {
		t.Fatalf("add: %v", err)
	}
	// the kernel's figures, as the contender left them
	if err := os.WriteFile(filepath.Join(group, "memory.peak"), []byte("1073741824\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(group, "memory.events"), []byte("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m := cg.record(); *m != (results.Memory{CapMB: 1024, By: results.MemoryByCgroup, MaxUsedMB: 1024, OOMKills: 1}) {
		t.Fatalf("record %+v", m)
	}
	// a second contender needs no second move
	if _, err := cs.newMemCgroup("netty", 1024); err != nil {
		t.Fatal(err)
	}
	cg.remove()
	os.RemoveAll(filepath.Join(dir, "arena-4242-netty"))
	cs.restore()
	if exists(group) || exists(leaf) || read(t, filepath.Join(dir, "cgroup.procs")) != "4242" || read(t, filepath.Join(dir, "cgroup.subtree_control")) != "-memory" {
		t.Fatalf("not undone: group %v, leaf %v", exists(group), exists(leaf))
	}
}

// Where cgroup v2 gives arena no memory controller, or arena shares its group, no cap is
// set, and the reason says how to give arena one.
func TestMemoryCapOnCgroupV2Refused(t *testing.T) {
	for name, files := range map[string]map[string]string{
		"no memory controller delegated": {"s/cgroup.controllers": "cpu pids\n", "s/cgroup.subtree_control": "", "s/cgroup.procs": "4242\n"},
		"a shared group":                 {"s/cgroup.controllers": "memory\n", "s/cgroup.subtree_control": "", "s/cgroup.procs": "4242\n1\n"},
	} {
		t.Run(name, func(t *testing.T) {
			cs := fakeTree(t, "0::/s\n", files)
			if _, err := cs.newMemCgroup("x", 1024); err == nil || !strings.Contains(err.Error(), "systemd-run --user --scope -p Delegate=yes") {
				t.Fatalf("err %v; want a refusal naming systemd-run", err)
			}
			if exists(filepath.Join(cs.mount, "s", "arena-4242-x")) || exists(filepath.Join(cs.mount, "s", "arena-4242-self")) {
				t.Fatal("a refused cap left a group")
			}
		})
	}
}

// On cgroup v1, the group lives in the memory hierarchy under arena's own, with its limit
// (and its memory+swap limit) set, and its figures read from the v1 files.
func TestMemoryCapOnCgroupV1(t *testing.T) {
	cs := fakeTree(t, "5:cpu:/\n4:memory:/process_api/abc\n0::/\n", map[string]string{
		"memory/process_api/abc/memory.limit_in_bytes": "9223372036854771712\n",
	})
	cg, err := cs.newMemCgroup("netty", 576)
	if err != nil {
		t.Fatal(err)
	}
	group := filepath.Join(cs.mount, "memory", "process_api", "abc", "arena-4242-netty")
	want := strconv.Itoa(576 << 20)
	if cg.dir != group || read(t, filepath.Join(group, "memory.limit_in_bytes")) != want || read(t, filepath.Join(group, "memory.memsw.limit_in_bytes")) != want {
		t.Fatalf("group %s not capped at %s", cg.dir, want)
	}
	if err := os.WriteFile(filepath.Join(group, "memory.max_usage_in_bytes"), []byte("314572800\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(group, "memory.oom_control"), []byte("oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m := cg.record(); *m != (results.Memory{CapMB: 576, By: results.MemoryByCgroup, MaxUsedMB: 300, OOMKills: 2}) {
		t.Fatalf("record %+v", m)
	}
	if _, err := fakeTree(t, "1:cpu:/\n", nil).newMemCgroup("x", 1); err == nil {
		t.Fatal("a cap made with no memory cgroup at all")
	}
}

// Where no cgroup can be made, the cap is the heap's, and the record says why.
func TestNoCgroupIsSaid(t *testing.T) {
	saved := hostCgroups
	defer func() { hostCgroups = saved }()
	hostCgroups = fakeTree(t, "1:cpu:/\n", nil)
	m := capMemory("x", 1, 512).record()
	if m.By != results.MemoryByHeap || m.CapMB != 512 || !strings.Contains(m.Why, "no memory cgroup") {
		t.Fatalf("record %+v", m)
	}
	run := &results.Run{}
	noteUncapped(run, results.Cell{Memory: m})
	noteUncapped(run, results.Cell{Memory: m})
	if len(run.Env.Notes) != 1 || !strings.Contains(run.Env.Notes[0], m.Why) {
		t.Fatalf("notes %v; want one saying why", run.Env.Notes)
	}
}

// Groups left by arenas no longer running are swept at start; this arena's and a running
// one's are kept.
func TestStaleCgroupsAreSwept(t *testing.T) {
	dead := deadPid(t)
	for _, v := range []struct{ name, self, parent string }{
		{"v1", "4:memory:/a\n", "memory/a"},
		{"v2, from arena's leaf", "0::/s/arena-4242-self\n", "s"},
	} {
		t.Run(v.name, func(t *testing.T) {
			cs := fakeTree(t, v.self, map[string]string{v.parent + "/memory.limit_in_bytes": "1"})
			parent := filepath.Join(cs.mount, v.parent)
			names := []string{"arena-" + strconv.Itoa(dead) + "-undertow", "arena-" + strconv.Itoa(dead) + "-self", "arena-4242-netty", "arena-1-vertx", "other"}
			for _, n := range names {
				if err := os.MkdirAll(filepath.Join(parent, n), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			notes := cs.sweep()
			for _, n := range names {
				stale := strings.Contains(n, strconv.Itoa(dead))
				if exists(filepath.Join(parent, n)) == stale {
					t.Errorf("%s: exists %v after the sweep, stale %v", n, !stale, stale)
				}
			}
			if len(notes) != 2 {
				t.Errorf("notes %v; want the two removed", notes)
			}
		})
	}
}

// A real memory cgroup left by a dead arena is removed at start, where the machine has a
// memory controller arena may use.
func TestStaleCgroupsAreSweptForReal(t *testing.T) {
	parent, _, err := hostCgroups.memoryParent()
	if err != nil {
		t.Skipf("no memory cgroup here: %v", err)
	}
	stale := filepath.Join(parent, "arena-"+strconv.Itoa(deadPid(t))+"-left")
	if err := os.Mkdir(stale, 0o755); err != nil {
		t.Skipf("cannot make a cgroup here: %v", err)
	}
	t.Cleanup(func() { _ = os.Remove(stale) })
	notes := sweepStaleCgroups()
	if exists(stale) || !strings.Contains(strings.Join(notes, "\n"), stale) {
		t.Fatalf("%s still there (notes %v)", stale, notes)
	}
}

// deadPid is the pid of a process that has ended.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if running(pid) {
		t.Skipf("pid %d was reused at once", pid)
	}
	return pid
}
