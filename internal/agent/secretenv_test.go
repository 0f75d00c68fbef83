package agent

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestReadSecretLeavesTheEnvironment: the secret read from SecretEnv is gone from this
// process's environment once read, so that nothing it starts afterwards (a build, a
// contender, a profiler, psql) inherits it.
func TestReadSecretLeavesTheEnvironment(t *testing.T) {
	const secret = "0123456789abcdef0123456789abcdef"
	t.Setenv(SecretEnv, " "+secret+"\n")
	got, err := ReadSecret("")
	if err != nil || got != secret {
		t.Fatalf("ReadSecret = %q, %v; want %q", got, err, secret)
	}
	if v, ok := os.LookupEnv(SecretEnv); ok {
		t.Errorf("%s is still in the environment after it was read: %q", SecretEnv, v)
	}
}

// TestTheSecretLeavesTheEnvironmentAtStart: a process started with SecretEnv set (this test
// binary again) no longer has it in its environment when its tests begin, nor does a child it
// starts, yet ReadSecret still gives it: arena never leaves it for anything it starts, even
// where it never reads it (a run without agents).
func TestTheSecretLeavesTheEnvironmentAtStart(t *testing.T) {
	const secret = "fedcba9876543210fedcba9876543210"
	if os.Getenv("ARENA_TEST_SECRET_CHILD") == "1" {
		if v, ok := os.LookupEnv(SecretEnv); ok {
			t.Fatalf("%s is in the environment at start: %q", SecretEnv, v)
		}
		out, err := exec.Command("sh", "-c", "echo ${"+SecretEnv+":-none}").Output()
		if err != nil || strings.TrimSpace(string(out)) != "none" {
			t.Fatalf("a child sees %s as %q (%v)", SecretEnv, out, err)
		}
		if got, err := ReadSecret(""); err != nil || got != secret {
			t.Fatalf("ReadSecret = %q, %v; want the secret given at start", got, err)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestTheSecretLeavesTheEnvironmentAtStart$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ARENA_TEST_SECRET_CHILD=1", SecretEnv+"="+secret)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("the child: %v\n%s", err, out)
	}
}
