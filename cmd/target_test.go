package cmd

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
)

// What makes no sense with --target, or is no target, is refused at once with what to do,
// and nothing is started or written.
func TestRunTargetRefusesWhatMakesNoSense(t *testing.T) {
	setup(t)
	const at = "http://127.0.0.1:1"
	emptyCgroup := t.TempDir() // read as a cgroup is: a folder with cgroup.procs, here empty
	if err := os.WriteFile(filepath.Join(emptyCgroup, "cgroup.procs"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	none := []string{"--target", at, "--target-knobs", "none"} // a target isolation's seed level can run
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"a target flag alone", []string{"--target-pid", "1"}, []string{"--target-pid goes with --target"}},
		{"skip-verify alone", []string{"--skip-verify"}, []string{"--skip-verify goes with --target"}},
		{"ws URL", []string{"--target", "ws://127.0.0.1:8080"}, []string{"give the server's http:// URL", "ws:// on the same address"}},
		{"TLS", []string{"--target", "https://127.0.0.1:8443"}, []string{"no TLS"}},
		{"a name, not an address", []string{"--target", "http://example.com:80"}, []string{"give the server's IP address"}},
		{"no port", []string{"--target", "http://127.0.0.1"}, []string{"give the port"}},
		{"a path", []string{"--target", "http://127.0.0.1:8080/api"}, []string{"http://IP:port alone"}},
		{"with contenders", append([]string{"--contenders", "go-nethttp"}, none...), []string{"no --contenders"}},
		{"with profile", append([]string{"--profile"}, none...), []string{"--profile"}},
		{"with rebuild", append([]string{"--rebuild"}, none...), []string{"--rebuild: a target is not built"}},
		{"with a port", append([]string{"--port", "9000"}, none...), []string{"--port is the port arena starts contenders on"}},
		{"with env", append([]string{"--env", "WORKER_THREADS=11"}, none...), []string{"--env sets variables at a contender's start", "--target-env"}},
		{"with hosts", append([]string{"--hosts", "hosts.toml"}, none...), []string{"--hosts and --kubernetes"}},
		{"with kubernetes", append([]string{"--kubernetes"}, none...), []string{"--hosts and --kubernetes"}},
		{"with a server address", append([]string{"--agent-addrs", "127.0.0.1:7600", "--server-address", "127.0.0.1"}, none...), []string{"--server-address"}},
		{"agent processes off loopback", []string{"--target", "http://10.0.0.9:8080", "--target-knobs", "none", "--agent-processes", "2"},
			[]string{"127.0.0.1 only", "--server-address 10.0.0.9"}},
		{"with heap", append([]string{"--heap", "1024"}, none...), []string{"--heap"}},
		{"a bad name", append([]string{"--target-name", "My Server"}, none...), []string{`--target-name "My Server"`, "a-z, 0-9 and -"}},
		{"a contender's name", append([]string{"--target-name", "go-nethttp", "--server-cpus", "0", "--client-cpus", "0"}, none...), []string{"a contender of this lab has that name"}},
		{"no such process", append([]string{"--target-pid", "999999999"}, none...), []string{"--target-pid 999999999: no such process"}},
		{"a cgroup alone", []string{"--target-cgroup", "/sys/fs/cgroup/pids"}, []string{"--target-cgroup goes with --target"}},
		{"no cgroup", append([]string{"--target-cgroup", "/tmp"}, none...), []string{"--target-cgroup", "/tmp is no cgroup", "cgroup.procs"}},
		{"a cgroup and a pid", append([]string{"--target-cgroup", emptyCgroup, "--target-pid", "1"}, none...), []string{"--target-pid and --target-cgroup: give one"}},
		{"an empty cgroup", append([]string{"--target-cgroup", emptyCgroup}, none...), []string{"the cgroup holds no process"}},
		{"an unknown knob", []string{"--target", at, "--target-knobs", "THREADS"}, []string{"--target-knobs THREADS: not a contract variable"}},
		{"env not honoured", append([]string{"--target-env", "WORKER_THREADS=11"}, none...), []string{"--target-env WORKER_THREADS: not among --target-knobs"}},
		{"env not the contract's", []string{"--target", at, "--target-env", "FOO=1"}, []string{"--target-env FOO: not a contract variable"}},
		{"a restart the target was not said to have", []string{"isolation", "--target", at},
			[]string{"can run none of the scenario's levels", "level seed sets WORKER_THREADS=11", "--target-env WORKER_THREADS=11"}},
		{"said otherwise", []string{"isolation", "--target", at, "--target-env", "WORKER_THREADS=200"},
			[]string{"was started with WORKER_THREADS=200"}},
		{"levels set up at a start", []string{"stream", "--quick", "--target", at}, []string{"can run none of the scenario's levels", "memory cap"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := t.TempDir()
			refused(t, append(append([]string{"run"}, tt.args...), "--out", out), tt.want...)
			noWork(t, out)
		})
	}
}

// The flags become one target: its address from the URL (localhost as 127.0.0.1), its name
// "target" unless given, every contract variable honoured unless said otherwise ("none": no
// variable), what it was started with, and whether it is verified.
func TestTargetFromFlags(t *testing.T) {
	parse := func(args ...string) (*cobra.Command, *targetFlags) {
		cmd := &cobra.Command{}
		f := &targetFlags{}
		f.register(cmd)
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		return cmd, f
	}
	cmd, f := parse()
	if tg, err := f.target(cmd); tg != nil || err != nil {
		t.Fatalf("no --target: %+v, %v; want none", tg, err)
	}
	cmd, f = parse("--target", "http://localhost:8080/")
	tg, err := f.target(cmd)
	if err != nil || tg.Name != "target" || tg.Addr != "127.0.0.1:8080" || tg.URL != "http://localhost:8080/" ||
		!slices.Equal(tg.Knobs, contender.Knobs) || tg.Pid != 0 || tg.SkipVerify {
		t.Fatalf("defaults: %+v, %v", tg, err)
	}
	cmd, f = parse("--target", "http://[::1]:9000", "--target-name", "mine", "--target-knobs", "none", "--skip-verify")
	if tg, err = f.target(cmd); err != nil || tg.Addr != "[::1]:9000" || tg.Name != "mine" || len(tg.Knobs) != 0 || !tg.SkipVerify {
		t.Fatalf("given: %+v, %v", tg, err)
	}
	cmd, f = parse("--target", "http://127.0.0.1:9000", "--target-knobs", "WORKER_THREADS", "--target-env", "WORKER_THREADS=11")
	if tg, err = f.target(cmd); err != nil || tg.Env["WORKER_THREADS"] != "11" || !slices.Equal(tg.Knobs, []string{"WORKER_THREADS"}) {
		t.Fatalf("started with: %+v, %v", tg, err)
	}
	cmd, f = parse("--target", "http://127.0.0.1:9000", "--target-ready", "/healthz")
	if tg, err = f.target(cmd); err != nil || tg.Ready != "/healthz" {
		t.Fatalf("its readiness: %+v, %v", tg, err)
	}
	cmd, f = parse("--target", "http://127.0.0.1:9000", "--target-ready", "healthz")
	if _, err = f.target(cmd); err == nil || !strings.Contains(err.Error(), "beginning with /") {
		t.Fatalf("a readiness that is no path: %v", err)
	}
	cmd, f = parse("--target-ready", "/healthz")
	if _, err = f.target(cmd); err == nil || !strings.Contains(err.Error(), "--target-ready goes with --target") {
		t.Fatalf("--target-ready alone: %v", err)
	}
}

// TestSpecTargetAddressIsItsURLs: a spec from a file or a coordinator whose target's address
// is not its URL's (the load would go to the address) is refused before anything runs.
func TestSpecTargetAddressIsItsURLs(t *testing.T) {
	spec := results.RunSpec{Scenario: "sleep", Repeat: 1, Target: &results.Target{Name: "t", URL: "http://127.0.0.1:8080", Addr: "127.0.0.1:9", Knobs: []string{}}}
	if _, err := checkSpec(spec); err == nil || !strings.Contains(err.Error(), "not its URL's") {
		t.Errorf("a target whose address is not its URL's: %v", err)
	}
	spec.Target.Addr = "127.0.0.1:8080"
	if _, err := checkSpec(spec); err != nil {
		t.Errorf("the same target with its URL's address: %v", err)
	}
}
