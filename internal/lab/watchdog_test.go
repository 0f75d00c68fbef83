package lab

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The watchdog counts any answer, a 503 included, and notes when the contender last
// answered once it has been silent for longer than the limit: once, however long the
// silence lasts.
func TestWatchdogNotesASilence(t *testing.T) {
	var polls atomic.Int64
	var silent atomic.Bool
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if silent.Load() {
			<-hang // a frozen server: the request waits
			return
		}
		polls.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable) // not ready is still an answer
	}))
	defer srv.Close()
	defer close(hang) // before the server's Close, which waits for its handlers
	noted := make(chan time.Time, 2)
	dog := watch(strings.TrimPrefix(srv.URL, "http://"), 1500*time.Millisecond, func(since time.Time) { noted <- since })
	eventually(t, "two answered polls", 10*time.Second, func() bool { return polls.Load() >= 2 })
	froze := time.Now()
	silent.Store(true)
	var since time.Time
	select {
	case since = <-noted:
	case <-time.After(10 * time.Second):
		t.Fatal("no silence noted within 10 s")
	}
	if took := time.Since(froze); took < 1500*time.Millisecond-pollEvery {
		t.Errorf("silence noted %s after the freeze, before the limit", took)
	}
	got, wasSilent := dog.Stop()
	if !wasSilent || !got.Equal(since) || got.After(froze) || froze.Sub(got) > 2*pollEvery {
		t.Fatalf("Stop: since %s (silent %v); want the last answer, just before the freeze at %s", got, wasSilent, froze)
	}
	select {
	case again := <-noted:
		t.Errorf("the silence was noted twice (%s)", again)
	default:
	}
}

// A slow answer is an answer: polls that each take a while, over longer than the limit in all,
// are no silence.
func TestWatchdogQuietWhileAnswered(t *testing.T) {
	var polls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(300 * time.Millisecond)
		polls.Add(1)
	}))
	defer srv.Close()
	dog := watch(strings.TrimPrefix(srv.URL, "http://"), time.Second, func(time.Time) {})
	eventually(t, "three answered polls, over twice the limit", 20*time.Second, func() bool { return polls.Load() >= 3 })
	if _, silent := dog.Stop(); silent {
		t.Fatal("silent while answering")
	}
}
