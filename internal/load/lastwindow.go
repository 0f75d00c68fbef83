package load

import "github.com/arena-lab/arena/internal/results"

// LastWindow is a tag's latest closed window, as a live view reads it while the load runs.
type LastWindow struct {
	Tag string
	// K numbers the window from 0: windows that agents close at the same instants of one
	// agreed start carry the same K.
	K       int
	Seconds float64 // its length: the last one, cut at the load's end, may be short
	Window  results.Window
}

// LastWindows reads every tag's latest closed window (a tag with none yet is left out). It
// takes each tag's own lock for a moment, as Results does: a live view polls it once a second,
// and the engine's loops, which record into their cores' parts, never wait on it.
func (r *Recorder) LastWindows() []LastWindow {
	var out []LastWindow
	for _, name := range r.Tags() {
		t := r.tag(name)
		t.mu.Lock()
		if n := len(t.timeline); n > 0 {
			w := LastWindow{Tag: name, K: n - 1, Window: t.timeline[n-1], Seconds: t.timeline[n-1].T}
			if n > 1 {
				w.Seconds -= t.timeline[n-2].T
			}
			out = append(out, w)
		}
		t.mu.Unlock()
	}
	return out
}
