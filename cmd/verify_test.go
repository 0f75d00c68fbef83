package cmd

import (
	"bytes"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/verify"
)

func TestVerifyRejectsBadInput(t *testing.T) {
	setup(t)
	refused(t, []string{"verify", "--heap", "10", "--server-cpus", "0"}, "--heap 10")
	refused(t, []string{"verify", "--server-cpus", "0-", "--client-cpus", "0"}, "--server-cpus")
}

func TestVerifyUnknownContender(t *testing.T) {
	unknownContender(t, "verify", "nosuch", "--server-cpus", "0", "--client-cpus", "0")
}

// A contender's checks as arena verify prints them: ok or FAIL, how long a timed check
// took, and under a failure (or what a passed check tolerated) its detail, line by line.
func TestPrintChecks(t *testing.T) {
	var out bytes.Buffer
	printChecks(&out, []verify.Check{
		{Name: "GET /instant", OK: true, Took: 1234567 * time.Nanosecond},
		{Name: "GET /delayed", OK: true},
		{Name: "chat: close code 999", OK: true, Detail: "tolerated: closed with 1000"},
		{Name: "SIGTERM", Detail: "still running after 10 s\nlast log line: bye"},
	})
	want := `  ok   GET /instant (1ms)
  ok   GET /delayed
  ok   chat: close code 999
       tolerated: closed with 1000
  FAIL SIGTERM
       still running after 10 s
       last log line: bye
`
	if got := out.String(); got != want {
		t.Errorf("checks printed as\n%s\nwant\n%s", got, want)
	}
}
