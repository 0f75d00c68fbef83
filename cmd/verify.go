package cmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/lab"
	"github.com/arena-lab/arena/internal/verify"
)

func newVerifyCmd() *cobra.Command {
	var lf labFlags
	var jobs int
	cmd := &cobra.Command{
		Use:   "verify [contender...]",
		Short: "Check contenders against the contract (default: all)",
		Long: `Builds each contender if needed, starts it twice (once with the contract's defaults, using
itself as the downstream of /data/{id}, and BIND_ADDRESS=127.0.0.2 when it honours that; once
with the lab's own downstream and its failure cases, and BACKPRESSURE=off), and a third time
for the db feature (the lab's own PostgreSQL as DB_URL, DB_POOL=2: its rows, its errors, the
pool's bound, and the database stopped under it), and checks every
path, body, content type and error case of contenders/README.md, the HTTP and WebSocket abuse a
real server meets, that after each bad input the server is still ready and still the same
processes, that it listens on loopback only (its port on BIND_ADDRESS alone when given one),
and that it exits within 10 s of SIGTERM. Checks come in groups (http, and chat,
stream and db for contenders that list them); each contender's line says which passed, and its
progress goes to stderr. --jobs N verifies N contenders side by side (verify mostly waits);
their reports still come out in order. Exits 1 if any check fails.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			out := cmd.OutOrStdout()
			if jobs < 1 || jobs > 8 {
				return fmt.Errorf("--jobs %d: give 1 to 8", jobs)
			}
			l, ms, err := lf.openWith(cmd.ErrOrStderr(), args)
			if err != nil {
				return err
			}
			logDir := filepath.Join(l.Root, ".arena", "verify-logs")
			if err := os.MkdirAll(logDir, 0o755); err != nil {
				return err
			}
			builder := l.Builder()
			var failed []string
			var built []*contender.Manifest
			var hashes []string
			for _, m := range ms {
				b, err := builder.Build(cmd.Context(), m, false)
				if err != nil {
					fmt.Fprintf(out, "%s (%s, %s)\n  FAIL build\n    %s\n", m.Name, m.Model, m.Stack, strings.ReplaceAll(err.Error(), "\n", "\n    "))
					failed = append(failed, m.Name)
					continue
				}
				built, hashes = append(built, m), append(hashes, b.Hash)
			}
			interrupted := false
			groups := func(m *contender.Manifest) []string { return lab.VerifyGroups(m, verify.Groups) }
			l.VerifyEach(cmd.Context(), built, hashes, jobs, logDir, true, groups, func(v lab.Verified) {
				fmt.Fprintf(out, "%s (%s, %s)\n", v.Manifest.Name, v.Manifest.Model, v.Manifest.Stack)
				printChecks(out, v.Report.Checks)
				fmt.Fprintf(out, "  %s\n", v.Report.Summary())
				interrupted = interrupted || v.Err != nil
				if !v.Report.Passed() {
					failed = append(failed, v.Manifest.Name)
				}
			})
			if interrupted {
				return errInterrupted
			}
			if len(failed) > 0 {
				return fmt.Errorf("%d of %d contender(s) do not keep the contract: %s (logs in %s)", len(failed), len(ms), strings.Join(failed, ", "), logDir)
			}
			fmt.Fprintf(out, "\nall %d contender(s) keep the contract\n", len(ms))
			return nil
		},
	}
	lf.register(cmd)
	cmd.Flags().IntVar(&jobs, "jobs", 1, "contenders verified at once (verify mostly waits; each job starts its own contender, downstream and database)")
	return cmd
}

// printChecks prints one line per check, ok or FAIL with how long it took, and under it its
// detail: what went wrong, or what a passed check tolerated.
func printChecks(w io.Writer, checks []verify.Check) {
	for _, c := range checks {
		mark := "ok  "
		if !c.OK {
			mark = "FAIL"
		}
		took := ""
		if c.Took > 0 {
			took = " (" + c.Took.Round(time.Millisecond).String() + ")"
		}
		fmt.Fprintf(w, "  %s %s%s\n", mark, c.Name, took)
		if c.Detail != "" {
			fmt.Fprintf(w, "       %s\n", strings.ReplaceAll(c.Detail, "\n", "\n       "))
		}
	}
}
