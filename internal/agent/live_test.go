package agent

import (
	"context"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
)

// A recorder attached under a context's Live shows its windows there until it is detached;
// a context without one carries none.
func TestLiveShowsAttachedRecordersUntilDetached(t *testing.T) {
	if liveOf(context.Background()) != nil {
		t.Fatal("a bare context carries a Live")
	}
	live := &Live{}
	ctx := WithLive(context.Background(), live)
	if liveOf(ctx) != live {
		t.Fatal("the context does not carry its Live")
	}
	start := time.Unix(1000, 0)
	rec := load.NewRecorder(start, nil)
	detach := liveOf(ctx).attach(rec)
	rec.Record("a", start, start, start.Add(time.Millisecond), load.Outcome{Status: 200}, time.Second)
	if err := rec.Rotate(start.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	got := live.LastWindows()
	if len(got) != 1 || len(got[0]) != 1 || got[0][0].Tag != "a" || got[0][0].Window.Count != 1 {
		t.Fatalf("windows %+v: want one share's one window of tag a", got)
	}
	detach()
	if got := live.LastWindows(); len(got) != 0 {
		t.Fatalf("after detach: %+v, want no share", got)
	}
}
