package lab

import (
	"bytes"
	"context"
	"io"
	"sync"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/verify"
)

// A Verified is one contender's verify, as VerifyEach hands it over.
type Verified struct {
	Manifest *contender.Manifest
	Report   verify.Report
	Err      error // the context ended during it; the report is what it had
}

// VerifyEach verifies the built contenders (hashes[i] is ms[i]'s build), jobs of them at a
// time, and hands each to done in ms's order, whatever order they finish in. Verify is
// mostly waiting (a 10-s /delayed, slow clients, grace periods), so contenders verified side
// by side take about 1/jobs of the time; the checks hold their bounds with a neighbour on the
// server's CPUs, as they do on a busy CI machine. Each job's progress lines come out whole,
// each named by its contender.
func (l *Lab) VerifyEach(ctx context.Context, ms []*contender.Manifest, hashes []string, jobs int, logDir string, again bool,
	groups func(*contender.Manifest) []string, done func(Verified)) {
	lines := &lineWriter{w: l.Progress.writer()}
	inOrder(ctx, len(ms), jobs, func(i int) Verified {
		job := *l
		if jobs > 1 {
			job.Progress = NewProgress(lines.named(ms[i].Name))
		}
		rep, _, err := job.VerifyCached(ctx, ms[i], hashes[i], logDir, again, groups(ms[i]))
		return Verified{Manifest: ms[i], Report: rep, Err: err}
	}, done)
}

// inOrder runs run(0..n-1), jobs at a time, and hands each result to done in index order as
// soon as those before it are done. It starts nothing once ctx ends.
func inOrder[T any](ctx context.Context, n, jobs int, run func(int) T, done func(T)) {
	jobs = max(jobs, 1)
	var (
		mu       sync.Mutex
		finished = make([]*T, n)
		next     int // the first not yet handed to done
		slots    = make(chan struct{}, jobs)
		wg       sync.WaitGroup
	)
	for i := range n {
		slots <- struct{}{}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			r := run(i)
			mu.Lock()
			defer mu.Unlock()
			finished[i] = &r
			for next < n && finished[next] != nil {
				done(*finished[next])
				next++
			}
		}()
	}
	wg.Wait()
}

// writer is where the progress goes (nil: nowhere).
func (p *Progress) writer() io.Writer {
	if p == nil || p.w == nil {
		return io.Discard
	}
	return p.w
}

// lineWriter lets several jobs share one writer: each job's lines come out whole, each
// prefixed with its name.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (lw *lineWriter) named(name string) io.Writer {
	return &namedLines{lw: lw, prefix: []byte("[" + name + "] ")}
}

type namedLines struct {
	lw      *lineWriter
	prefix  []byte
	pending []byte
}

func (n *namedLines) Write(b []byte) (int, error) {
	n.pending = append(n.pending, b...)
	for {
		i := bytes.IndexByte(n.pending, '\n')
		if i < 0 {
			return len(b), nil
		}
		n.lw.mu.Lock()
		_, err := n.lw.w.Write(append(append([]byte{}, n.prefix...), n.pending[:i+1]...))
		n.lw.mu.Unlock()
		n.pending = n.pending[i+1:]
		if err != nil {
			return len(b), err
		}
	}
}
