package lab

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/downstream"
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
		got := l.prepare(context.Background(), []*contender.Manifest{m}, results.RunSpec{}, run, t.TempDir(), tc.features)
		if measured := slices.Contains(got, m); measured != tc.measured {
			t.Errorf("features %v: measured %v, want %v", tc.features, measured, tc.measured)
		}
		if v := run.Contenders[0].Verified; !strings.HasPrefix(v, results.VerifyFailed) || !strings.Contains(v, tc.why) {
			t.Errorf("features %v: verified %q, want %q", tc.features, v, tc.why)
		}
	}
}

// Verify gives BIND_ADDRESS=127.0.0.2 in its first start only to a contender that honours it,
// and runs the bind check only there; one that does not gets the contract's 127.0.0.1 and
// the start's own name, as before.
func TestVerifyBindsOnlyAContenderThatHonoursBindAddress(t *testing.T) {
	ds := labDownstream(t)
	starts := verifyStarts(ds, nil)
	groups := []string{verify.GroupHTTP}
	// bindSections counts the sections of st that need BIND_ADDRESS and run with vars.
	bindSections := func(st verifyStart, vars map[string]string) int {
		n := 0
		for _, sec := range st.sections {
			if sec.needs == contender.BindAddress && sec.runs(vars, groups) {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		knobs     []string
		bind      string
		firstName string
	}{
		{[]string{"DOWNSTREAM_URL", "BACKPRESSURE", "BIND_ADDRESS"}, "127.0.0.2", "defaults, BIND_ADDRESS=127.0.0.2"},
		{[]string{"DOWNSTREAM_URL", "BACKPRESSURE"}, "", "defaults"},
	} {
		m := &contender.Manifest{Name: "c", Knobs: tc.knobs}
		vars, name := starts[0].varsFor(m)
		if vars[contender.BindAddress] != tc.bind || name != tc.firstName {
			t.Errorf("knobs %v, first start: BIND_ADDRESS %q, name %q; want %q, %q", tc.knobs, vars[contender.BindAddress], name, tc.bind, tc.firstName)
		}
		if want := min(len(tc.bind), 1); bindSections(starts[0], vars) != want {
			t.Errorf("knobs %v, first start: %d bind sections run, want %d", tc.knobs, bindSections(starts[0], vars), want)
		}
		in := &contender.Instance{Env: vars}
		if want := cmp.Or(tc.bind, verify.ContractHost); in.Host() != want {
			t.Errorf("knobs %v: the checks go to %s, want %s", tc.knobs, in.Host(), want)
		}
		vars, name = starts[1].varsFor(m)
		if _, ok := vars[contender.BindAddress]; ok || name != starts[1].name || bindSections(starts[1], vars) != 0 {
			t.Errorf("knobs %v, second start: %v, %q; want the contract's 127.0.0.1", tc.knobs, vars, name)
		}
	}
}

// Started for real with BIND_ADDRESS=127.0.0.2, a contender that binds it passes the
// listener and bind checks; one that lists it but binds 127.0.0.1 fails them, and the hint
// of a failed readiness says so.
func TestVerifyChecksCatchAContenderThatIgnoresBindAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("starts contenders")
	}
	if ln, err := net.Listen("tcp", verifyBindAddress+":0"); err != nil {
		t.Skipf("%s is not local here: %v", verifyBindAddress, err)
	} else {
		ln.Close()
	}
	ds := labDownstream(t)
	l := testLab(t, nil)
	for _, tc := range []struct {
		name, bind string
		ok         bool
	}{{"binds", "${BIND_ADDRESS:-127.0.0.1}", true}, {"ignores", "127.0.0.1", false}} {
		m := pyServer(t, tc.name, "")
		m.Start = strings.Replace(m.Start, "--bind 127.0.0.1", "--bind "+tc.bind, 1)
		m.Knobs = []string{contender.BindAddress}
		vars, _ := verifyStarts(ds, nil)[0].varsFor(m)
		in, err := contender.Start(m, contender.StartOptions{Settings: l.Settings, CPUs: FormatCPUs(l.ServerCPUs), Vars: vars,
			LogPath: filepath.Join(t.TempDir(), "log")})
		if err != nil {
			t.Fatal(err)
		}
		// The one that ignores it is never ready where the checks look: a short wait.
		wait := in.WaitReady(context.Background(), map[bool]time.Duration{true: 20 * time.Second, false: 3 * time.Second}[tc.ok])
		if (wait == nil) != tc.ok {
			in.Stop()
			t.Fatalf("%s: ready on %s: %v", tc.name, in.Addr(), wait)
		}
		if !tc.ok {
			if hint := elsewhere(in); !strings.Contains(hint, "BIND_ADDRESS=127.0.0.2 is not honoured") {
				t.Errorf("%s: the readiness hint is %q", tc.name, hint)
			}
		}
		s, err := verify.NewServer(in.Addr(), in.Pid())
		if err != nil {
			in.Stop()
			t.Fatal(err)
		}
		for _, c := range []verify.Check{s.ListenersCheck(), s.BindCheck(context.Background())} {
			if c.OK != tc.ok {
				t.Errorf("%s: %s: ok %v, %q", tc.name, c.Name, c.OK, c.Detail)
			}
		}
		in.Stop()
	}
}

// labDownstream is the lab's downstream, closed when the test ends. It is asked once first:
// closed before its Serve has begun, it would wait for that Serve for ever.
func labDownstream(t *testing.T) *downstream.Server {
	t.Helper()
	ds, err := downstream.Start("127.0.0.1:0", 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (&httpClient{timeout: 5 * time.Second}).get(ds.URL() + "/resources/data1.json"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ds.Close() })
	return ds
}
