package load

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/arena-lab/arena/internal/downstream"
	"github.com/arena-lab/arena/internal/postgres"
)

// An Answer is what a response must be to count as correct: its status, and the length of
// its body where the contract fixes it. A load measures correct answers only; a fast 503 or
// an empty 200 is an error of its own kind (ErrStatus, ErrBody), never a fast success. The
// zero Answer, any 2xx of any length, is what a path outside the contract is held to.
type Answer struct {
	Status int  // the status expected; 0: any 2xx
	Sized  bool // the body's length is fixed: Length bytes
	Length int64
}

// Check classifies a response by its status and its body's length (Content-Length, the sum
// of its chunks, or the bytes until the server closed): "" when correct, else ErrStatus or
// ErrBody. Integer compares only: the engine's loops call it once a response.
func (a Answer) Check(status int, length int64) string {
	if a.Status == 0 && (status < 200 || status > 299) || a.Status != 0 && status != a.Status {
		return ErrStatus
	}
	if a.Sized && length != a.Length {
		return ErrBody
	}
	return ""
}

// unconfirmed is the answer on a JSON path whose learning answer was wrong or missing: no
// length is known to be right, so a 200 there is a body error rather than a success that
// nothing checked. (No body has a negative length.)
var unconfirmed = Answer{Status: http.StatusOK, Sized: true, Length: -1}

// contractBody is how the contract fixes one path's body: a text to the byte, or a JSON
// document whose meaning is fixed and whose bytes are each contender's (spacing, a trailing
// newline), learned from one answer checked for its meaning.
type contractBody struct {
	text string
	json func([]byte) error
}

// contract is the answer of every path of /work/shared/CONTRACT.md a load sends, by path
// without its query; every one is 200.
var contract = map[string]contractBody{
	"/instant":                   {text: "INSTANT"},
	"/delayed":                   {text: "DELAYED"},
	"/sleep":                     {text: "SLEPT"},
	"/actuator/health/liveness":  {json: StatusUP},
	"/actuator/health/readiness": {json: StatusUP},
	"/data/1":                    {json: SameJSON(downstream.Data1)},
	"/data/2":                    {json: SameJSON(downstream.Data2)},
	"/resources/data1.json":      {json: SameJSON(downstream.Data1)},
	"/resources/data2.json":      {json: SameJSON(downstream.Data2)},
}

// contractOf is the contract's body on r, when r is a GET of one of its paths.
func contractOf(r Request) (contractBody, bool) {
	if r.Method != "" && r.Method != http.MethodGet {
		return contractBody{}, false
	}
	path, _, _ := strings.Cut(r.Path, "?")
	if b, ok := contract[path]; ok {
		return b, true
	}
	return dbContractOf(path)
}

// dbContractOf is the db feature's answer on path (contenders/README.md, "Database"): the
// data set's row as JSON on /db/{id}, SLEPT on /db/slow. A stream over many ids learns its
// first path's, which every id of as many digits matches in length (postgres.JSON).
func dbContractOf(path string) (contractBody, bool) {
	rest, ok := strings.CutPrefix(path, "/db/")
	if !ok {
		return contractBody{}, false
	}
	if rest == "slow" {
		return contractBody{text: "SLEPT"}, true
	}
	id, err := strconv.Atoi(rest)
	if err != nil || id < 1 || id > postgres.MaxRows || strconv.Itoa(id) != rest {
		return contractBody{}, false
	}
	return contractBody{json: SameJSON(postgres.JSON(id))}, true
}

// SameJSON checks that a body means the JSON document want, however it is spaced.
func SameJSON(want []byte) func([]byte) error {
	var exp any
	if err := json.Unmarshal(want, &exp); err != nil {
		panic(fmt.Sprintf("SameJSON(%q): %v", want, err)) // the contract's own documents
	}
	return func(b []byte) error {
		var got any
		if err := json.Unmarshal(b, &got); err != nil {
			return fmt.Errorf("body %q is not JSON: %v", clip(b), err)
		}
		if !reflect.DeepEqual(got, exp) {
			return fmt.Errorf("body %s, want %s", clip(b), want)
		}
		return nil
	}
}

// StatusUP checks that a body is a probe's {"status":"UP"}.
func StatusUP(b []byte) error {
	var v struct{ Status string }
	if err := json.Unmarshal(b, &v); err != nil || v.Status != "UP" {
		return fmt.Errorf(`body %q, want {"status":"UP"}`, clip(b))
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// Answers are the answers a load expects from one target: the contract's on the paths it
// fixes, learned once from the target on its JSON paths, any 2xx elsewhere. Every load of
// a job shares one (a Steady load's windows, its measurement), so that a path is learned
// once, before the load. Safe for concurrent use.
type Answers struct {
	addr    string
	mu      sync.Mutex
	learned map[string]Answer // by path as sent
}

// NewAnswers learns from addr ("127.0.0.1:8080").
func NewAnswers(addr string) *Answers {
	return &Answers{addr: addr, learned: map[string]Answer{}}
}

// learnTimeout bounds the one request a JSON path is learned from when the load has no
// timeout of its own.
const learnTimeout = 10 * time.Second

// For is r with the answer it expects.
func (a *Answers) For(ctx context.Context, r Request, timeout time.Duration) Request {
	r.Want = a.answer(ctx, r, timeout)
	return r
}

// Learn learns the answers of d's streams ahead of the load, until ctx ends: what is not
// learned by then is learned when the load asks for it.
func (a *Answers) Learn(ctx context.Context, d Description) {
	for _, s := range d.Streams {
		if ctx.Err() != nil {
			return
		}
		a.answer(ctx, Request{Path: s.Path}, d.Timeout)
	}
}

func (a *Answers) answer(ctx context.Context, r Request, timeout time.Duration) Answer {
	body, ok := contractOf(r)
	switch {
	case !ok:
		return Answer{}
	case body.json == nil:
		return Answer{Status: http.StatusOK, Sized: true, Length: int64(len(body.text))}
	}
	a.mu.Lock()
	w, ok := a.learned[r.Path]
	a.mu.Unlock()
	if ok {
		return w
	}
	w, err := a.learn(ctx, r.Path, body.json, timeout)
	if err != nil && ctx.Err() != nil {
		return unconfirmed // cut short, not answered wrong: the next ask learns it again
	}
	a.mu.Lock()
	a.learned[r.Path] = w
	a.mu.Unlock()
	return w
}

// learn asks the target for path once and takes the length of its body as every later
// answer's, when the body means what the contract says; else every 200 there is an error.
// The client sends no Accept-Encoding, as the engine does not: the length is the one the
// engine will see.
func (a *Answers) learn(ctx context.Context, path string, means func([]byte) error, timeout time.Duration) (Answer, error) {
	if timeout <= 0 {
		timeout = learnTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+a.addr+path, nil)
	if err != nil {
		return unconfirmed, err
	}
	client := http.Client{Transport: &http.Transport{DisableKeepAlives: true, DisableCompression: true}}
	resp, err := client.Do(req)
	if err != nil {
		return unconfirmed, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return unconfirmed, err
	case resp.StatusCode != http.StatusOK:
		return unconfirmed, fmt.Errorf("%s answered %d", path, resp.StatusCode)
	}
	if err := means(b); err != nil {
		return unconfirmed, fmt.Errorf("%s: %w", path, err)
	}
	return Answer{Status: http.StatusOK, Sized: true, Length: int64(len(b))}, nil
}
