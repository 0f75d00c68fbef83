package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// remoteSpec is a remote run's spec with every field set.
var remoteSpec = results.RunSpec{Scenario: "sleep", Preset: "seed", Quick: true, DurationS: 10, TimeoutS: 5,
	Levels: []string{"sleep-c200"}, Contenders: []string{"netty", "spring-mvc"}, Repeat: 3,
	Env: map[string]string{"WORKER_THREADS": "11"}, Profile: true, Port: 8080, ServerCPUs: "2-3", ClientCPUs: "1",
	HeapMB: 1024, Rebuild: true, Reverify: true, ID: "20261123-100000-sleep"}

// TestRunRequestRoundTrips: what the coordinator asks for is what the server agent reads,
// every field of the spec included.
func TestRunRequestRoundTrips(t *testing.T) {
	req := RunRequest{Spec: remoteSpec, LoadAgents: []string{"10.0.0.2:7600", "10.0.0.3:7600"}, ServerAddress: "10.0.0.1",
		Command: []string{"arena", "run", "sleep"}}
	raw, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var back RunRequest
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, req) {
		t.Errorf("round trip:\n got %+v\nwant %+v", back, req)
	}
	if err := back.Check(); err != nil {
		t.Errorf("a coordinator's request refused: %v", err)
	}
	for _, bad := range []RunRequest{
		{Spec: results.RunSpec{ID: "../x"}},
		{Spec: results.RunSpec{ID: "r"}, LoadAgents: []string{"10.0.0.2"}, ServerAddress: "10.0.0.1"},
		{Spec: results.RunSpec{ID: "r"}, LoadAgents: []string{"10.0.0.2:7600"}},
	} {
		if bad.Check() == nil {
			t.Errorf("%+v was not refused", bad)
		}
	}
}

// TestServerAgentRunsTheSpec: the server agent hands the spec it is given to its lab as it
// is, in this process (no command line), streams the progress back, and the coordinator
// reads the run's end as a typed status: complete, interrupted, or failed with why.
func TestServerAgentRunsTheSpec(t *testing.T) {
	var got RunRequest
	var gotDir string
	end := RunStatus{Status: results.RunComplete}
	runsDir := t.TempDir()
	s := &Server{Self: Self("srv"), Secret: testSecret, RunsDir: runsDir,
		Run: func(ctx context.Context, req RunRequest, dir string, out io.Writer) (string, error) {
			got, gotDir = req, dir
			fmt.Fprintln(out, "[1/2] netty sleep-c200")
			fmt.Fprint(out, "[2/2] spring-mvc")
			fmt.Fprintln(out, " sleep-c200")
			if end.Error != "" {
				return end.Status, errors.New(end.Error)
			}
			return end.Status, nil
		}}
	srv := serveTLS(t, s)
	remote, err := Dial(context.Background(), strings.TrimPrefix(srv.URL, "https://"), testSecret)
	if err != nil {
		t.Fatal(err)
	}
	req := RunRequest{Spec: remoteSpec, LoadAgents: []string{"10.0.0.2:7600"}, ServerAddress: "10.0.0.1"}
	for _, want := range []RunStatus{
		{Status: results.RunComplete},
		{Status: results.RunInterrupted},
		{Status: results.RunFailed, Error: "no contender passed build and verify:\nnothing was measured"},
		{Status: "", Error: "no such scenario"}, // failed before the run began
	} {
		end = want
		var progress strings.Builder
		status, err := remote.RunRemote(context.Background(), req, &progress)
		if err != nil {
			t.Fatalf("%+v: %v", want, err)
		}
		if want.Status == "" {
			want.Status = results.RunFailed
		}
		if status != want {
			t.Errorf("the run's end %+v, want %+v", status, want)
		}
		if progress.String() != "[1/2] netty sleep-c200\n[2/2] spring-mvc sleep-c200\n" {
			t.Errorf("progress %q", progress.String())
		}
		if !reflect.DeepEqual(got, req) || gotDir != runsDir {
			t.Errorf("the lab was given %+v in %s, want %+v in %s", got, gotDir, req, runsDir)
		}
	}
}

// TestRunsFoldersNobodyElseChose replays issue 34 (5): another user's link planted at the old
// fixed default ($TMPDIR/arena-agent-runs) is not followed, the default being a new folder
// of the agent's own; a runs folder that is a link, that others may write in, or that another
// user owns, and a run's folder that is a link, are refused before the lab is handed the run.
func TestRunsFoldersNobodyElseChose(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	theirs := t.TempDir()
	if err := os.Symlink(theirs, filepath.Join(tmp, "arena-agent-runs")); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	s := &Server{Self: Self("srv"), Secret: testSecret, Run: func(ctx context.Context, req RunRequest, runsDir string, out io.Writer) (string, error) {
		dirs = append(dirs, runsDir)
		return results.RunComplete, nil
	}}
	url := serveTLS(t, s).URL
	req := RunRequest{Spec: results.RunSpec{ID: "r1"}}
	if code, body := call(t, url, "POST", "/v1/run", testSecret, req); code != http.StatusOK {
		t.Fatalf("a run in the default folder: %d %s", code, body)
	}
	st, err := os.Lstat(dirs[0])
	if err != nil || !st.IsDir() || st.Mode().Perm() != 0o700 || !strings.HasPrefix(filepath.Base(dirs[0]), "arena-agent-runs-") {
		t.Errorf("the default runs folder %s: %v %v, want a new folder of mode 0700", dirs[0], st, err)
	}
	refuse := func(what, runsDir, want string) {
		t.Helper()
		s.RunsDir = runsDir
		if code, body := call(t, url, "POST", "/v1/run", testSecret, req); code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("%s: %d %s; want 400 saying %q", what, code, body, want)
		}
	}
	link := filepath.Join(tmp, "link")
	if err := os.Symlink(theirs, link); err != nil {
		t.Fatal(err)
	}
	refuse("a runs folder that is a link", link, "symbolic link")
	open := filepath.Join(tmp, "open")
	if err := os.Mkdir(open, 0o700); err != nil || os.Chmod(open, 0o777) != nil {
		t.Fatal(err)
	}
	refuse("a runs folder others may write in", open, "others may write")
	mine := t.TempDir()
	if err := os.Symlink(theirs, filepath.Join(mine, "r1")); err != nil {
		t.Fatal(err)
	}
	refuse("a run's folder that is a link", mine, "symbolic link")
	if os.Geteuid() == 0 { // the cross-user case: a folder of user nobody's
		other := filepath.Join(tmp, "nobodys")
		if err := os.Mkdir(other, 0o700); err != nil || os.Chown(other, 65534, 65534) != nil {
			t.Fatal(err)
		}
		refuse("a runs folder of another user's", other, "belongs to user 65534")
	}
	if len(dirs) != 1 {
		t.Errorf("the lab was handed %d run(s), want the first only", len(dirs))
	}
	if entries, _ := os.ReadDir(theirs); len(entries) != 0 {
		t.Errorf("the planted folder holds %d entries", len(entries))
	}
}
