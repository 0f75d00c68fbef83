package lab

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/arena-lab/arena/internal/results"
)

// Progress reports a run as it goes: steps (build, verify), then cells with an ETA. On a
// terminal a status line ticks every second, or with the live view (UseLive, live.go) a
// block of the load's streams and the server is redrawn in place; elsewhere (CI, a pipe)
// one line per event.
type Progress struct {
	w     io.Writer
	tty   bool
	live  bool // a running cell shows its live block (UseLive)
	total int
	est   time.Duration
	began time.Time
	done  int
	spent time.Duration
	mu    sync.Mutex // guards drawn, and the screen while a note makes way for the block
	drawn int        // lines of the live block on screen
}

// NewProgress writes to w (normally stderr).
func NewProgress(w io.Writer) *Progress {
	p := &Progress{w: w}
	if f, ok := w.(*os.File); ok {
		p.tty = term.IsTerminal(int(f.Fd()))
	}
	return p
}

// Step starts a named preparation step; Done or Fail ends it.
func (p *Progress) Step(name string) {
	if p.w == nil {
		return
	}
	if p.tty {
		fmt.Fprintf(p.w, "  %-40s ", name)
	} else {
		fmt.Fprintf(p.w, "  %s … ", name)
	}
}

// Note prints a remark about the step or cell under way.
func (p *Progress) Note(what string) {
	if p.w != nil {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.erase() // a live block makes way (it is drawn again below within a second)
		fmt.Fprintf(p.w, "        note: %s\n", what)
	}
}

func (p *Progress) Done(what string) {
	if p.w != nil {
		fmt.Fprintln(p.w, what)
	}
}

func (p *Progress) Fail(err error) {
	if p.w != nil {
		fmt.Fprintf(p.w, "FAILED\n    %s\n", strings.ReplaceAll(err.Error(), "\n", "\n    "))
	}
}

// Begin announces n cells of about est each.
func (p *Progress) Begin(n int, est time.Duration) {
	p.total, p.est, p.began = n, est, time.Now()
	p.done, p.spent = 0, 0 // a lab that runs several runs (a reproduction) begins each afresh
	if p.w != nil {
		fmt.Fprintf(p.w, "\n%d cell(s), about %s each: ETA %s\n", n, est.Round(time.Second), p.eta().Round(time.Second))
	}
}

// eta estimates what is left from the cells done so far (the plan's estimate before any).
func (p *Progress) eta() time.Duration {
	per := p.est
	if p.done > 0 {
		per = p.spent / time.Duration(p.done)
	}
	return per * time.Duration(p.total-p.done)
}

func (p *Progress) CellStart(i int, name string) {
	if p.w != nil {
		fmt.Fprintf(p.w, "[%d/%d] %s (ETA %s)\n", i+1, p.total, name, p.eta().Round(time.Second))
	}
}

func (p *Progress) CellDone(i int, c results.Cell) {
	p.done++
	p.spent = time.Since(p.began)
	if p.w == nil {
		return
	}
	var parts []string
	for _, t := range c.Tags {
		parts = append(parts, fmt.Sprintf("%s p99 %s", t.Tag, results.FormatMs(t.Response.P99)))
	}
	for _, name := range slices.Sorted(maps.Keys(c.Numbers)) {
		parts = append(parts, fmt.Sprintf("%s %.0f", name, c.Numbers[name]))
	}
	if c.Server.Summary.Samples > 0 {
		parts = append(parts, fmt.Sprintf("RSS max %.0f MB", c.Server.Summary.RSSMBMax))
	}
	status := c.Outcome.Status
	if c.Outcome.Status != results.OutcomeOK && c.Outcome.Detail != "" { // why, on the line that says it
		parts = append([]string{firstLine(c.Outcome.Detail)}, parts...)
	}
	if c.ClientBound {
		status += ", client-bound (" + c.ClientBoundWhy + ")" // why, so a flagged cell can be read without its results
	}
	if c.Outcome.Killed {
		status += ", killed after SIGTERM"
	}
	if len(c.Faults) > 0 {
		status += ", delivery faults (" + results.FormatFaults(c.Faults) + ")"
	}
	fmt.Fprintf(p.w, "        %s: %s\n", status, strings.Join(parts, ", "))
}

// Tick shows the cell's elapsed time against its plan on a terminal, until stopped.
func (p *Progress) Tick(start time.Time, planned time.Duration) (stop func()) {
	if !p.tty {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(p.w, "\r\033[K")
				return
			case <-t.C:
				fmt.Fprintf(p.w, "\r\033[K        %s", tickLine(time.Since(start), planned))
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

// tickLine is the load's elapsed time against its plan: a bar, then the two.
func tickLine(el, planned time.Duration) string {
	frac := min(float64(el)/float64(planned), 1)
	bar := strings.Repeat("█", int(frac*30)) + strings.Repeat("░", 30-int(frac*30))
	return fmt.Sprintf("%s %s / ~%s", bar, el.Round(time.Second), planned.Round(time.Second))
}
