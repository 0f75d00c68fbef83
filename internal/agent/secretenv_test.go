package agent

import (
	"os"
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
