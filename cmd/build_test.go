package cmd

import "testing"

func TestBuildRejectsBadInput(t *testing.T) {
	setup(t)
	refused(t, []string{"build", "--server-cpus", "99", "--client-cpus", "0"}, "--server-cpus", "not available")
	refused(t, []string{"build", "--heap", "70000", "--server-cpus", "0"}, "--heap 70000")
	refused(t, []string{"build", "--forced"}, "unknown flag: --forced")
}

func TestBuildUnknownContender(t *testing.T) {
	unknownContender(t, "build", "nosuch", "--server-cpus", "0", "--client-cpus", "0")
}
