package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/verify"
)

// A stamp is trusted only for the same build, start command and check list.
func TestStampKeyedOnBuildStartAndVersion(t *testing.T) {
	base := stampKey("h1", "exec ./server", 2)
	for what, other := range map[string]string{
		"another build":         stampKey("h2", "exec ./server", 2),
		"another start command": stampKey("h1", "exec ./server --fast", 2),
		"another check list":    stampKey("h1", "exec ./server", 3),
	} {
		if other == base {
			t.Errorf("%s keeps the stamp's key %s", what, base)
		}
	}
	if stampKey("h1", "exec ./server", 2) != base {
		t.Error("the same build, start and version give another key")
	}
}

// failingContender is a contender that exits at once: verifying it really starts it, and
// fails at readiness.
func failingContender(t *testing.T) *contender.Manifest {
	t.Helper()
	return &contender.Manifest{Name: "quits", Runtime: "go", Start: "exit 7", Features: []string{"chat", "stream"}, Dir: t.TempDir()}
}

func keep(t *testing.T, l *Lab, m *contender.Manifest, hash string, rep verify.Report) {
	t.Helper()
	raw, _ := json.Marshal(rep)
	path := l.verifiedStamp(m, hash)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// httpPassedStreamFailed is a kept report of every group whose stream check failed.
var httpPassedStreamFailed = verify.Report{Contender: "quits", Checks: []verify.Check{
	{Group: verify.GroupHTTP, Name: "/instant", OK: true},
	{Group: verify.GroupChat, Name: "chat: join", OK: true},
	{Group: verify.GroupStream, Name: "stream: close ends the generator", Detail: "generated still moving"},
}}

// A kept report serves the groups it passed; a group it failed, or a new start command,
// verifies again.
func TestVerifyCachedUsesAKeptReportForTheGroupsItPassed(t *testing.T) {
	l := &Lab{Root: t.TempDir(), ServerCPUs: []int{0}}
	m := failingContender(t)
	logs := t.TempDir()
	keep(t, l, m, "h", httpPassedStreamFailed)

	rep, cached, err := l.VerifyCached(context.Background(), m, "h", logs, false, []string{verify.GroupHTTP, verify.GroupChat})
	if err != nil || !cached || !rep.PassedGroups(verify.GroupHTTP, verify.GroupChat) {
		t.Fatalf("http and chat passed in the kept report: cached %v, err %v, %s", cached, err, rep.Summary())
	}
	rep, cached, _ = l.VerifyCached(context.Background(), m, "h", logs, false, []string{verify.GroupHTTP, verify.GroupStream})
	if cached || rep.PassedGroups(verify.GroupHTTP) {
		t.Fatalf("stream failed in the kept report: want a new verify, which fails at start; cached %v, %s", cached, rep.Summary())
	}
	keep(t, l, m, "h", httpPassedStreamFailed)
	m.Start = "exit 8"
	if _, cached, _ := l.VerifyCached(context.Background(), m, "h", logs, false, []string{verify.GroupHTTP}); cached {
		t.Fatal("a new start command used the old stamp")
	}
}

// A contender whose stream checks failed is measured on a scenario that needs HTTP only, its
// verified field saying what failed; a scenario that needs /stream verifies it again (the
// failure may have been the machine's) and, as it fails again, leaves it out.
func TestPrepareMeasuresWhenTheNeededGroupsPassed(t *testing.T) {
	var progress bytes.Buffer
	l := &Lab{Root: t.TempDir(), ServerCPUs: []int{0}, Progress: NewProgress(&progress)}
	m := failingContender(t)
	hash, err := contender.SourceHash(m)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		features []string
		measured bool
		why      string
	}{{nil, true, "generated still moving"}, {[]string{"stream"}, false, "exited with code 7"}} {
		keep(t, l, m, hash, httpPassedStreamFailed)
		run := &results.Run{}
		got := l.prepare(context.Background(), RunOptions{Contenders: []*contender.Manifest{m}}, run, t.TempDir(), tc.features)
		if measured := slices.Contains(got, m); measured != tc.measured {
			t.Errorf("features %v: measured %v, want %v", tc.features, measured, tc.measured)
		}
		if v := run.Contenders[0].Verified; !strings.HasPrefix(v, results.VerifyFailed) || !strings.Contains(v, tc.why) {
			t.Errorf("features %v: verified %q, want %q", tc.features, v, tc.why)
		}
	}
}
