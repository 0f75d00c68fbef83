package gate

import (
	"slices"
	"strings"
	"testing"
)

func TestParseFailOn(t *testing.T) {
	g, err := Parse([]string{"fails,Crashed", " untested ", "fails", ""}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"fails", "crashed", "untested"}; !slices.Equal(g.FailOn, want) {
		t.Errorf("FailOn %v, want %v", g.FailOn, want)
	}
	if !g.Active() || !g.Fails("crashed") || g.Fails("partly") {
		t.Errorf("gate %+v", g)
	}
	if (Gate{}).Active() {
		t.Error("the zero gate fails something")
	}
	for _, w := range Words {
		if _, err := Parse([]string{w}, nil); err != nil {
			t.Errorf("--fail-on %s: %v", w, err)
		}
	}
	_, err = Parse([]string{"fails,starved"}, nil)
	if err == nil || !strings.Contains(err.Error(), `--fail-on "starved": not a word it knows; give any of fails, partly, untested, crashed, unresponsive, faults, errors, inconclusive`) {
		t.Errorf("an unknown word: %v", err)
	}
}

func TestParseThreshold(t *testing.T) {
	good := []struct {
		text string
		want Threshold
	}{
		{"instant:p99<50ms", Threshold{Tag: "instant", Metric: "p99", Op: "<", Limit: 50}},
		{"data:rps>5000", Threshold{Tag: "data", Metric: "rps", Op: ">", Limit: 5000}},
		{"data:rps >= 5000/s", Threshold{Tag: "data", Metric: "rps", Op: ">=", Limit: 5000}},
		{"errors<0.1%", Threshold{Metric: "errors", Op: "<", Limit: 0.1}},
		{"instant:errors<=1 %", Threshold{Tag: "instant", Metric: "errors", Op: "<=", Limit: 1}},
		{" sleep : p99.9 <= 1.5s ", Threshold{Tag: "sleep", Metric: "p99.9", Op: "<=", Limit: 1500}},
		{"instant:p999<800us", Threshold{Tag: "instant", Metric: "p99.9", Op: "<", Limit: 0.8}},
		{"instant:P50<800µs", Threshold{Tag: "instant", Metric: "p50", Op: "<", Limit: 0.8}},
		{"db-held:mean<2s", Threshold{Tag: "db-held", Metric: "mean", Op: "<", Limit: 2000}},
		{"chat:max<1m", Threshold{Tag: "chat", Metric: "max", Op: "<", Limit: 60000}},
		{"instant:p90>0ms", Threshold{Tag: "instant", Metric: "p90", Op: ">", Limit: 0}},
	}
	for _, g := range good {
		th, err := ParseThreshold(g.text)
		if err != nil {
			t.Errorf("%q: %v", g.text, err)
			continue
		}
		g.want.Text = strings.TrimSpace(g.text)
		if th != g.want {
			t.Errorf("%q: %+v, want %+v", g.text, th, g.want)
		}
	}
	bad := []struct{ text, want string }{
		{"", "write [stream:]figure<value"},
		{"instant p99<50ms", "write [stream:]figure<value"},
		{"instant:p99=50ms", "write [stream:]figure<value"},
		{"instant:p99<", "write [stream:]figure<value"},
		{"p99<50ms", "name the stream whose p99 it bounds, e.g. instant:p99<50ms"},
		{"rps>5000", "name the stream whose rps it bounds"},
		{"instant:p98<50ms", `no figure "p98"; give one of p50, p90, p99, p99.9, mean, max, rps, errors`},
		{"instant:p99<50", `"50" is no latency: give it with its unit, e.g. 50ms`},
		{"instant:p99<-5ms", `"-5ms" is no latency`},
		{"instant:p99<fast", `"fast" is no latency`},
		{"data:rps>lots", `"lots" is no rate`},
		{"data:rps>-1", `"-1" is no rate`},
		{"errors<0.1", `"0.1" is no share of requests: give a per cent from 0 to 100`},
		{"errors<101%", `"101%" is no share of requests`},
		{"instant:errors<NaN%", `"NaN%" is no share`},
	}
	for _, b := range bad {
		_, err := ParseThreshold(b.text)
		if err == nil || !strings.Contains(err.Error(), b.want) || !strings.Contains(err.Error(), "--threshold") {
			t.Errorf("%q: error %v, want one saying %q", b.text, err, b.want)
		}
	}
	if _, err := Parse(nil, []string{"instant:p99<50ms", "p99<1s"}); err == nil || !strings.Contains(err.Error(), `"p99<1s"`) {
		t.Errorf("Parse with a bad threshold: %v", err)
	}
}

// A threshold on a stream the run does not measure is refused with the streams it does; a
// threshold on every stream needs none.
func TestCheckTags(t *testing.T) {
	g, err := Parse(nil, []string{"instant:p99<50ms", "errors<1%"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.CheckTags([]string{"instant", "delayed"}); err != nil {
		t.Error(err)
	}
	err = g.CheckTags([]string{"sleep", "data"})
	if err == nil || err.Error() != `--threshold "instant:p99<50ms": no stream "instant" in this run; its streams: sleep, data` {
		t.Errorf("a stream the run lacks: %v", err)
	}
	if got := g.Describe(); got != "--threshold instant:p99<50ms; --threshold errors<1%" {
		t.Errorf("Describe: %q", got)
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"5%": 5, "5": 5, " 2.5 % ": 2.5, "0%": 0} {
		if got, err := ParsePercent(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "five", "-5%", "NaN"} {
		if _, err := ParsePercent(in); err == nil || !strings.Contains(err.Error(), "give the change allowed in per cent") {
			t.Errorf("%q: %v", in, err)
		}
	}
}
