package load

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/downstream"
	"github.com/arena-lab/arena/internal/results"
)

func TestAnswerCheckClassifiesByStatusThenLength(t *testing.T) {
	instant := Answer{Status: 200, Sized: true, Length: 7}
	for _, c := range []struct {
		want   Answer
		status int
		length int64
		kind   string
	}{
		{instant, 200, 7, ""},
		{instant, 503, 7, ErrStatus},
		{instant, 201, 7, ErrStatus}, // the contract says 200
		{instant, 200, 0, ErrBody},
		{instant, 200, 8, ErrBody},
		{instant, 500, 0, ErrStatus}, // the status first: it says more
		{Answer{}, 204, 0, ""},       // outside the contract: any 2xx, any length
		{Answer{}, 299, 1 << 30, ""},
		{Answer{}, 302, 0, ErrStatus},
		{Answer{}, 404, 9, ErrStatus},
		{unconfirmed, 200, 0, ErrBody}, // a length nothing has
		{unconfirmed, 200, 64, ErrBody},
	} {
		if got := c.want.Check(c.status, c.length); got != c.kind {
			t.Errorf("%+v.Check(%d, %d) = %q; want %q", c.want, c.status, c.length, got, c.kind)
		}
	}
}

// jsonServer answers /data/1 and the probes with body, counting the requests.
func jsonServer(t *testing.T, status int, body string) (addr string, asked *atomic.Int64) {
	asked = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String(), asked
}

// Text bodies are the contract's to the byte; a JSON path's length is each contender's,
// learned once from an answer that means the contract's document.
func TestAnswersFixTextsAndLearnEachContendersJSONOnce(t *testing.T) {
	var encoded strings.Builder
	var rec any
	_ = json.Unmarshal(downstream.Data1, &rec)
	enc := json.NewEncoder(&encoded)
	enc.SetIndent("", "  ")
	_ = enc.Encode(rec) // indented, and a trailing newline, as Go's encoder writes
	ctx := context.Background()
	for _, c := range []struct {
		name, body string
	}{{"compact", string(downstream.Data1)}, {"indented, a newline", encoded.String()}} {
		t.Run(c.name, func(t *testing.T) {
			addr, asked := jsonServer(t, 200, c.body)
			a := NewAnswers(addr)
			want := Answer{Status: 200, Sized: true, Length: int64(len(c.body))}
			for i := 0; i < 3; i++ {
				if got := a.For(ctx, Request{Path: "/data/1"}, time.Second).Want; got != want {
					t.Fatalf("/data/1 wants %+v; want %+v", got, want)
				}
			}
			if asked.Load() != 1 {
				t.Errorf("asked the target %d times; want once", asked.Load())
			}
			for path, want := range map[string]Answer{
				"/instant":          {Status: 200, Sized: true, Length: 7},
				"/delayed?ms=20":    {Status: 200, Sized: true, Length: 7},
				"/sleep?ms=5":       {Status: 200, Sized: true, Length: 5},
				"/":                 {},
				"/instantly":        {},
				"/resources/x.json": {},
			} {
				if got := a.For(ctx, Request{Path: path}, time.Second).Want; got != want {
					t.Errorf("%s wants %+v; want %+v", path, got, want)
				}
			}
			if got := a.For(ctx, Request{Method: "HEAD", Path: "/instant"}, time.Second).Want; got != (Answer{}) {
				t.Errorf("HEAD /instant wants %+v; want any 2xx (no body comes)", got)
			}
			if asked.Load() != 1 {
				t.Errorf("asked the target %d times; the text paths need no answer", asked.Load())
			}
		})
	}
}

// A learning answer that is wrong (empty, another document, a 503, none) leaves no length
// to trust: every answer on the path is then a body error, never a success.
func TestAnswersConfirmNothingFromAWrongLearningAnswer(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name, path string
		status     int
		body       string
	}{
		{"an empty 200", "/data/1", 200, ""},
		{"the other record", "/data/1", 200, string(downstream.Data2)},
		{"a probe that is down", "/actuator/health/readiness", 200, `{"status":"DOWN"}`},
		{"a 503 with the record", "/data/1", 503, string(downstream.Data1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, _ := jsonServer(t, c.status, c.body)
			w := NewAnswers(addr).For(ctx, Request{Path: c.path}, time.Second).Want
			for _, length := range []int64{0, int64(len(c.body)), int64(len(downstream.Data1))} {
				if kind := w.Check(200, length); kind != ErrBody {
					t.Errorf("a 200 of %d bytes checks %q; want %q", length, kind, ErrBody)
				}
			}
		})
	}
	t.Run("nobody listening", func(t *testing.T) {
		a := NewAnswers("127.0.0.1:1") // refused
		if w := a.For(ctx, Request{Path: "/actuator/health/liveness"}, time.Second).Want; w.Check(200, 15) != ErrBody {
			t.Errorf("no learning answer gives %+v; want nothing confirmed", w)
		}
	})
	addr, _ := jsonServer(t, 200, `{"status":"UP"}`)
	if w := NewAnswers(addr).For(ctx, Request{Path: "/actuator/health/liveness"}, time.Second).Want; w.Check(200, 15) != "" {
		t.Errorf("a probe's UP gives %+v; want 15 bytes confirmed", w)
	}
}

// Learning ahead (agent.RunJob, until the load's start) keeps what it learned for the
// load; what it could not finish by then is learned again when the load asks, not kept as
// wrong.
func TestAnswersLearnAheadAndAgainWhenCutShort(t *testing.T) {
	plan := func(paths ...string) Description {
		var d Description
		for _, p := range paths {
			d.Streams = append(d.Streams, results.StreamPlan{Path: p})
		}
		return d
	}
	want := Answer{Status: 200, Sized: true, Length: int64(len(downstream.Data2))}
	addr, asked := jsonServer(t, 200, string(downstream.Data2))
	a := NewAnswers(addr)
	a.Learn(context.Background(), plan("/data/2", "/instant"))
	if asked.Load() != 1 {
		t.Fatalf("learning ahead asked %d times; want once, for the JSON path", asked.Load())
	}
	over, cancel := context.WithCancel(context.Background())
	cancel()
	if got := a.For(over, Request{Path: "/data/2"}, time.Second).Want; got != want || asked.Load() != 1 {
		t.Errorf("/data/2 wants %+v after %d asks; want %+v learned ahead, once", got, asked.Load(), want)
	}

	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(100 * time.Millisecond)
		_, _ = w.Write(downstream.Data2)
	}))
	t.Cleanup(slow.Close)
	a = NewAnswers(slow.Listener.Addr().String())
	ahead, stop := context.WithTimeout(context.Background(), 20*time.Millisecond)
	a.Learn(ahead, plan("/data/2"))
	stop()
	if got := a.For(context.Background(), Request{Path: "/data/2"}, time.Second).Want; got != want {
		t.Errorf("/data/2 wants %+v after learning ahead was cut short; want %+v learned by the load", got, want)
	}
}
