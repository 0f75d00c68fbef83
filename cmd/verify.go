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
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/verify"
	"github.com/arena-lab/arena/scenarios"
)

func newVerifyCmd() *cobra.Command {
	var lf labFlags
	var tf targetFlags
	var jobs int
	cmd := &cobra.Command{
		Use:   "verify [contender...] | verify --target URL [scenario]",
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
their reports still come out in order.

With --target URL, it checks a server arena did not start, where it runs, for the scenario
named (the checks that send to the routes it sends, the groups it relies on; the rest are
listed as not needed here, never failures), or for the whole contract such a server can be
checked for (http, chat, stream) with none: what arena run --target checks before it measures.

Exit status: 0 when every check passed; 2 when a check failed (as arena run --fail-on);
1 when arena could not check (a contender that did not build, a target that never became
ready, bad input); 130 when interrupted.`,
		Example: `  arena verify
  arena verify spring-mvc spring-webflux --jobs 2
  arena verify --target http://127.0.0.1:8080 isolation
  arena verify --target http://127.0.0.1:9000 --target-ready /healthz chat`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if jobs < 1 || jobs > 8 {
				return fmt.Errorf("--jobs %d: give 1 to 8", jobs)
			}
			if t, err := tf.target(cmd); err != nil || t != nil {
				if err != nil {
					return err
				}
				return verifyTarget(cmd, lf, t, args)
			}
			return verifyContenders(cmd, lf, jobs, args)
		},
	}
	lf.register(cmd)
	tf.registerVerify(cmd)
	cmd.Flags().IntVar(&jobs, "jobs", 1, "contenders verified at once (verify mostly waits; each job starts its own contender, downstream and database)")
	return cmd
}

// verifyContenders builds and verifies the contenders args name (all when none), jobs at a
// time, printing each one's checks; a check failed is a gateFailed (exit 2), a build that
// failed an error (exit 1).
func verifyContenders(cmd *cobra.Command, lf labFlags, jobs int, args []string) error {
	out := cmd.OutOrStdout()
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
		err := fmt.Errorf("%d of %d contender(s) do not keep the contract: %s (logs in %s)", len(failed), len(ms), strings.Join(failed, ", "), logDir)
		if len(built) == len(ms) { // every one was checked: a check failed
			return &gateFailed{what: err.Error()}
		}
		return err
	}
	fmt.Fprintf(out, "\nall %d contender(s) keep the contract\n", len(ms))
	return nil
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

// verifyTarget checks the target where it runs, for the scenario args name (its routes and
// groups) or, with none, for every group a server arena did not start can be checked for;
// a failed check is a gateFailed (exit 2), a target never ready an error (exit 1).
func verifyTarget(cmd *cobra.Command, lf labFlags, t *results.Target, args []string) error {
	groups, needs, what := []string{verify.GroupHTTP, verify.GroupChat, verify.GroupStream}, (*verify.Needs)(nil), "the contract"
	switch {
	case len(args) > 1:
		return fmt.Errorf("with --target, name one scenario to check it for, or none for the whole contract (given %s)", strings.Join(args, " "))
	case len(args) == 1:
		sc, err := scenarios.Find(args[0])
		if err != nil {
			return err
		}
		if n, ok := lab.ScenarioNeeds(sc); ok {
			needs, what = &n, "what the "+sc.Name()+" scenario needs"
			groups = []string{verify.GroupHTTP}
			for _, g := range n.Groups {
				if g == verify.GroupChat || g == verify.GroupStream { // db: the lab's database goes with a start
					groups = append(groups, g)
				}
			}
		}
	}
	l, err := openTarget(lf, cmd.ErrOrStderr(), t)
	if err != nil {
		return err
	}
	rep := l.VerifyTarget(cmd.Context(), t, needs, groups)
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s at %s, a server arena did not start, for %s\n", t.Name, t.URL, what)
	printChecks(out, rep.Checks)
	if len(rep.NotNeeded) > 0 {
		fmt.Fprintf(out, "  not needed here (%d): %s\n", len(rep.NotNeeded), strings.Join(rep.NotNeeded, "; "))
	}
	fmt.Fprintf(out, "  %s\n", rep.Summary())
	switch {
	case cmd.Context().Err() != nil:
		return errInterrupted
	case len(rep.Checks) == 1 && !rep.Checks[0].OK && rep.Checks[0].Name == "ready": // nothing could be checked
		return fmt.Errorf("the target %s could not be checked: %s", t.Name, rep.Checks[0].Detail)
	case !rep.PassedGroups(groups...):
		return &gateFailed{what: fmt.Sprintf("the target %s does not keep %s (%s): %d check(s) failed", t.Name, what, strings.Join(groups, ", "), len(rep.Failures()))}
	}
	fmt.Fprintf(out, "\n%s keeps %s\n", t.Name, what)
	return nil
}
