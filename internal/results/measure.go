package results

import (
	"encoding/json"
	"fmt"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// This file is the measured part of the schema: what the load engine records per tag, what
// the probe samples, and what a load measures beyond latency. The engine and the probe
// write these types; nothing else defines a field of results.json.

// Histograms hold nanoseconds, from 1 µs to one hour at 3 significant digits, the
// convention HdrHistogram's .hlog tools expect. Every histogram of a run has these
// settings, so that any two can be added exactly.
const (
	HistLowest  = int64(time.Microsecond)
	HistHighest = int64(time.Hour)
	HistDigits  = 3
)

// NewHistogram returns an empty latency histogram in the lab's units.
func NewHistogram() *hdrhistogram.Histogram {
	return hdrhistogram.New(HistLowest, HistHighest, HistDigits)
}

// Window summarises one interval of a tag's responses, by completion time.
type Window struct {
	T float64 `json:"t"` // seconds since the run started, at the window's end
	// Count is the latencies in the window: its correct answers and its timeouts (at the time
	// they waited), as the cell's histogram holds them. Answered is the correct ones alone.
	Count  int64 `json:"count"`
	Errors int64 `json:"errors"` // attempts that ended in the window without a correct answer, timeouts included
	// Timeouts are the attempts of Errors that timed out: in Count too.
	Timeouts int64   `json:"timeouts,omitempty"`
	P50      float64 `json:"p50_ms"`
	P90      float64 `json:"p90_ms"`
	P99      float64 `json:"p99_ms"`
	Max      float64 `json:"max_ms"`
}

// WindowOf is the window of h's values ending t seconds into the run, with errs errors of
// which timeouts timed out: the one place a timeline window's figures are read off its
// histogram.
func WindowOf(t float64, h *hdrhistogram.Histogram, errs, timeouts int64) Window {
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	return Window{T: t, Count: h.TotalCount(), Errors: errs, Timeouts: timeouts,
		P50: ms(h.ValueAtQuantile(50)), P90: ms(h.ValueAtQuantile(90)), P99: ms(h.ValueAtQuantile(99)), Max: ms(h.Max())}
}

// Answered is the window's correct answers, what TagStats.Completed counts over a cell and a
// tag's RPS divides: a timeout is a latency, never an answer.
func (w Window) Answered() int64 { return w.Count - w.Timeouts }

// Ended is the attempts that ended in the window, each once (a timeout is in Count and in
// Errors): the window's TagStats.Sent, over which its errors are a share as
// TagSummary.ErrorPct's are.
func (w Window) Ended() int64 { return w.Answered() + w.Errors }

// ErrorRatio is the share of the window's ended attempts that got no correct answer (0 to
// 1), timeouts included as TagSummary.ErrorPct includes them; ok is false when none ended.
func (w Window) ErrorRatio() (ratio float64, ok bool) {
	if n := w.Ended(); n > 0 {
		return float64(w.Errors) / float64(n), true
	}
	return 0, false
}

// TagStats are the counters of one tag.
type TagStats struct {
	Tag       string  `json:"tag"`
	Scheduled int64   `json:"scheduled"` // hits the schedule intended (open loop)
	Sent      int64   `json:"sent"`
	Completed int64   `json:"completed"` // correct answers: the status and body length the request wants (load.Answer)
	Late      int64   `json:"late"`      // sends later than LateAfter past their intended time
	MaxLateMs float64 `json:"max_late_ms"`
	// ClientLate are the hits the client itself took up later than LateAfter past their
	// intended time (its loop or pacer behind), whether they then left at once or waited
	// for a free connection of a bounded stream: the part of Late that is the client's.
	ClientLate int64            `json:"client_late,omitempty"`
	Status     map[string]int64 `json:"status"` // every answer received by class, correct or not: "2xx", "4xx", …
	Errors     map[string]int64 `json:"errors"` // attempts without a correct answer by kind: a wrong status or body, a timeout, a transport error
}

// Failed counts the attempts that got no correct answer, every kind together: a wrong
// status or body, a timeout, a refused, reset or closed connection.
func (t TagStats) Failed() int64 {
	var n int64
	for _, e := range t.Errors {
		n += e
	}
	return n
}

// Sample is a process tree at one instant; rates cover the period since the last sample.
type Sample struct {
	T         float64 `json:"t"`        // seconds since the run's start
	CPUPct    float64 `json:"cpu_pct"`  // user+system, % of one core
	UserPct   float64 `json:"user_pct"` // % of one core
	SysPct    float64 `json:"sys_pct"`
	RSSMB     float64 `json:"rss_mb"`
	Threads   int32   `json:"threads"`
	Procs     int     `json:"procs"`
	FDs       int32   `json:"fds"`
	VolCSPerS float64 `json:"vol_cs_per_s"`   // voluntary context switches per second
	InvCSPerS float64 `json:"invol_cs_per_s"` // involuntary context switches per second
}

// Usage condenses a series of samples.
type Usage struct {
	CPUPctMean    float64 `json:"cpu_pct_mean"`
	CPUPctMax     float64 `json:"cpu_pct_max"`
	UserSeconds   float64 `json:"user_s"`
	SystemSeconds float64 `json:"system_s"`
	RSSMBMean     float64 `json:"rss_mb_mean"`
	RSSMBMax      float64 `json:"rss_mb_max"`
	ThreadsMax    int32   `json:"threads_max"`
	FDsMax        int32   `json:"fds_max"`
	VolCS         int64   `json:"vol_cs"`
	InvolCS       int64   `json:"invol_cs"`
	Samples       int     `json:"samples"`
}

// UsageOf condenses the samples taken between from and to seconds (to ≤ 0: to the end).
func UsageOf(samples []Sample, from, to float64) Usage {
	var s Usage
	var cpuSum, rssSum float64
	for i, x := range samples {
		if x.T < from || (to > 0 && x.T > to) {
			continue
		}
		s.Samples++
		cpuSum += x.CPUPct
		rssSum += x.RSSMB
		s.CPUPctMax = max(s.CPUPctMax, x.CPUPct)
		s.RSSMBMax = max(s.RSSMBMax, x.RSSMB)
		s.ThreadsMax = max(s.ThreadsMax, x.Threads)
		s.FDsMax = max(s.FDsMax, x.FDs)
		if i > 0 {
			dt := x.T - samples[i-1].T
			s.UserSeconds += x.UserPct / 100 * dt
			s.SystemSeconds += x.SysPct / 100 * dt
			s.VolCS += int64(x.VolCSPerS * dt)
			s.InvolCS += int64(x.InvCSPerS * dt)
		}
	}
	if s.Samples > 0 {
		s.CPUPctMean = cpuSum / float64(s.Samples)
		s.RSSMBMean = rssSum / float64(s.Samples)
	}
	return s
}

// Figures are what a load measured beyond latency (study 003's deliveries and the server's
// own counters, say), in the load's own shape. A cell keeps them under their Kind; the
// package that defines them reads them back, and Numbers are summarised over repeats like
// every other figure, so that judges and reports read one median.
type Figures interface {
	Kind() string
	// Numbers are the figures worth a median and a spread over repeats, by name
	// (e.g. "delivered_per_s").
	Numbers() map[string]float64
}

// Checked is Figures that check what the server delivered: Faults are what it got wrong, by
// kind (the Fault* words), none when all was well.
type Checked interface {
	Faults() map[string]int64
}

// PutFigures keeps f in the cell under its kind, with its numbers and, for figures that
// check deliveries, its faults.
func (c *Cell) PutFigures(f Figures) error {
	raw, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("figures %s: %w", f.Kind(), err)
	}
	if c.Figures == nil {
		c.Figures = map[string]json.RawMessage{}
	}
	c.Figures[f.Kind()] = raw
	for name, v := range f.Numbers() {
		if c.Numbers == nil {
			c.Numbers = map[string]float64{}
		}
		c.Numbers[name] = v
	}
	if checked, ok := f.(Checked); ok {
		for kind, n := range checked.Faults() {
			if n <= 0 {
				continue
			}
			if c.Faults == nil {
				c.Faults = map[string]int64{}
			}
			c.Faults[kind] += n
		}
	}
	return nil
}

// FiguresOf reads the cell's figures of kind into into; false when the cell has none (or
// they do not decode, which only a hand-edited file can cause).
func (c Cell) FiguresOf(kind string, into any) bool {
	raw, ok := c.Figures[kind]
	return ok && json.Unmarshal(raw, into) == nil
}
