package load

import (
	"sync"
	"testing"
	"time"
)

// Two cores record into parts of their own, concurrently, while windows close: the
// recorder's counts, histograms and timeline hold every attempt exactly once, as if one
// recorder had taken them all.
func TestCoreRecordersAddUpToOneRecorder(t *testing.T) {
	start := time.Now()
	rec := NewRecorder(start, nil)
	const perCore = 20000
	var wg sync.WaitGroup
	stop := make(chan struct{})
	rotated := make(chan struct{})
	go func() { // windows close while the cores record
		defer close(rotated)
		for k := 1; ; k++ {
			select {
			case <-stop:
				_ = rec.Rotate(start.Add(time.Duration(k) * time.Second))
				return
			default:
				_ = rec.Rotate(start.Add(time.Duration(k) * time.Second))
				time.Sleep(time.Millisecond)
			}
		}
	}()
	for core := 0; core < 2; core++ {
		ct := rec.Core().Tag("t")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perCore; i++ {
				a := Attempt{Lateness: 0, Response: time.Millisecond, Service: time.Millisecond, Out: Outcome{Status: 200}}
				switch i % 10 {
				case 1:
					a.Out = Outcome{Status: 503}
				case 2:
					a.Out = Outcome{ErrKind: ErrTimeout}
					a.Response, a.Service = time.Second, time.Second
				case 3:
					a.Out = Outcome{ErrKind: ErrRefused}
				case 4:
					a.Lateness, a.TakenUp = 5*time.Millisecond, 5*time.Millisecond // the client's own
				case 5:
					a.Lateness = 5 * time.Millisecond // waited for a connection
				case 6:
					a.Out = Outcome{Status: 200, ErrKind: ErrBody}
				}
				ct.Record(a, time.Millisecond)
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-rotated
	r := rec.Results()[0]
	const all = 2 * perCore
	if r.Sent != all || r.Completed != all*6/10 || r.Status["2xx"] != all*7/10 || r.Status["5xx"] != all/10 ||
		r.Errors[ErrTimeout] != all/10 || r.Errors[ErrRefused] != all/10 || r.Errors[ErrStatus] != all/10 || r.Errors[ErrBody] != all/10 {
		t.Fatalf("counts %+v: want %d sent, 80 %% answered (70 %% 2xx, 10 %% 5xx), 60 %% correctly; 10 %% each of status, body, timeout, refused", r.TagStats, all)
	}
	if r.Late != all*2/10 || r.ClientLate != all/10 || r.MaxLateMs != 5 {
		t.Fatalf("late %d, client late %d, max %.1f ms: want %d late, %d of them the client's, 5 ms", r.Late, r.ClientLate, r.MaxLateMs, all*2/10, all/10)
	}
	// Correct answers and timeouts have latencies; a wrong answer or a refusal has none
	// worth the name.
	if got := r.Response.TotalCount(); got != all*7/10 || r.Service.TotalCount() != got {
		t.Fatalf("%d response and %d service values: want %d", got, r.Service.TotalCount(), all*7/10)
	}
	var windowed, errs int64
	for _, w := range r.Timeline {
		windowed += w.Count
		errs += w.Errors
	}
	if windowed != all*7/10 || errs != all*4/10 {
		t.Fatalf("the windows hold %d values and %d errors: want %d and %d (each attempt in exactly one window)", windowed, errs, all*7/10, all*4/10)
	}
}

// The reference driver's pacer counts its own lateness through TakenUp.
func TestTakenUpCountsOnlyTheLate(t *testing.T) {
	rec := NewRecorder(time.Now(), nil)
	rec.TakenUp("t", time.Now(), time.Millisecond)
	rec.TakenUp("t", time.Now().Add(-10*time.Millisecond), time.Millisecond)
	if got := rec.Results()[0].ClientLate; got != 1 {
		t.Fatalf("client late %d: want 1 (one on time, one 10 ms late)", got)
	}
}
