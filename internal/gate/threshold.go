package gate

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// Threshold is a bound a user sets on a figure of one stream (a tag), judged at every
// contender and level that measured it: `instant:p99<50ms`, `data:rps>5000`, `errors<0.1%`.
type Threshold struct {
	Text   string // as written, spaces trimmed
	Tag    string // the stream; "" for every stream (errors only)
	Metric string // one of Metrics
	Op     string // <, <=, > or >=
	// Limit is in the metric's unit: milliseconds for a latency, requests per second for
	// rps, per cent for errors.
	Limit float64
}

// Metrics are the figures a threshold can bound: the response time's percentiles, mean and
// max of the repeats' merged histograms, requests/s (the median over repeats) and errors
// (attempts with no correct answer, timeouts included, per attempt sent, over every repeat).
var Metrics = []string{"p50", "p90", "p99", "p99.9", "mean", "max", "rps", "errors"}

// thresholdSyntax is [tag:]metric op value.
var thresholdSyntax = regexp.MustCompile(`^(?:([A-Za-z0-9_-]+)\s*:\s*)?([A-Za-z0-9.]+)\s*(<=|>=|<|>)\s*(.+)$`)

// ParseThreshold reads one --threshold: [tag:]metric op value, where a latency's value has
// its unit (50ms, 1.5s, 800us), rps a number (5000, or 5000/s) and errors a per cent (0.1%).
// A latency or rps names its stream; errors without one is over every stream together.
func ParseThreshold(text string) (Threshold, error) {
	text = strings.TrimSpace(text)
	m := thresholdSyntax.FindStringSubmatch(text)
	if m == nil {
		return Threshold{}, fmt.Errorf("--threshold %q: write [stream:]figure<value, e.g. instant:p99<50ms, data:rps>5000 or errors<0.1%%", text)
	}
	th := Threshold{Text: text, Tag: m[1], Metric: strings.ToLower(m[2]), Op: m[3]}
	if th.Metric == "p999" {
		th.Metric = "p99.9"
	}
	if !slices.Contains(Metrics, th.Metric) {
		return Threshold{}, fmt.Errorf("--threshold %q: no figure %q; give one of %s", text, m[2], strings.Join(Metrics, ", "))
	}
	if th.Tag == "" && th.Metric != "errors" {
		return Threshold{}, fmt.Errorf("--threshold %q: name the stream whose %s it bounds, e.g. instant:%s (only errors may go without one: over every stream)", text, th.Metric, text)
	}
	limit, err := parseLimit(th.Metric, strings.TrimSpace(m[4]))
	if err != nil {
		return Threshold{}, fmt.Errorf("--threshold %q: %w", text, err)
	}
	th.Limit = limit
	return th, nil
}

// parseLimit reads a threshold's value in its metric's unit.
func parseLimit(metric, v string) (float64, error) {
	switch metric {
	case "rps":
		n, err := strconv.ParseFloat(strings.TrimSuffix(v, "/s"), 64)
		if err != nil || n < 0 || math.IsInf(n, 0) || math.IsNaN(n) {
			return 0, fmt.Errorf("%q is no rate: give requests per second, e.g. 5000", v)
		}
		return n, nil
	case "errors":
		n, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(v, "%")), 64)
		if !strings.HasSuffix(v, "%") || err != nil || n < 0 || n > 100 || math.IsNaN(n) {
			return 0, fmt.Errorf("%q is no share of requests: give a per cent from 0 to 100, e.g. 0.1%%", v)
		}
		return n, nil
	}
	d, err := time.ParseDuration(strings.ReplaceAll(strings.ReplaceAll(v, " ", ""), "µ", "u"))
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is no latency: give it with its unit, e.g. 50ms, 1.5s or 800us", v)
	}
	return float64(d) / float64(time.Millisecond), nil
}

// Unit is the unit of the threshold's limit and value.
func (th Threshold) Unit() string {
	switch th.Metric {
	case "rps":
		return "requests/s"
	case "errors":
		return "%"
	}
	return "ms"
}

// holds says whether v keeps the bound.
func (th Threshold) holds(v float64) bool {
	switch th.Op {
	case "<":
		return v < th.Limit
	case "<=":
		return v <= th.Limit
	case ">":
		return v > th.Limit
	}
	return v >= th.Limit
}

// format writes a value in the threshold's unit for people.
func (th Threshold) format(v float64) string {
	switch th.Metric {
	case "rps":
		return formatRPS(v) + " requests/s"
	case "errors":
		return results.FormatPct(v)
	}
	return results.FormatMs(v)
}

func formatRPS(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

// latencyOf reads a latency metric from a merged histogram's summary.
func latencyOf(l results.Latency, metric string) float64 {
	switch metric {
	case "p50":
		return l.P50
	case "p90":
		return l.P90
	case "p99":
		return l.P99
	case "p99.9":
		return l.P999
	case "mean":
		return l.Mean
	}
	return l.Max
}

// allowsErrors says whether the gate bounds the errors of the stream tag (a threshold on
// its errors, or on every stream's): then failed requests are judged by that bound, and a
// latency or rate of the same stream is judged on its figure alone.
func (g Gate) allowsErrors(tag string) bool {
	return slices.ContainsFunc(g.Thresholds, func(th Threshold) bool {
		return th.Metric == "errors" && (th.Tag == "" || th.Tag == tag)
	})
}

// threshold is the check of th at one cell; false when the cell's level does not measure
// its stream.
func (g Gate) threshold(th Threshold, run *results.Run, cs results.CellSummary) (Check, bool) {
	if _, has := tagOf(cs, th.Tag); th.Tag != "" && !has && !planned(run, cs.Level, th.Tag) {
		return Check{}, false
	}
	c := Check{Kind: KindThreshold, Name: th.Text + " at " + cs.Contender + "/" + cs.Level, Contender: cs.Contender, Level: cs.Level,
		Limit: ptr(th.Limit), Unit: th.Unit()}
	where := cs.Contender + " at " + cs.Level + ": "
	if !ranAny(cs.Outcomes) {
		c.Status, c.Message = Skipped, where+"not measured ("+strings.Join(notOK(cs.Outcomes), ", ")+")"
		return c, true
	}
	var text string
	var problems []string
	if th.Metric == "errors" {
		text, problems = th.errorsAt(cs, &c)
	} else {
		text, problems = th.figureAt(cs, &c, g.allowsErrors(th.Tag))
	}
	c.Status, c.Message = Passed, where+text
	if len(problems) > 0 {
		c.Status, c.FailedOn = Failed, []string{KindThreshold}
		c.Message += ": " + strings.Join(problems, "; ")
	}
	return c, true
}

// errorsAt judges an errors threshold on cs: its stream's errors, or every stream's
// together, per attempt sent over every repeat the load ran in.
func (th Threshold) errorsAt(cs results.CellSummary, c *Check) (string, []string) {
	var sent, errs int64
	kinds := map[string]int64{}
	for _, t := range cs.Tags {
		if th.Tag == "" || t.Tag == th.Tag {
			sent, errs = sent+t.Sent, errs+t.Errors
			for k, n := range t.ErrKinds {
				kinds[k] += n
			}
		}
	}
	stream := th.Tag
	if stream == "" {
		stream = "every stream"
	}
	if sent == 0 {
		return stream + ": nothing sent", []string{"no request to judge"}
	}
	pct := float64(errs) / float64(sent) * 100
	c.Value, c.ErrorPct = ptr(pct), ptr(pct)
	text := fmt.Sprintf("%s errors %s, bound %s %s", stream, errorsText(errs, sent, kinds), th.Op, th.format(th.Limit))
	if !th.holds(pct) {
		return text, []string{"past it"}
	}
	return text, nil
}

// figureAt judges a latency or rate threshold on cs's stream: a figure of the merged
// histograms (or the median rate over repeats). It fails, whatever the figure, where
// requests failed with no latency to show for it (unless the gate bounds that stream's
// errors) or a repeat did not end ok (the figure covers only those that did).
func (th Threshold) figureAt(cs results.CellSummary, c *Check, errorsAllowed bool) (string, []string) {
	t, ok := tagOf(cs, th.Tag)
	if !ok || t.Merged.Count == 0 {
		return fmt.Sprintf("%s: no answer measured, errors %s", th.Tag, errorsText(t.Errors, t.Sent, t.ErrKinds)),
			[]string{"no figure to judge"}
	}
	v := t.RPS.Median
	if th.Metric != "rps" {
		v = latencyOf(t.Merged, th.Metric)
	}
	c.Value, c.ErrorPct = ptr(v), ptr(t.ErrorPct)
	text := fmt.Sprintf("%s %s %s, bound %s %s; errors %s", th.Tag, th.Metric, th.format(v), th.Op, th.format(th.Limit),
		errorsText(t.Errors, t.Sent, t.ErrKinds))
	var problems []string
	if !th.holds(v) {
		problems = append(problems, "past it")
	}
	if failed := t.FailedPct(); failed > 0 && !errorsAllowed {
		problems = append(problems, fmt.Sprintf("%s of its requests failed (%s), which no %s shows: no pass unless a threshold bounds %s's errors (e.g. %s:errors<1%%)",
			results.FormatPct(failed), results.FormatFaults(withoutTimeouts(t.ErrKinds)), th.Metric, th.Tag, th.Tag))
	}
	if odd := notOK(cs.Outcomes); len(odd) > 0 {
		problems = append(problems, fmt.Sprintf("repeats ended %s: the figure covers only those that ended ok", strings.Join(odd, ", ")))
	}
	return text, problems
}
