package agent

import (
	"context"
	"slices"
	"sync"

	"github.com/arena-lab/arena/internal/load"
)

// Live is where a live view reads the windows of the shares this process runs, while they
// run: RunJob adds its recorder when the share's load begins and takes it off when the load
// ends. Reading costs the load nothing per request: the view polls each recorder's latest
// closed window once a second (load.Recorder.LastWindows). Only shares in this process show
// here: an agent behind HTTP (another process, another host) runs under its request's
// context, and its windows reach the coordinator with its share, at the level's end.
type Live struct {
	mu   sync.Mutex
	recs []*load.Recorder
}

type liveKey struct{}

// WithLive is ctx carrying live: every share RunJob runs under it hands its windows there.
func WithLive(ctx context.Context, live *Live) context.Context {
	return context.WithValue(ctx, liveKey{}, live)
}

// liveOf is the Live ctx carries, or nil.
func liveOf(ctx context.Context) *Live {
	l, _ := ctx.Value(liveKey{}).(*Live)
	return l
}

// attach shows rec's windows until detach is called.
func (l *Live) attach(rec *load.Recorder) (detach func()) {
	l.mu.Lock()
	l.recs = append(l.recs, rec)
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		if i := slices.Index(l.recs, rec); i >= 0 {
			l.recs = slices.Delete(l.recs, i, i+1)
		}
	}
}

// LastWindows is every running share's latest closed windows, a list per share (none
// before a share's load has begun, or after it has ended).
func (l *Live) LastWindows() [][]load.LastWindow {
	l.mu.Lock()
	recs := slices.Clone(l.recs)
	l.mu.Unlock()
	out := make([][]load.LastWindow, 0, len(recs))
	for _, r := range recs {
		out = append(out, r.LastWindows())
	}
	return out
}
