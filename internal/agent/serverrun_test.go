package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
