package lab

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/creack/pty"

	"github.com/arena-lab/arena/internal/faulty"
	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
	"github.com/arena-lab/arena/internal/scenario"
)

// The block a running cell draws from its streams' last windows and the server's sample:
// the bar, a header, a row per stream (a stream with no answer in its window has no
// latency, not a fast one), the server's row.
func TestLiveBlockDrawsAStreamsRowAndTheServers(t *testing.T) {
	rows := []liveRow{
		{tag: "instant", perS: 4998.4, p50: 0.412, p99: 1.93, counts: results.Window{Count: 4998, Errors: 2}},
		{tag: "delayed", perS: 0},
	}
	server := &results.Sample{CPUPct: 143.2, RSSMB: 212.4, Threads: 41}
	got := liveBlock(20*time.Second, 40*time.Second, rows, 1, server, 0)
	want := []string{
		"        ███████████████░░░░░░░░░░░░░░░ 20s / ~40s",
		"        stream           req/s        p50        p99   errors",
		"        instant           4998    0.41 ms    1.93 ms   0.04 %",
		"        delayed              0          -          -      0 %",
		"        server       CPU 143 %   RSS 212 MB   threads 41",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("block:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Several agents' windows: their p50 and p99 are the highest agent's, and it says so.
	got = liveBlock(time.Second, 40*time.Second, rows[:1], 3, nil, 0)
	if !strings.Contains(got[1], "p50*") || !strings.Contains(got[len(got)-1], "the highest of 3 agents' windows") {
		t.Fatalf("several agents' block:\n%s", strings.Join(got, "\n"))
	}
	// Before the first window, and with agents elsewhere, it says why there is no row.
	if got := liveBlock(0, time.Second, nil, 0, nil, 0); len(got) != 2 || !strings.Contains(got[1], "first window") {
		t.Fatalf("before any window: %q", got)
	}
	if got := liveBlock(0, time.Second, rows, 1, server, 2); len(got) != 3 || !strings.Contains(got[1], "2 load agent(s) outside this process") {
		t.Fatalf("agents elsewhere: %q", got)
	}
}

// Shares' windows add into one row per stream when they are the same window: answers a
// second and errors summed, the highest p99; a poll that falls between two agents'
// closings, or on the last short window, shows nothing new.
func TestRowsOfAddsTheSharesSameWindow(t *testing.T) {
	win := func(tag string, k int, secs float64, count, errs int64, p99 float64) load.LastWindow {
		return load.LastWindow{Tag: tag, K: k, Seconds: secs, Window: results.Window{Count: count, Errors: errs, P50: p99 / 2, P99: p99}}
	}
	rows, ok := rowsOf([][]load.LastWindow{
		{win("a", 3, 1, 100, 1, 2.0), win("b", 3, 1, 10, 0, 9.0)},
		{win("a", 3, 1, 120, 0, 5.0)},
	})
	if !ok || len(rows) != 2 || rows[0].tag != "a" || rows[0].perS != 220 || rows[0].counts.Errors != 1 || rows[0].p99 != 5 || rows[1].tag != "b" {
		t.Fatalf("rows %+v (%v): want a at 220/s with 1 error and p99 5 ms, then b", rows, ok)
	}
	if _, ok := rowsOf([][]load.LastWindow{{win("a", 3, 1, 100, 0, 2)}, {win("a", 4, 1, 100, 0, 2)}}); ok {
		t.Fatal("windows 3 and 4 added as one")
	}
	if _, ok := rowsOf([][]load.LastWindow{{win("a", 9, 0.01, 1, 0, 2)}}); ok {
		t.Fatal("a 10 ms window shown as a rate")
	}
	if _, ok := rowsOf(nil); ok {
		t.Fatal("no share, yet rows")
	}
}

// A window's timeouts read as the findings read them: waits in the latency, failures in the
// errors once, never answers. Two shares of 100 latencies, 10 of them timeouts, and 5 refused
// connections: 180 answers a second, 25 of 205 attempts failed (12.2 %), and the timeouts'
// p99 shown; not 200/s and 25 of 225.
func TestRowsOfCountsTimeoutsAsFailuresOnce(t *testing.T) {
	share := func(refused int64) []load.LastWindow {
		return []load.LastWindow{{Tag: "a", K: 2, Seconds: 1, Window: results.Window{Count: 100, Errors: 10 + refused, Timeouts: 10, P50: 3, P99: 1000}}}
	}
	rows, ok := rowsOf([][]load.LastWindow{share(5), share(0)})
	if !ok || len(rows) != 1 {
		t.Fatalf("rows %+v (%v)", rows, ok)
	}
	if r := rows[0]; r.perS != 180 || results.FormatPct(r.errorPct()) != "12.2 %" {
		t.Errorf("%v answers/s, %s errors; want 180 and 12.2 %%", r.perS, results.FormatPct(r.errorPct()))
	}
	// A window of timeouts alone: no answer, every attempt failed, and their wait is the latency.
	rows, _ = rowsOf([][]load.LastWindow{{{Tag: "a", Seconds: 1, Window: results.Window{Count: 4, Errors: 4, Timeouts: 4, P50: 1000, P99: 1000}}}})
	got := liveBlock(time.Second, 2*time.Second, rows, 1, nil, 0)
	if want := "        a                    0     1.00 s     1.00 s  100.0 %"; got[2] != want {
		t.Errorf("a window of timeouts alone:\n%q\nwant\n%q", got[2], want)
	}
}

// The live view only ever shows on a terminal; on one, auto shows it outside CI, on shows it
// under CI too, and off never.
func TestUseLiveResolvesTheChoiceOnce(t *testing.T) {
	for _, tt := range []struct {
		tty    bool
		choice LiveChoice
		ci     string
		want   bool
	}{
		{true, LiveAuto, "", true},
		{true, LiveAuto, "true", false},
		{true, LiveAuto, "1", false},
		{true, LiveAuto, "false", true},
		{true, LiveOn, "true", true},
		{true, LiveOff, "", false},
		{false, LiveAuto, "", false},
		{false, LiveOn, "", false},
	} {
		p := &Progress{tty: tt.tty}
		p.UseLive(tt.choice, tt.ci)
		if p.live != tt.want {
			t.Errorf("tty %v, choice %d, CI=%q: live %v, want %v", tt.tty, tt.choice, tt.ci, p.live, tt.want)
		}
	}
}

// A real cell (the lab's reference servers as a contender, the readiness probe at 20/s for
// 4 s on the engine) with its progress on a pseudo-terminal: with the live view, the screen
// shows the stream's row with its requests/s and the server's row while the load runs, and
// the block is gone when the cell ends; under CI, neither row is ever drawn, and the status
// line ticks as it did before the live view. About 9 s.
func TestLiveViewUnderAPseudoTerminal(t *testing.T) {
	short(t)
	stream := regexp.MustCompile(`^\s+ready\s+(\d+)\s+\S+ m?s\s+\S+ m?s\s+\S+ %$`)
	server := regexp.MustCompile(`^\s+server\s+CPU \d+ %\s+RSS \d+ MB\s+threads \d+$`)
	for _, ci := range []string{"", "true"} {
		seen, final, raw := cellOnATerminal(t, ci)
		var rates []int
		servers := 0
		for _, row := range seen {
			if m := stream.FindStringSubmatch(row); m != nil {
				n, _ := strconv.Atoi(m[1])
				rates = append(rates, n)
			}
			if server.MatchString(row) {
				servers++
			}
		}
		t.Logf("CI=%q: stream rows' requests/s %v, %d server rows; final screen:\n%s", ci, rates, servers, strings.Join(final, "\n"))
		if ci != "" {
			if len(rates) > 0 || servers > 0 {
				t.Errorf("CI=%q: live rows drawn (%v, %d server rows)", ci, rates, servers)
			}
			if !strings.Contains(string(raw), "\r\033[K        ") || !strings.Contains(string(raw), " / ~") {
				t.Errorf("CI=%q: no status line as before the live view: %q", ci, raw)
			}
			continue
		}
		t.Logf("rows drawn:\n%s", strings.Join(seen, "\n"))
		if len(rates) == 0 || servers == 0 {
			t.Fatalf("no live rows on the terminal: stream %v, %d server rows; rows seen:\n%s", rates, servers, strings.Join(seen, "\n"))
		}
		if !slicesHasAbove(rates, 0) {
			t.Errorf("the stream's rows show no requests/s: %v", rates)
		}
		for _, row := range final {
			if stream.MatchString(row) || server.MatchString(row) {
				t.Errorf("the block is left on the screen after the cell: %q", row)
			}
		}
	}
}

func slicesHasAbove(v []int, floor int) bool {
	for _, n := range v {
		if n > floor {
			return true
		}
	}
	return false
}

// cellOnATerminal runs one cell with the lab's progress on a pseudo-terminal, the live view
// left to decide with $CI as ci, and returns every row the terminal was given to show and
// its screen at the end, and the bytes it was given.
func cellOnATerminal(t *testing.T, ci string) (seen, final []string, raw []byte) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	out := make(chan []byte, 1)
	go func() {
		var b bytes.Buffer
		_, _ = io.Copy(&b, ptmx) // ends with EIO once the terminal's side is closed
		out <- b.Bytes()
	}()
	l := testLab(t, nil)
	l.Progress = NewProgress(tty)
	l.Progress.UseLive(LiveAuto, ci)
	level := scenario.Level{Name: "ready", Load: readiness(4 * time.Second)}
	cell := l.runCell(context.Background(), cellPlan{m: wrapped(t, faulty.None), level: level, repeat: 1}, cellDir(t), 0)
	tty.Close()
	if cell.Outcome.Status != results.OutcomeOK {
		t.Fatalf("CI=%q: the cell ended %+v", ci, cell.Outcome)
	}
	select {
	case raw = <-out:
	case <-time.After(10 * time.Second):
		t.Fatal("the terminal's output did not end")
	}
	var s screen
	s.feed(raw)
	return s.seen, s.rows, raw
}

// screen is the little of a terminal the progress uses: text, \r, \n, and the CSI sequences
// K (clear to the line's end), A (cursor up) and J (clear to the screen's end). seen keeps
// every row as it stood when the cursor left it by a newline: what was shown, even if
// erased since.
type screen struct {
	rows     []string
	row, col int
	seen     []string
}

func (s *screen) line() []rune {
	for len(s.rows) <= s.row {
		s.rows = append(s.rows, "")
	}
	return []rune(s.rows[s.row])
}

func (s *screen) feed(b []byte) {
	for len(b) > 0 {
		if b[0] == 0x1b && len(b) > 1 && b[1] == '[' {
			end := 2
			for end < len(b) && (b[end] >= '0' && b[end] <= '9' || b[end] == ';') {
				end++
			}
			if end == len(b) {
				return
			}
			n, err := strconv.Atoi(string(b[2:end]))
			if err != nil {
				n = 1
			}
			s.csi(b[end], n)
			b = b[end+1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		switch r {
		case '\r':
			s.col = 0
		case '\n':
			s.seen = append(s.seen, string(s.line()))
			s.row++
			s.line()
		default:
			ln := s.line()
			for len(ln) <= s.col {
				ln = append(ln, ' ')
			}
			ln[s.col] = r
			s.rows[s.row] = string(ln)
			s.col++
		}
	}
}

func (s *screen) csi(final byte, n int) {
	ln := s.line()
	switch final {
	case 'K':
		s.rows[s.row] = string(ln[:min(s.col, len(ln))])
	case 'A':
		s.row = max(s.row-n, 0)
	case 'J':
		s.rows[s.row] = string(ln[:min(s.col, len(ln))])
		s.rows = s.rows[:s.row+1]
	}
}
