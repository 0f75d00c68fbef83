package cmd

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/lab"
)

// --live and --no-live say what the live view does, never both; neither leaves it to the
// terminal and $CI.
func TestLiveFlags(t *testing.T) {
	setup(t)
	for args, want := range map[string]lab.LiveChoice{"": lab.LiveAuto, "--live": lab.LiveOn, "--no-live": lab.LiveOff} {
		var rf runFlags
		run := &cobra.Command{Use: "run"}
		rf.register(run) // arena run's flags, bound to rf
		var argv []string
		if args != "" {
			argv = []string{args}
		}
		if err := run.ParseFlags(argv); err != nil {
			t.Fatal(err)
		}
		if got := rf.liveChoice(); got != want {
			t.Errorf("%q: %d, want %d", args, got, want)
		}
	}
	out := t.TempDir()
	refused(t, []string{"run", "--live", "--no-live", "--out", out}, "live", "no-live")
	noWork(t, out)
}
