package lab

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/arena-lab/arena/internal/contender"
)

// pollEvery is how often the watchdog asks a contender for its readiness: at most once a
// second, so that it adds nothing the load would notice.
const pollEvery = time.Second

// watchdog polls a contender's readiness while a cell runs, one request at a time, and notes
// when the contender last answered before it went silent for longer than its limit
// (results.SilenceLimit): then it is unresponsive, though its process lives on. Any answer,
// of any status, counts: a contender that says it is not ready still answers.
type watchdog struct {
	stop context.CancelFunc
	done chan struct{}
	mu   sync.Mutex
	// silentSince is when the contender last answered before its silence passed the limit;
	// zero while it answers.
	silentSince time.Time
}

// watch starts a watchdog on the contender at addr; onSilent is told once, when the silence
// passes limit.
func watch(addr string, limit time.Duration, onSilent func(since time.Time)) *watchdog {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchdog{stop: cancel, done: make(chan struct{})}
	go w.loop(ctx, "http://"+addr+contender.ReadinessPath, limit, onSilent)
	return w
}

func (w *watchdog) loop(ctx context.Context, url string, limit time.Duration, onSilent func(time.Time)) {
	defer close(w.done)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	answered := time.Now()
	for {
		began := time.Now()
		if answers(ctx, client, url, limit) {
			answered = time.Now()
		} else if ctx.Err() == nil && time.Since(answered) >= limit && w.noteSilence(answered) {
			onSilent(answered)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollEvery - time.Since(began)):
		}
	}
}

// answers asks once, waiting up to limit: a poll still waiting is silence too.
func answers(ctx context.Context, client *http.Client, url string, limit time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return true
}

// noteSilence keeps the first silence; false when one was noted already.
func (w *watchdog) noteSilence(since time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.silentSince.IsZero() {
		return false
	}
	w.silentSince = since
	return true
}

// Stop ends the polling and says when the contender last answered before it went silent
// for longer than the limit, if it did.
func (w *watchdog) Stop() (since time.Time, silent bool) {
	w.stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.silentSince, !w.silentSince.IsZero()
}
