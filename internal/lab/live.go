package lab

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/arena-lab/arena/internal/agent"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/probe"
	"github.com/arena-lab/arena/internal/results"
)

// LiveChoice is the user's word on the live view (arena run --live, --no-live).
type LiveChoice int

const (
	// LiveAuto shows it on a terminal, outside CI.
	LiveAuto LiveChoice = iota
	// LiveOn shows it on a terminal, under CI too.
	LiveOn
	// LiveOff prints a line per event, as on a pipe.
	LiveOff
)

// UseLive resolves, once, whether a running cell shows its live block: only on a terminal
// (a pipe or a file gets a line per event, which a redraw would garble), and with LiveAuto
// only outside CI; ci is $CI, which CI systems' runners set to true (set, and neither
// "false" nor "0", counts).
func (p *Progress) UseLive(choice LiveChoice, ci string) {
	underCI := ci != "" && ci != "false" && ci != "0"
	p.live = p.tty && (choice == LiveOn || (choice == LiveAuto && !underCI))
}

// liveRow is one stream's row: its last window, added over the shares that ran it.
type liveRow struct {
	tag      string
	perS     float64 // the window's correct answers a second
	p50, p99 float64 // ms from intended send times; with several shares, the highest share's
	// counts are the window's latencies, errors and timeouts added over the shares, read as
	// the findings read a cell: a timeout is a latency and an error, never an answer.
	counts results.Window
}

// errorPct is the share of the window's attempts that got no correct answer, each once.
func (r liveRow) errorPct() float64 {
	ratio, _ := r.counts.ErrorRatio()
	return ratio * 100
}

// minLiveWindow is the shortest window the view shows: the last one, cut at the load's end,
// may last milliseconds, over which a rate is noise.
const minLiveWindow = 0.5

// rowsOf adds the shares' latest windows into a row per tag (in the order the first share
// met them), when every share's latest window of a tag is the same window (agents close
// theirs at the same instants, but a poll may fall between two closings): ok is false then,
// or when a window is too short to show, and the view keeps what it showed.
func rowsOf(shares [][]load.LastWindow) (rows []liveRow, ok bool) {
	at := map[string]int{}
	k := map[string]int{}
	for _, share := range shares {
		for _, w := range share {
			if w.Seconds < minLiveWindow {
				return nil, false
			}
			i, seen := at[w.Tag]
			switch {
			case !seen:
				at[w.Tag], k[w.Tag] = len(rows), w.K
				rows = append(rows, liveRow{tag: w.Tag})
				i = len(rows) - 1
			case k[w.Tag] != w.K:
				return nil, false
			}
			r := &rows[i]
			r.perS += float64(w.Window.Answered()) / w.Seconds
			r.counts.Count += w.Window.Count
			r.counts.Errors += w.Window.Errors
			r.counts.Timeouts += w.Window.Timeouts
			r.p50, r.p99 = max(r.p50, w.Window.P50), max(r.p99, w.Window.P99)
		}
	}
	return rows, len(rows) > 0
}

// liveIndent lines the block up under the cell's line, as Tick's status line.
const liveIndent = "        "

// liveBlock is what a running cell shows: Tick's bar, a row per stream of the last window
// every share closed, the server's last probe sample. shares is how many shares the rows
// add; elsewhere, how many load agents run outside this process, whose windows come with
// their shares at the level's end.
func liveBlock(el, planned time.Duration, rows []liveRow, shares int, server *results.Sample, elsewhere int) []string {
	lines := []string{liveIndent + tickLine(el, planned)}
	star := ""
	if shares > 1 {
		star = "*"
	}
	switch {
	case elsewhere > 0:
		lines = append(lines, fmt.Sprintf("%s%d load agent(s) outside this process: each stream's figures come at the level's end", liveIndent, elsewhere))
	case len(rows) == 0:
		lines = append(lines, liveIndent+"streams: the first window closes a second into the load")
	default:
		lines = append(lines, fmt.Sprintf("%s%-12s %9s %10s %10s %8s", liveIndent, "stream", "req/s", "p50"+star, "p99"+star, "errors"))
		for _, r := range rows {
			p50, p99 := "-", "-" // nothing answered or timed out in the window: no latency, not a fast one
			if r.counts.Count > 0 {
				p50, p99 = results.FormatMs(r.p50), results.FormatMs(r.p99)
			}
			lines = append(lines, fmt.Sprintf("%s%-12s %9.0f %10s %10s %8s", liveIndent, r.tag, r.perS, p50, p99, results.FormatPct(r.errorPct())))
		}
		if shares > 1 {
			lines = append(lines, fmt.Sprintf("%s* the highest of %d agents' windows: percentiles of parts do not add", liveIndent, shares))
		}
	}
	if server != nil {
		lines = append(lines, fmt.Sprintf("%s%-12s CPU %.0f %%   RSS %.0f MB   threads %d", liveIndent, "server", server.CPUPct, server.RSSMB, server.Threads))
	}
	return lines
}

// liveFeed is what a running cell's block reads once a second.
type liveFeed struct {
	windows   *agent.Live  // the shares running in this process
	server    *probe.Probe // the server's tree
	elsewhere int          // load agents outside this process
}

// watch shows the cell's load as it runs until stopped: the live block when the live view
// is on, else Tick's status line (or nothing, off a terminal). The context it returns
// carries where the shares run in this process hand their windows.
func (l *Lab) watch(ctx context.Context, c cellPlan, start time.Time, server *probe.Probe) (context.Context, func()) {
	if !l.Progress.live {
		return ctx, l.Progress.Tick(start, c.level.Expected())
	}
	feed := liveFeed{windows: &agent.Live{}, server: server}
	if l.Agents != nil && l.Agents.Fleet != nil {
		for _, r := range l.Agents.Fleet.Runners {
			if _, here := r.(*agent.InProcess); !here {
				feed.elsewhere++
			}
		}
	}
	return agent.WithLive(ctx, feed.windows), l.Progress.showLive(start, c.level.Expected(), feed)
}

// showLive redraws the block every second until stopped, then erases it: the cell's
// result line takes its place.
func (p *Progress) showLive(start time.Time, planned time.Duration, feed liveFeed) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		var rows []liveRow
		shares := 0
		for {
			select {
			case <-done:
				p.mu.Lock()
				p.erase()
				p.mu.Unlock()
				return
			case <-t.C:
				ws := feed.windows.LastWindows()
				if r, ok := rowsOf(ws); ok {
					rows, shares = r, len(ws)
				}
				var last *results.Sample
				if s := feed.server.Samples(); len(s) > 0 {
					last = &s[len(s)-1]
				}
				p.draw(liveBlock(time.Since(start), planned, rows, shares, last, feed.elsewhere))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// draw replaces the block on screen with lines.
func (p *Progress) draw(lines []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.erase()
	fmt.Fprint(p.w, strings.Join(lines, "\n")+"\n")
	p.drawn = len(lines)
}

// erase removes the block drawn last, if any: up to its first line, and clear to the end of
// the screen. The caller holds p.mu.
func (p *Progress) erase() {
	if p.drawn > 0 {
		fmt.Fprintf(p.w, "\r\033[%dA\033[J", p.drawn)
		p.drawn = 0
	}
}
