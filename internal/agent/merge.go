package agent

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/results"
)

// Merged is the shares of one load as one client would have recorded them: histograms of a
// tag added (never percentiles averaged), counters summed, windows of the same instant added.
type Merged struct {
	Tags []load.TagResult
	// Intervals are the merged windows, per tag in time order, each histogram stamped with
	// its absolute start and end: what the cell's .hlog holds.
	Intervals []Interval
	Figures   results.Figures
	// Errs are the shares' own errors (a share that could not run), by agent.
	Errs []string
}

// Interval is one tag's merged window.
type Interval struct {
	Tag  string
	Hist *hdrhistogram.Histogram
}

// Merge adds the shares of ld (whose figures its Join combines) that began at start (the
// coordinator's clock). A histogram that would drop values, or a share of another layout,
// fails the merge: a merged figure that is not exact is no figure.
func Merge(ld load.Load, shares []*Share, start time.Time, interval time.Duration) (*Merged, error) {
	if interval <= 0 {
		interval = time.Second
	}
	m := &Merged{}
	accs := map[string]*tagAcc{}
	var order []string
	var figs []json.RawMessage
	kind := ""
	for _, sh := range shares {
		if sh.Err != "" {
			m.Errs = append(m.Errs, fmt.Sprintf("%s: %s", sh.Agent.Name, sh.Err))
		}
		for _, t := range sh.Tags {
			a := accs[t.Tag]
			if a == nil {
				a = &tagAcc{stats: results.TagStats{Tag: t.Tag, Status: map[string]int64{}, Errors: map[string]int64{}},
					response: results.NewHistogram(), service: results.NewHistogram(), windows: map[int]*windowAcc{}}
				accs[t.Tag] = a
				order = append(order, t.Tag)
			}
			if err := a.add(t); err != nil {
				return nil, fmt.Errorf("agent %s, tag %s, %w", sh.Agent.Name, t.Tag, err)
			}
		}
		if len(sh.Figures) > 0 {
			if kind != "" && sh.FiguresKind != kind {
				return nil, fmt.Errorf("agent %s returned %s figures where another returned %s", sh.Agent.Name, sh.FiguresKind, kind)
			}
			kind = sh.FiguresKind
			figs = append(figs, sh.Figures)
		}
	}
	for _, tag := range order {
		a := accs[tag]
		tr := load.TagResult{TagStats: a.stats, Response: a.response, Service: a.service}
		ks := make([]int, 0, len(a.windows))
		for k := range a.windows {
			ks = append(ks, k)
		}
		sort.Ints(ks)
		for _, k := range ks {
			w := a.windows[k]
			tr.Timeline = append(tr.Timeline, results.WindowOf(w.endS, w.hist, w.errors, w.timeouts))
			w.hist.SetTag(tag)
			w.hist.SetStartTimeMs(start.Add(time.Duration(k) * interval).UnixMilli())
			w.hist.SetEndTimeMs(start.Add(time.Duration(w.endS * float64(time.Second))).UnixMilli())
			m.Intervals = append(m.Intervals, Interval{Tag: tag, Hist: w.hist})
		}
		m.Tags = append(m.Tags, tr)
	}
	if len(shares) == 1 && shares[0].figures != nil { // one share in this process: its own figures
		m.Figures = shares[0].figures
		return m, nil
	}
	if len(figs) > 0 {
		d, ok := ld.(load.Divisible)
		if !ok {
			return nil, fmt.Errorf("a load of type %T cannot join its agents' figures", ld)
		}
		var err error
		if m.Figures, err = d.Join(figs); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// tagAcc is one tag, added over agents.
type tagAcc struct {
	stats             results.TagStats
	response, service *hdrhistogram.Histogram
	windows           map[int]*windowAcc
}

// add adds one agent's share of the tag; its error says which of the tag's histograms
// could not be added exactly.
func (a *tagAcc) add(t ShareTag) error {
	addStats(&a.stats, t.TagStats)
	if err := addEncoded(a.response, t.Response); err != nil {
		return fmt.Errorf("response times: %w", err)
	}
	if err := addEncoded(a.service, t.Service); err != nil {
		return fmt.Errorf("service times: %w", err)
	}
	for _, w := range t.Windows {
		acc := a.windows[w.K]
		if acc == nil {
			acc = &windowAcc{hist: results.NewHistogram()}
			a.windows[w.K] = acc
		}
		if err := addEncoded(acc.hist, w.Hist); err != nil {
			return fmt.Errorf("window %d: %w", w.K, err)
		}
		acc.errors += w.Errors
		acc.timeouts += w.Timeouts
		acc.endS = max(acc.endS, w.EndS)
	}
	return nil
}

// windowAcc is one window of one tag, added over agents.
type windowAcc struct {
	hist             *hdrhistogram.Histogram
	errors, timeouts int64
	endS             float64
}

// addEncoded adds an encoded histogram into into, failing when it would drop a value: every
// agent records with the lab's one HDR layout (DecodeHist refuses another), so nothing may
// fall outside it.
func addEncoded(into *hdrhistogram.Histogram, enc string) error {
	if enc == "" {
		return nil
	}
	h, err := results.DecodeHist(enc)
	if err != nil {
		return err
	}
	if dropped := into.Merge(h); dropped > 0 {
		return fmt.Errorf("the merge dropped %d values", dropped)
	}
	return nil
}

// addStats sums b's counters into a; the worst lateness is the larger.
func addStats(a *results.TagStats, b results.TagStats) {
	a.Scheduled += b.Scheduled
	a.Sent += b.Sent
	a.Completed += b.Completed
	a.Late += b.Late
	a.ClientLate += b.ClientLate
	a.MaxLateMs = max(a.MaxLateMs, b.MaxLateMs)
	for k, v := range b.Status {
		a.Status[k] += v
	}
	for k, v := range b.Errors {
		a.Errors[k] += v
	}
}
