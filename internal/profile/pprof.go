package profile

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	pprof "github.com/google/pprof/profile"

	"github.com/arena-lab/arena/internal/results"
)

// pprofReader reads a Go contender's /debug/pprof/profile one second at a time from the
// load's start until its end: the endpoint profiles for a length it is told in advance,
// and a closed loop's length is not known in advance. The gaps between two reads are a
// request's round trip.
type pprofReader struct {
	addr  string
	stopc chan struct{}
	once  sync.Once
	done  chan struct{}

	mu       sync.Mutex
	profiles []*pprof.Profile
	err      error
}

var pprofClient = &http.Client{Timeout: 10 * time.Second}

func (r *pprofReader) start() {
	r.stopc, r.done = make(chan struct{}), make(chan struct{})
	go r.loop(r.stopc)
}

// stop ends the reads; the one under way, at most a second long, is kept: wait for it.
func (r *pprofReader) stop() {
	if r.stopc != nil {
		r.once.Do(func() { close(r.stopc) })
	}
}

func (r *pprofReader) wait() {
	if r.done != nil {
		<-r.done
	}
}

func (r *pprofReader) loop(stopc <-chan struct{}) {
	defer close(r.done)
	for failures := 0; failures < 5; {
		select {
		case <-stopc:
			return
		default:
		}
		p, err := r.read()
		r.mu.Lock()
		if err != nil {
			failures++
			if r.err == nil {
				r.err = err
			}
		} else {
			r.profiles = append(r.profiles, p)
		}
		r.mu.Unlock()
		if err != nil {
			select {
			case <-stopc:
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
}

func (r *pprofReader) read() (*pprof.Profile, error) {
	resp, err := pprofClient.Get("http://" + r.addr + "/debug/pprof/profile?seconds=1")
	if err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return nil, fmt.Errorf("pprof: %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return pprof.Parse(resp.Body)
}

// writePprof writes p to path in pprof's own format (gzipped protobuf).
func writePprof(path string, p *pprof.Profile) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := p.Write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fold merges the one-second profiles, writes them to path as one and folds them.
func (r *pprofReader) fold(path string) (results.Stacks, error) {
	if r == nil {
		return nil, errors.New("pprof: never started")
	}
	r.wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.profiles) == 0 {
		if r.err != nil {
			return nil, r.err
		}
		return nil, errors.New("pprof: no profile was read during the load")
	}
	merged, err := pprof.Merge(r.profiles)
	if err != nil {
		return nil, fmt.Errorf("pprof: merging %d profiles: %w", len(r.profiles), err)
	}
	if err := writePprof(path, merged); err != nil {
		return nil, err
	}
	return foldPprof(merged), r.err
}

// foldPprof collapses a CPU profile's samples (their count, the first value) into stacks,
// inlined calls as frames of their own.
func foldPprof(p *pprof.Profile) results.Stacks {
	stacks := results.Stacks{}
	for _, s := range p.Sample {
		if len(s.Value) == 0 || s.Value[0] == 0 {
			continue
		}
		var frames []string
		for i := len(s.Location) - 1; i >= 0; i-- { // Location[0] is the leaf
			loc := s.Location[i]
			for j := len(loc.Line) - 1; j >= 0; j-- { // Line[0] is the innermost inlined call
				if fn := loc.Line[j].Function; fn != nil {
					frames = append(frames, frameName(fn.Name))
				}
			}
			if len(loc.Line) == 0 {
				frames = append(frames, fmt.Sprintf("0x%x", loc.Address))
			}
		}
		if len(frames) > 0 {
			stacks[strings.Join(frames, ";")] += s.Value[0]
		}
	}
	return stacks
}
