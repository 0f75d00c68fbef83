package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

const (
	fuzzSecret = "fuzz-secret-0123456789abcdef0123456789abcdef"
	fuzzTarget = "10.9.8.7" // the one server address the fuzzed agent was started with
)

// FuzzJobBody posts any bytes as a job to a load agent and holds its answer to what the
// guard promises: a 400 for a body that is not one JSON job or a job the guard refuses,
// and a job let through (answered 409 here: the agent is kept busy, so nothing is sent) only
// when it is the JSON job json.Unmarshal reads, aimed at the agent's own server address,
// with a path of a request line's bytes, within the connection and time bounds.
func FuzzJobBody(f *testing.F) {
	job := Job{Level: "x", Part: 0, Parts: 1, Target: fuzzTarget + ":8080",
		Closed: &ClosedJob{Tag: "t", Path: "/instant", Connections: 10, Duration: time.Second}}
	for _, j := range []Job{job, withPath(job, "/a\r\nHost: x"), withTarget(job, "127.0.0.1:80"),
		withConns(job, 100_000)} {
		b, _ := json.Marshal(j)
		f.Add(b)
	}
	f.Add([]byte(`{"target":"10.9.8.7:1","parts":1,"closed":{"path":"/","connections":1,"duration_ns":1000000000}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var resolved []Job
		s := &Server{Self: Self("fuzzed"), Secret: fuzzSecret, Targets: []string{fuzzTarget},
			Resolve: recordingResolver(&resolved)}
		s.busy.Store(true) // a job the guard lets through gets 409 instead of a load
		req := httptest.NewRequest(http.MethodPost, "/v1/load", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+fuzzSecret)
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		var want Job
		decoded := json.Unmarshal(body, &want) == nil
		switch rec.Code {
		case http.StatusBadRequest:
		case http.StatusConflict:
			if !decoded {
				t.Fatalf("%q: json.Unmarshal refuses it, the agent took it as a job", body)
			}
			if len(resolved) != 1 || !reflect.DeepEqual(resolved[0], want) {
				t.Fatalf("%q: the agent resolved %+v; json.Unmarshal reads %+v", body, resolved, want)
			}
			withinBounds(t, want)
		default:
			t.Fatalf("%q: answered %d %s; want 400, or 409 from the busy agent", body, rec.Code, rec.Body)
		}
	})
}

// recordingResolver resolves a job's closed loop, keeping every job it is asked for: the
// guard must have checked each before.
func recordingResolver(into *[]Job) Resolver {
	noScenarios := func(name string) (scenario.Scenario, error) { return nil, errors.New("no scenario " + name) }
	plan := PlanResolver(noScenarios)
	return func(job Job) (load.Load, error) {
		*into = append(*into, job)
		return plan(job)
	}
}

// withinBounds checks a job the agent let through against the guard's promises, read from the
// job itself rather than through the guard's own code.
func withinBounds(t *testing.T, job Job) {
	t.Helper()
	host, _, err := net.SplitHostPort(job.Target)
	if ip := net.ParseIP(host); err != nil || ip == nil || !ip.Equal(net.ParseIP(fuzzTarget)) {
		t.Fatalf("a job aimed at %q went through; the agent may only load %s", job.Target, fuzzTarget)
	}
	c := job.Closed
	if c == nil {
		t.Fatalf("a scenario job went through an agent that knows no scenarios: %+v", job)
	}
	control := func(r rune) bool { return r <= ' ' || r == 0x7f }
	if !strings.HasPrefix(c.Path, "/") || strings.ContainsFunc(c.Path, control) {
		t.Fatalf("path %q went through into a request line", c.Path)
	}
	if c.Connections > MaxConnections || c.Duration <= 0 || c.Duration > MaxDuration || c.Timeout > MaxTimeout {
		t.Fatalf("a closed loop of %d connections for %s (timeout %s) went through", c.Connections, c.Duration, c.Timeout)
	}
}

func withPath(j Job, p string) Job {
	c := *j.Closed
	c.Path, j.Closed = p, &c
	return j
}

func withTarget(j Job, target string) Job { j.Target = target; return j }

func withConns(j Job, n int) Job {
	c := *j.Closed
	c.Connections, j.Closed = n, &c
	return j
}

// answering is a transport that answers every call 200 with body.
type answering []byte

func (a answering) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK",
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(a)), Request: req}, nil
}

// FuzzShareAnswer hands the coordinator's client any bytes as an agent's 200 to a job: it
// takes the share json.Unmarshal reads, exactly, and refuses what json.Unmarshal refuses;
// and merging a share it took either fails or adds the share's histograms exactly (every
// response and every windowed value counted once).
func FuzzShareAnswer(f *testing.F) {
	good := sampleShare(f)
	b, _ := json.Marshal(good)
	f.Add(b)
	f.Add(append(append([]byte{}, b...), `{"tags":[]}`...))
	f.Add([]byte(`{"tags":[{"tag":"t","response_hist":"HISTFAAAACR42pNpmSzMwMDAxAABzFCaEUzOmSfAxgAAEdIBIg==",` +
		`"windows":[{"k":-3,"hist":""}]}]}`))
	ld := ClosedJob{Tag: "t", Path: "/", Connections: 1, Duration: time.Second}.Load()
	f.Fuzz(func(t *testing.T, body []byte) {
		r := &Remote{addr: "agent", scheme: "http", client: &http.Client{Transport: answering(body)}}
		share, err := r.Run(context.Background(), Job{})
		var want Share
		wantErr := json.Unmarshal(body, &want)
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("%q: the client says %v, json.Unmarshal %v", body, err, wantErr)
		}
		if err != nil {
			return
		}
		if !reflect.DeepEqual(*share, want) {
			t.Fatalf("%q: the client read %+v; json.Unmarshal %+v", body, *share, want)
		}
		m, err := Merge(ld, []*Share{share}, time.Unix(1_700_000_000, 0), time.Second)
		if err != nil {
			return
		}
		for i, tr := range m.Tags {
			var resp, windowed int64
			for _, st := range share.Tags {
				if st.Tag != tr.Tag {
					continue
				}
				resp += countOf(t, st.Response)
				for _, w := range st.Windows {
					windowed += countOf(t, w.Hist)
				}
			}
			var merged int64
			for _, iv := range m.Intervals {
				if iv.Tag == tr.Tag {
					merged += iv.Hist.TotalCount()
				}
			}
			if tr.Response.TotalCount() != resp || merged != windowed {
				t.Fatalf("tag %d %q: merged %d responses and %d windowed; the share holds %d and %d",
					i, tr.Tag, tr.Response.TotalCount(), merged, resp, windowed)
			}
		}
	})
}

func countOf(t *testing.T, enc string) int64 {
	h, err := results.DecodeHist(enc)
	if err != nil {
		t.Fatalf("a histogram the merge took does not decode: %v", err)
	}
	return h.TotalCount()
}

// sampleShare is a share of one tag with two windows, as an agent answers.
func sampleShare(f *testing.F) Share {
	h := results.NewHistogram()
	for _, v := range []int64{1_000, 2_000_000, 3_000_000_000} {
		_ = h.RecordValue(v)
	}
	enc, err := results.EncodeHist(h)
	if err != nil {
		f.Fatal(err)
	}
	return Share{Agent: Hello{Name: "a"}, Tags: []ShareTag{{TagStats: results.TagStats{Tag: "t", Sent: 3, Completed: 3},
		Response: enc, Service: enc, Windows: []ShareWindow{{K: 0, EndS: 1, Hist: enc}, {K: 1, EndS: 1.5, Hist: enc}}}}}
}
