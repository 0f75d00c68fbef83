package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/load/engine"
	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/results"
)

// A Resolver finds the load a job names: the scenario planned with the job's options, the
// level, its load or warm-up. cmd/agent.go gives the scenarios' registry; tests give loads.
type Resolver func(Job) (load.Load, error)

// probePeriod samples the agent's own CPU as the lab samples its client.
const probePeriod = 250 * time.Millisecond

// RunJob runs job's share of its load: it waits for the agreed start (refusing the job when
// it is already later than Slack), drives the target with the windows of the timeline on
// the agreed clock, and returns what it measured. Both the HTTP agent and the in-process one
// run jobs here, so a share is measured the same way wherever it runs.
func RunJob(ctx context.Context, job Job, resolve Resolver, self Hello) (*Share, error) {
	ld, err := resolve(job)
	if err != nil {
		return nil, err
	}
	share, err := load.ShareOf(ld, job.Part, job.Parts)
	if err != nil {
		return nil, err
	}
	interval := job.Interval
	if interval <= 0 {
		interval = time.Second
	}
	start := job.Start.Add(job.Offset) // the agreed start on this agent's clock
	// The contract's answers on the load's JSON paths are learned from the target while the
	// start is awaited (an open loop's schedule cannot wait for them); what is not learned by
	// then, the load learns itself.
	answers := load.NewAnswers(job.Target)
	learnCtx, stopLearning := context.WithDeadline(ctx, start)
	answers.Learn(learnCtx, share.Describe())
	stopLearning()
	if wait := time.Until(start); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	late := time.Since(start)
	if late > job.Slack {
		return nil, fmt.Errorf("agent %s could begin only %s after the agreed start (slack %s): the level is aborted rather than its schedule shifted",
			self.Name, late.Round(time.Microsecond), job.Slack)
	}
	sink := &windowSink{start: start, interval: interval}
	rec := load.NewRecorder(start, sink)
	if live := liveOf(ctx); live != nil {
		defer live.attach(rec)() // a live view polls its closed windows (live.go)
	}
	eng, err := kept.take(job.Target)
	if err != nil {
		return nil, err
	}
	defer kept.after(job, eng)
	me := probe.StartAlone(os.Getpid(), start, probePeriod)
	stopRotate := rotateAligned(rec, sink, start, interval)
	figs, runErr := share.Run(ctx, load.Target{Addr: job.Target, Driver: eng, Start: start, Answers: answers}, rec)
	stopRotate()
	out := &Share{Agent: self, BeganLate: late, Elapsed: time.Since(start), Client: me.Stop()}
	if runErr != nil {
		out.Err = runErr.Error()
	}
	for _, t := range rec.Results() {
		st := ShareTag{TagStats: t.TagStats, Windows: sink.of(t.Tag)}
		if len(st.Windows) == len(t.Timeline) { // one timeline window per sink call, in order
			for i := range st.Windows {
				st.Windows[i].Errors, st.Windows[i].Timeouts = t.Timeline[i].Errors, t.Timeline[i].Timeouts
			}
		}
		if st.Response, err = results.EncodeHist(t.Response); err != nil {
			return nil, err
		}
		if st.Service, err = results.EncodeHist(t.Service); err != nil {
			return nil, err
		}
		out.Tags = append(out.Tags, st)
	}
	if figs != nil {
		out.figures = figs
		out.FiguresKind = figs.Kind()
		if out.Figures, err = json.Marshal(figs); err != nil {
			return nil, fmt.Errorf("figures %s: %w", figs.Kind(), err)
		}
	}
	return out, nil
}

// kept holds the engines warm-ups left, per target, for the next job to the same one: a
// level's warm-up hands its idle connections to its load in every placement, as on one
// machine, so no share's first requests pay for connects the warm-up already paid. A load
// closes its connections when it ends, so the server stops with none of the agent's open.
var kept = keptEngines{byTarget: map[string][]*engine.Engine{}}

// maxKept bounds the engines kept for one target: as many as agents run in one process.
const maxKept = 16

type keptEngines struct {
	mu       sync.Mutex
	byTarget map[string][]*engine.Engine
}

// take returns a kept engine for target, or a new one; it first closes the engines kept
// for any other target, so an agent holds connections to one server at a time. Jobs that
// run at once each take an engine of their own.
func (k *keptEngines) take(target string) (*engine.Engine, error) {
	k.mu.Lock()
	for t, engs := range k.byTarget {
		if t != target {
			closeAll(engs)
			delete(k.byTarget, t)
		}
	}
	if engs := k.byTarget[target]; len(engs) > 0 {
		e := engs[len(engs)-1]
		k.byTarget[target] = engs[:len(engs)-1]
		k.mu.Unlock()
		return e, nil
	}
	k.mu.Unlock()
	return engine.New(target, engine.Options{})
}

// after keeps a warm-up's engine for the job that follows it, and closes a load's.
func (k *keptEngines) after(job Job, e *engine.Engine) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if job.Warmup < 0 || len(k.byTarget[job.Target]) >= maxKept {
		e.Close()
		return
	}
	k.byTarget[job.Target] = append(k.byTarget[job.Target], e)
}

func closeAll(engs []*engine.Engine) {
	for _, e := range engs {
		e.Close()
	}
}

// rotateAligned closes the recorder's windows at start + k·interval, the same instants on
// every agent, and once more when stopped.
func rotateAligned(rec *load.Recorder, sink *windowSink, start time.Time, interval time.Duration) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTimer(time.Hour)
		defer t.Stop()
		for k := 0; ; k++ {
			end := start.Add(time.Duration(k+1) * interval)
			t.Reset(time.Until(end))
			select {
			case <-t.C:
				sink.at(k, end)
				_ = rec.Rotate(end) // a sink error loses a window, never the load
			case <-done:
				now := time.Now()
				sink.at(k, now)
				_ = rec.Rotate(now)
				return
			}
		}
	}()
	return func() { close(done); <-finished }
}

// windowSink keeps each window's histogram, encoded, under the index the rotation gives it.
type windowSink struct {
	start    time.Time
	interval time.Duration
	mu       sync.Mutex
	k        int
	end      time.Time
	windows  map[string][]ShareWindow
}

func (s *windowSink) at(k int, end time.Time) {
	s.mu.Lock()
	s.k, s.end = k, end
	s.mu.Unlock()
}

// Interval keeps one tag's closed window. Rotate calls it once per tag with the window's
// histogram; its errors are counted from the timeline the recorder keeps beside it.
func (s *windowSink) Interval(tag string, h *hdrhistogram.Histogram) error {
	enc, err := results.EncodeHist(h)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.windows == nil {
		s.windows = map[string][]ShareWindow{}
	}
	s.windows[tag] = append(s.windows[tag], ShareWindow{K: s.k, EndS: s.end.Sub(s.start).Seconds(), Hist: enc})
	return nil
}

// of is tag's windows.
func (s *windowSink) of(tag string) []ShareWindow {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ShareWindow(nil), s.windows[tag]...)
}
