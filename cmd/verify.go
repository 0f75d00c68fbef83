package cmd

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/arena-lab/arena/internal/contender"
)

func newVerifyCmd() *cobra.Command {
	var lf labFlags
	cmd := &cobra.Command{
		Use:   "verify [contender...]",
		Short: "Check contenders against the contract (default: all)",
		Long: `Builds each contender if needed, starts it twice (once using itself as the downstream of
/data/{id}, once the lab's own downstream with its failure cases) and checks every path,
body, content type and error case of contenders/README.md, that the server stays ready
after each bad request, and that it exits within 10 s of SIGTERM. Exits 1 if any fails.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			l, ms, err := lf.openWith(args)
			if err != nil {
				return err
			}
			logDir := filepath.Join(l.Root, ".arena", "verify-logs")
			if err := os.MkdirAll(logDir, 0o755); err != nil {
				return err
			}
			builder := &contender.Builder{CacheDir: filepath.Join(l.Root, ".arena", "builds"), Settings: l.Settings}
			var failed []string
			for _, m := range ms {
				fmt.Printf("%s (%s, %s)\n", m.Name, m.Model, m.Stack)
				b, err := builder.Build(cmd.Context(), m, false)
				if err != nil {
					fmt.Printf("  FAIL build\n    %s\n", strings.ReplaceAll(err.Error(), "\n", "\n    "))
					failed = append(failed, m.Name)
					continue
				}
				rep, _, err := l.VerifyCached(cmd.Context(), m, b.Hash, logDir, true)
				for _, c := range rep.Checks {
					mark := "ok  "
					if !c.OK {
						mark = "FAIL"
					}
					took := ""
					if c.Took > 0 {
						took = " (" + c.Took.Round(time.Millisecond).String() + ")"
					}
					fmt.Printf("  %s %s%s\n", mark, c.Name, took)
					if !c.OK {
						fmt.Printf("       %s\n", strings.ReplaceAll(c.Detail, "\n", "\n       "))
					}
				}
				if err != nil {
					return errInterrupted
				}
				if !rep.Passed() {
					failed = append(failed, m.Name)
				}
			}
			if len(failed) > 0 {
				return fmt.Errorf("%d of %d contender(s) do not keep the contract: %s (logs in %s)", len(failed), len(ms), strings.Join(failed, ", "), logDir)
			}
			fmt.Printf("\nall %d contender(s) keep the contract\n", len(ms))
			return nil
		},
	}
	lf.register(cmd)
	return cmd
}
