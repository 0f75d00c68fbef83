package netns

import (
	"os"
	"os/exec"
	"testing"
)

// Sshd is where Debian's openssh-server puts the daemon.
const Sshd = "/usr/sbin/sshd"

// Require skips a test that needs namespaces when this machine cannot make them: not root,
// or no ip, sshd, ssh, scp or ssh-keygen. Under CI=true it fails instead, because CI must
// run these tests and .ci/run installs what they need. It also skips under -short.
func Require(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("netns: builds network namespaces; skipped under -short")
	}
	why := ""
	if os.Geteuid() != 0 {
		why = "needs root for ip netns"
	} else if _, err := os.Stat(Sshd); err != nil {
		why = "needs " + Sshd + " (Debian: apt-get install openssh-server)"
	} else {
		for _, tool := range []string{"ip", "ssh", "scp", "ssh-keygen"} {
			if _, err := exec.LookPath(tool); err != nil {
				why = "needs " + tool + " (Debian: apt-get install iproute2 openssh-client)"
				break
			}
		}
	}
	if why == "" {
		if _, err := os.Stat("/run/netns"); err != nil {
			_ = os.MkdirAll("/run/netns", 0o755)
		}
		return
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("netns: %s; CI must run this test, so .ci/run installs it", why)
	}
	t.Skip("netns: " + why)
}
