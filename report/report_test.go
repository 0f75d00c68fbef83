package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/scenario"
	"github.com/arena-lab/arena/scenarios/downstream"
	"github.com/arena-lab/arena/scenarios/isolation"
	"github.com/arena-lab/arena/scenarios/sleep"

	"github.com/arena-lab/arena/internal/results"
)

const (
	slow = "servlet-sync" // starves: its pool is taken by /delayed
	fast = "webflux"      // isolated
)

// fixtureRun is an isolation run in the study's shape: two contenders, four tags, two
// repeats, the slow contender's second repeat crashed.
func fixtureRun() *results.Run {
	start := time.Date(2025, 11, 20, 14, 3, 7, 0, time.UTC)
	finished := start.Add(7*time.Minute + 12*time.Second)
	streams := []results.StreamPlan{
		{Tag: "instant", Path: "/instant", Mode: "open", Rate: 10},
		{Tag: "delayed", Path: "/delayed", Mode: "open", Rate: 10},
		{Tag: "liveness", Path: "/actuator/health/liveness", Mode: "open", Rate: 1},
		{Tag: "readiness", Path: "/actuator/health/readiness", Mode: "open", Rate: 1},
	}
	run := &results.Run{
		Schema:   results.SchemaVersion,
		ID:       "20251120-140307-isolation",
		Command:  []string{"arena", "run", "isolation", "--preset", "study", "--note", "first try"},
		Started:  start,
		Finished: &finished,
		Status:   "complete",
		Scenario: results.ScenarioInfo{
			Name: "isolation", Title: "Does a slow endpoint starve the others?", Study: "004 reactive vs servlet",
			Preset: "study", Repeat: 2, Duration: 20, Timeout: 60,
			Levels:   []results.Level{{Name: "study", Load: "open loop: instant 10/s, delayed 10/s, liveness 1/s, readiness 1/s", Streams: streams}},
			Headline: headlineOf(isolation.Scenario{}),
		},
		Env: results.Environment{
			Host: "lab-1", OS: "Debian GNU/Linux 12", Kernel: "6.1.0-27-amd64", CPUModel: "AMD EPYC 7B13", Cores: 8,
			MemoryGB: 31.3, GoVersion: "go1.26.8", JavaVersion: "21.0.5", NodeVersion: "v22.11.0",
			ServerCPUs: "0-3", ClientCPUs: "4-7", HeapMB: 512, JavaOpts: "-XX:+UseG1GC -Xss512k",
			Notes: []string{"CPU frequency governor: performance"},
		},
		Contenders: []results.Contender{
			{Name: slow, Description: "Spring MVC, synchronous controller", Stack: "spring-boot 3.4 / tomcat", Model: "thread per request",
				Runtime: "jvm", Knobs: []string{"ARENA_WORKERS", "ARENA_HEAP_MB"}, BuildHash: "3f2a9c1", Verified: "passed"},
			{Name: fast, Description: "Spring WebFlux", Stack: "spring-boot 3.4 / netty", Model: "event loop",
				Runtime: "jvm", Knobs: []string{"ARENA_HEAP_MB"}, Notes: "delay by Mono.delay", BuildHash: "8be0d47", Verified: "passed"},
		},
		Verdicts: []results.Verdict{
			isolation.Starved.Verdict(slow, "", "instant p99 rose from 4 ms to 41 s while /delayed held the workers"),
			isolation.Isolated.Verdict(fast, "", "instant p99 stayed under 10 ms"),
		},
		Claims: []results.Claim{
			{ID: "sync-degrades", Text: "On a synchronous servlet, every endpoint degrades", Verdict: "holds", Why: "all four tags' p99 above 30 s"},
			{ID: "async-isolates", Text: "Asynchronous services keep /instant fast", Verdict: "holds", Why: "webflux instant p99 6.1 ms"},
			{ID: "resources", Text: "Resource use differs", Verdict: "untested", Why: "the study gives no figures"},
		},
	}
	for _, name := range []string{slow, fast} {
		for repeat := 1; repeat <= 2; repeat++ {
			run.Cells = append(run.Cells, fixtureCell(name, repeat, start.Add(time.Duration(repeat)*time.Minute)))
		}
		run.Summary = append(run.Summary, fixtureSummary(name))
	}
	return run
}

// latencyAt is the fixture's p99 in ms of a tag at t seconds: the slow contender's
// responses wait ever longer once /delayed has taken its workers.
func latencyAt(contender, tag string, t float64) float64 {
	base := 4.0
	if tag == "delayed" {
		base = 10000
	}
	if contender == slow && t > 5 {
		return base + 2000*(t-5)
	}
	return base * (1 + 0.1*math.Sin(t))
}

func fixtureCell(contender string, repeat int, started time.Time) results.Cell {
	c := results.Cell{
		Contender: contender, Level: "study", Repeat: repeat, Port: 8080 + repeat, Started: started, Seconds: 20,
		Outcome: results.Outcome{Status: results.OutcomeOK},
		Server:  results.Resources{CPUs: "0-3"},
		Client:  results.Resources{CPUs: "4-7"},
	}
	for _, tag := range []string{"instant", "delayed", "liveness", "readiness"} {
		rate := int64(10)
		if strings.HasSuffix(tag, "ness") {
			rate = 1
		}
		tg := results.Tag{TagStats: results.TagStats{Tag: tag, Scheduled: 20 * rate, Sent: 20 * rate, Completed: 20 * rate, Status: map[string]int64{"2xx": 20 * rate}}}
		for i := range 20 {
			t := float64(i + 1)
			w := results.Window{T: t, Count: rate, P99: latencyAt(contender, tag, t)}
			if tag == "delayed" && t < 10 { // nothing completes before the first 10 s delay
				w = results.Window{T: t}
			}
			tg.Timeline = append(tg.Timeline, w)
		}
		c.Tags = append(c.Tags, tg)
	}
	threads := int32(40)
	if contender == slow {
		threads = 210
	}
	for i := range 20 {
		t := float64(i) + 0.5
		cpu, rss, clientCPU := 25+10*math.Sin(t/3), 180+2*t, 14+3*math.Cos(t)
		if contender == slow {
			cpu, rss, clientCPU = 60+20*math.Sin(t/3), 240+9*t, 6+2*math.Cos(t)
		}
		c.Server.Timeline = append(c.Server.Timeline, results.Sample{T: t, CPUPct: cpu, RSSMB: rss, Threads: threads + int32(i)})
		c.Client.Timeline = append(c.Client.Timeline, results.Sample{T: t, CPUPct: clientCPU, RSSMB: 30, Threads: 9})
	}
	if contender == slow && repeat == 2 {
		exit := 1
		c.Outcome = results.Outcome{
			Status: results.OutcomeCrashed, Detail: "the contender exited 12.4 s into the load", ExitCode: &exit,
			LogTail: []string{
				"2025-11-20T14:05:19.311Z ERROR 1 --- [nio-8080-exec-200] o.a.c.c.C.[Tomcat]: Servlet.service() threw exception",
				"java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached",
				"\tat java.base/java.lang.Thread.start0(Native Method)",
			},
		}
	}
	if contender == fast {
		c.ClientBound = true
		c.ClientBoundWhy = "the client sent 3 % of hits later than 10 ms"
	}
	return c
}

func fixtureSummary(contender string) results.CellSummary {
	s := results.CellSummary{
		Contender: contender, Level: "study", Repeats: 2, Outcomes: []string{"ok", "ok"},
		CPUPct: results.Spread{Median: 41, Min: 39, Max: 43, Pct: 9.8}, RSSMB: results.Spread{Median: 256, Min: 250, Max: 262, Pct: 4.7},
		Threads: results.Spread{Median: 59, Min: 59, Max: 59},
	}
	if contender == slow {
		s.Outcomes = []string{"ok", "crashed"}
		s.Noisy, s.NoisyWhy = true, []string{"instant p99 spread 48 %"}
	} else {
		s.ClientBnd = true
	}
	for _, tag := range []string{"instant", "delayed", "liveness", "readiness"} {
		p99 := latencyAt(contender, tag, 20)
		lat := results.Latency{Count: 400, Mean: p99 / 3, Min: p99 / 20, P50: p99 / 4, P90: p99 / 2, P99: p99, P999: p99 * 1.02, Max: p99 * 1.05}
		ts := results.TagSummary{Tag: tag, Merged: lat, Service: lat, P99: results.Spread{Median: p99, Min: p99 * 0.8, Max: p99 * 1.2, Pct: 40}, RPS: results.Spread{Median: 10}}
		if contender == slow {
			ts.Errors, ts.ErrKinds = 12, map[string]int64{"timeout": 10, "reset": 2}
		}
		s.Tags = append(s.Tags, ts)
	}
	return s
}

// needs skips a test whose tool is missing here, but fails it in CI, where the tool is
// part of the contract.
func needs(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(what)
	}
	t.Skip(what)
}

func chartLib(t *testing.T) []byte {
	t.Helper()
	lib, err := os.ReadFile(ChartLibPath(".."))
	if err != nil {
		needs(t, "chart library missing, run `npm ci` in report/web: "+err.Error())
	}
	return lib
}

func render(t *testing.T, run *results.Run, lib []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := Render(run, lib, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

var (
	urlAttr = regexp.MustCompile(`(?i)\b(src|href|srcset|poster|data|action)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)`)
	linkTag = regexp.MustCompile(`(?i)<link\b[^>]*>`)
)

func TestRenderIsSelfContained(t *testing.T) {
	lib := chartLib(t)
	page := render(t, fixtureRun(), lib)
	if !strings.Contains(page, string(lib)) {
		t.Error("the chart library is not inlined verbatim")
	}
	m := markup(page)
	for _, a := range urlAttr.FindAllStringSubmatch(m, -1) {
		v := strings.ToLower(strings.Trim(a[2], `"'`))
		if strings.Contains(v, "http://") || strings.Contains(v, "https://") || strings.HasPrefix(v, "//") {
			t.Errorf("external resource: %s", a[0])
		}
	}
	for _, l := range linkTag.FindAllString(m, -1) {
		if strings.Contains(strings.ToLower(l), "stylesheet") {
			t.Errorf("linked style sheet: %s", l)
		}
	}
	css := styleCSS
	for _, bad := range []string{"@import", "url("} {
		if strings.Contains(css, bad) {
			t.Errorf("style sheet uses %s, which may fetch", bad)
		}
	}
}

// section returns the page's <section id=id>, or fails. Entities are decoded, so that
// the checks read as the page does.
func section(t *testing.T, page, id string) string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<section (?:class="level" )?id="` + id + `">.*?</section>`)
	s := re.FindString(page)
	if s == "" {
		t.Fatalf("no section %q", id)
	}
	return html.UnescapeString(s)
}

func TestRenderStructure(t *testing.T) {
	page := render(t, fixtureRun(), []byte("/* chart library */"))

	verdicts := section(t, page, "verdicts")
	for _, want := range []string{slow, fast, `class="badge bad">starved`, `class="badge good">isolated`} {
		if !strings.Contains(verdicts, want) {
			t.Errorf("verdicts lack %q", want)
		}
	}
	claims := section(t, page, "claims")
	for _, want := range []string{"sync-degrades", `class="badge good">holds`, `class="badge neutral">untested`} {
		if !strings.Contains(claims, want) {
			t.Errorf("claims lack %q", want)
		}
	}
	outcomes := section(t, page, "outcomes")
	for _, want := range []string{"java.lang.OutOfMemoryError: unable to create native thread", "Thread.start0(Native Method)", "exit code 1", "repeat 2", ">crashed<"} {
		if !strings.Contains(outcomes, want) {
			t.Errorf("outcomes lack %q", want)
		}
	}
	if strings.Contains(outcomes, fast) {
		t.Error("outcomes list a cell that ended normally")
	}
	env := section(t, page, "environment")
	for _, want := range []string{"Each contender was pinned to CPUs 0-3; the load client to CPUs 4-7.", "AMD EPYC 7B13", "-XX:+UseG1GC -Xss512k", "21.0.5"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %q", want)
		}
	}
	level := section(t, page, "level-0")
	for _, want := range []string{">noisy<", ">client-bound<", "later than 10 ms (repeats 1, 2)", "instant p99 spread 48 %", "12 (reset 2, timeout 10)", "30.0 s", "4.37 ms", "40 %"} {
		if !strings.Contains(level, want) {
			t.Errorf("level section lacks %q", want)
		}
	}
	if n := strings.Count(page, `class="arena-chart"`); n != 11 {
		t.Errorf("%d chart elements, want 11: 4 tags × (percentiles, p99 over time) + CPU, RSS, threads", n)
	}
	if !strings.Contains(html.UnescapeString(page), "arena run isolation --preset study --note 'first try'") {
		t.Error("the command is not shown, quoted for a shell")
	}

	blob := regexp.MustCompile(`(?s)<script type="application/json" id="arena-data">(.*?)</script>`).FindStringSubmatch(page)
	if blob == nil {
		t.Fatal("no chart data")
	}
	var data chartData
	if err := json.Unmarshal([]byte(blob[1]), &data); err != nil {
		t.Fatalf("chart data: %v", err)
	}
	lv := data.Levels[0]
	if len(lv.Tags) != 4 || len(lv.Tags["delayed"].Percentiles) != 2 || len(lv.Lines["client_cpu"]) != 2 {
		t.Fatalf("chart data has the wrong shape: %+v", lv)
	}
	if p := lv.Tags["delayed"].P99[0].Points[0]; p[1] != nil {
		t.Errorf("an empty window is drawn as %v, want a gap", p[1])
	}
	if got := lv.Tags["instant"].P99[1].Points; len(got) != 20 {
		t.Errorf("%d points in the p99 timeline, want 20", len(got))
	}
}

func TestRenderEmptyRun(t *testing.T) {
	page := render(t, &results.Run{ID: "x", Status: "running"}, nil)
	for _, want := range []string{"No verdicts", "Every cell ended normally", `class="badge mixed">running`} {
		if !strings.Contains(page, want) {
			t.Errorf("empty run's page lacks %q", want)
		}
	}
}

func TestFmtMs(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0 ms", 0.0412: "0.0412 ms", 0.875: "0.875 ms", 3.694: "3.69 ms", 83.37: "83.4 ms",
		111.4: "111 ms", 9994: "9994 ms", 10080: "10.1 s", 59990: "60.0 s", 125000: "125 s",
	} {
		if got := fmtMs(v); got != want {
			t.Errorf("fmtMs(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestWriteFileWithoutChartLibrary(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "report.html")
	err := WriteFile(fixtureRun(), filepath.Join(dir, "missing", "echarts.min.js"), out)
	if err == nil || !strings.Contains(err.Error(), "npm ci") {
		t.Fatalf("WriteFile without the chart library: %v, want an error that says to run npm ci", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a report was written anyway: %v", err)
	}
}

func TestWriteFileLeavesOnlyTheReport(t *testing.T) {
	dir := t.TempDir()
	lib := filepath.Join(dir, "lib.js")
	if err := os.WriteFile(lib, []byte("/* chart library */"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", "report.html")
	if err := os.Mkdir(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	for range 2 { // the second replaces the first
		if err := WriteFile(fixtureRun(), lib, out); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := os.ReadDir(filepath.Dir(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "report.html" {
		t.Errorf("output folder holds %v, want only report.html", entries)
	}
	if info, err := os.Stat(out); err != nil || info.Mode().Perm() != 0o644 {
		t.Errorf("report: %v, %v; want mode 0644", info, err)
	}
}

func TestChromiumDrawsEveryChart(t *testing.T) {
	page := browserCheck(t, "report", func(lib, out string) error { return WriteFile(fixtureRun(), lib, out) })
	if len(page.charts) != 11 {
		t.Errorf("%d charts in the DOM, want 11", len(page.charts))
	}
	for i, c := range page.charts {
		if !c.drawing {
			t.Errorf("chart %d (%s %s) holds no drawing", i, c.kind, c.tag)
			continue
		}
		// Axis labels or legends name the contenders: the data reached the chart.
		for _, name := range []string{slow, fast} {
			if !strings.Contains(c.text.String(), name) {
				t.Errorf("chart %d (%s %s) does not name %s", i, c.kind, c.tag, name)
			}
		}
	}
}

// Fixtures of the curve and closed-loop scenarios: sleep-like (two groups of levels on X,
// the second served by the lab's downstream) and downstream-like (two closed-loop levels).
const (
	tomcat = "spring-mvc"
	netty  = "netty"
)

var sleepXs = []float64{200, 800, 2600}

// sleepMean is the fixture's mean latency: the 200-thread Tomcat queues past 200
// connections, Netty stays near the wait up to 800.
func sleepMean(contender string, wait, c float64) float64 {
	if contender == tomcat {
		return wait * max(1.01, c/200)
	}
	return wait * (1.02 + max(0, c-800)/4000)
}

type closedPoint struct {
	contender, level, tag string
	mean, rps, cpu, rss   float64
	threads               int32
	downstream            bool
}

// closedCell is one repeat of a closed loop, with small timelines and, when the level had
// one, the lab's downstream beside the contender.
func closedCell(p closedPoint, repeat int, started time.Time) results.Cell {
	k := 1 + 0.02*float64(repeat-1) // repeats land a little apart
	c := results.Cell{
		Contender: p.contender, Level: p.level, Repeat: repeat, Port: 8080, Started: started, Seconds: 10,
		Outcome: results.Outcome{Status: results.OutcomeOK},
		Server:  results.Resources{CPUs: "1", Summary: results.Usage{CPUPctMean: p.cpu * k, RSSMBMax: p.rss, ThreadsMax: p.threads, Samples: 10}},
		Client:  results.Resources{CPUs: "0"},
	}
	n := int64(p.rps * 10)
	tg := results.Tag{TagStats: results.TagStats{Tag: p.tag, Sent: n, Completed: n, Status: map[string]int64{"2xx": n}}, RPS: p.rps * k,
		Response: results.Latency{Count: n, Mean: p.mean, P50: p.mean, P99: p.mean * 1.5, Max: p.mean * 2}}
	tg.Service = tg.Response
	// The histograms too, so that a re-summary (arena matrix, arena report) finds about
	// the same figures: 90 % at the mean, the rest up to twice it.
	h := results.NewHistogram()
	for _, b := range []struct{ at, share float64 }{{1, 0.9}, {1.2, 0.09}, {1.5, 0.009}, {2, 0.001}} {
		_ = h.RecordValues(int64(p.mean*b.at*1e6), max(1, int64(float64(n)*b.share)))
	}
	if hist, err := results.EncodeHist(h); err == nil {
		tg.ResponseHist, tg.ServiceHist = hist, hist
	}
	for i := range 10 {
		t := float64(i + 1)
		tg.Timeline = append(tg.Timeline, results.Window{T: t, Count: n / 10, P50: p.mean, P99: p.mean * (1.4 + 0.02*t), Max: p.mean * 2})
		c.Server.Timeline = append(c.Server.Timeline, results.Sample{T: t - 0.5, CPUPct: p.cpu * (1 + 0.05*math.Sin(t)), RSSMB: p.rss - 10 + t, Threads: p.threads})
		c.Client.Timeline = append(c.Client.Timeline, results.Sample{T: t - 0.5, CPUPct: 30 + 5*math.Cos(t), RSSMB: 40, Threads: 8})
	}
	c.Tags = []results.Tag{tg}
	if p.downstream {
		c.Downstream = &results.Resources{CPUs: "0", Summary: results.Usage{CPUPctMean: p.rps / 400 * k, RSSMBMax: 24 + p.rps/1000}}
		for i := range 10 {
			t := float64(i) + 0.5
			c.Downstream.Timeline = append(c.Downstream.Timeline, results.Sample{T: t, CPUPct: p.rps / 400 * (1 + 0.1*math.Sin(t)), RSSMB: 24 + p.rps/1000, Threads: 6})
		}
	}
	return c
}

// closedSummary combines repeats 1…n of closedCell as results.Summarise would.
func closedSummary(p closedPoint, outcomes []string) results.CellSummary {
	var ok int
	for _, o := range outcomes {
		if o == results.OutcomeOK {
			ok++
		}
	}
	hi := 1 + 0.02*float64(ok-1)
	lat := results.Latency{Count: int64(p.rps*10) * int64(ok), Mean: p.mean, Min: p.mean * 0.9, P50: p.mean, P90: p.mean * 1.2, P99: p.mean * 1.5, P999: p.mean * 1.8, Max: p.mean * 2}
	spread := func(v float64) results.Spread {
		return results.Spread{Median: v * (1 + hi) / 2, Min: v, Max: v * hi, Pct: (hi - 1) * 100}
	}
	return results.CellSummary{
		Contender: p.contender, Level: p.level, Repeats: ok, Outcomes: outcomes,
		Tags:   []results.TagSummary{{Tag: p.tag, Merged: lat, Service: lat, P99: spread(lat.P99), P50: spread(lat.P50), RPS: spread(p.rps)}},
		CPUPct: spread(p.cpu), RSSMB: results.Spread{Median: p.rss, Min: p.rss, Max: p.rss},
		Threads: results.Spread{Median: float64(p.threads), Min: float64(p.threads), Max: float64(p.threads)},
	}
}

// addClosed puts repeats cells of p into run, the last one crashed when crashLast, and
// their summary.
func addClosed(run *results.Run, p closedPoint, repeats int, crashLast bool) {
	var outcomes []string
	for r := 1; r <= repeats; r++ {
		c := closedCell(p, r, run.Started.Add(time.Duration(len(run.Cells))*time.Minute))
		if crashLast && r == repeats {
			exit := 137
			c.Outcome = results.Outcome{Status: results.OutcomeCrashed, Detail: "killed during the load", ExitCode: &exit}
			c.Tags, c.Downstream = nil, nil
		}
		run.Cells = append(run.Cells, c)
		outcomes = append(outcomes, c.Outcome.Status)
	}
	run.Summary = append(run.Summary, closedSummary(p, outcomes))
}

func fixtureEnv() results.Environment {
	return results.Environment{Host: "lab-1", OS: "Debian GNU/Linux 12", CPUModel: "AMD EPYC 7B13", Cores: 2,
		GoVersion: "go1.26.8", JavaVersion: "25", ServerCPUs: "1", ClientCPUs: "0", HeapMB: 512}
}

// fixtureSleep is a sleep-like run: 2 contenders × 2 groups × 3 connection counts, two
// repeats each, netty's second repeat at sleep-c2600 crashed; the data group is served by
// the lab's downstream.
func fixtureSleep() *results.Run {
	start := time.Date(2026, 11, 21, 8, 0, 0, 0, time.UTC)
	finished := start.Add(50 * time.Minute)
	run := &results.Run{
		Schema: results.SchemaVersion, ID: "20261121-080000-sleep", Command: []string{"arena", "run", "sleep", "--quick"},
		Started: start, Finished: &finished, Status: "complete",
		Scenario: results.ScenarioInfo{Name: "sleep", Title: "I/O waits: does a thread per request keep up as connections grow?",
			Study: "study 001", Preset: "seed", Quick: true, Repeat: 2, Timeout: 30, Headline: headlineOf(sleep.Scenario{}),
			Notes: []string{"The 50 ms test calls /data/1 against the lab's downstream, which waits 50 ms and runs on the client's CPUs."}},
		Env: fixtureEnv(),
		Contenders: []results.Contender{
			{Name: tomcat, Stack: "spring-boot / tomcat", Model: "thread per request", Runtime: "java", Verified: "passed"},
			{Name: netty, Stack: "netty", Model: "event loop", Runtime: "java", Verified: "passed"},
		},
	}
	groups := []struct {
		group, prefix, tag, path string
		wait                     float64
		downstream               bool
	}{
		{"sleep 100 ms", "sleep", "sleep", "/sleep", 100, false},
		{"downstream 50 ms", "data50", "data", "/data/1", 50, true},
	}
	for _, g := range groups {
		for _, x := range sleepXs {
			lv := results.Level{Name: fmt.Sprintf("%s-c%.0f", g.prefix, x), Group: g.group, X: x, XName: "connections",
				Load:    fmt.Sprintf("closed loop, %.0f connections, 10000 requests (at most 5m0s), request timeout 30s", x),
				Streams: []results.StreamPlan{{Tag: g.tag, Path: g.path, Mode: "closed", Connections: int(x), Requests: 10000}}}
			if g.downstream {
				lv.Downstream, lv.DownstreamDelayMs = true, g.wait
			}
			run.Scenario.Levels = append(run.Scenario.Levels, lv)
			for _, name := range []string{tomcat, netty} {
				mean := sleepMean(name, g.wait, x)
				p := closedPoint{contender: name, level: lv.Name, tag: g.tag, mean: mean, rps: x / mean * 1000,
					cpu: 20 + x/40, rss: 180 + x/40, threads: 30, downstream: g.downstream}
				if name == tomcat {
					p.cpu, p.rss, p.threads = 30+x/20, 300+x/20, 222
				}
				addClosed(run, p, 2, name == netty && lv.Name == "sleep-c2600")
			}
		}
		run.Verdicts = append(run.Verdicts,
			results.Verdict{Contender: tomcat, Level: g.group, Verdict: "flat to 200, then queues", Tone: results.Mixed, Why: "mean latency by connections: …"},
			results.Verdict{Contender: netty, Level: g.group, Verdict: "flat to 800, then queues", Tone: results.Mixed, Why: "mean latency by connections: …"})
	}
	run.Claims = []results.Claim{
		{ID: "a", Text: "At 200 connections Tomcat and Netty answer alike.", Verdict: "holds", Why: "101 ms, 102 ms"},
		{ID: "b", Text: "Above 200 connections Tomcat queues (sleep 100 ms).", Verdict: "holds", Why: "…"},
		{ID: "c", Text: "Above 200 connections Tomcat queues (downstream 50 ms).", Verdict: "partly", Why: "…"},
	}
	return run
}

// fixtureDownstream is a downstream-like run: levels self and lab, three repeats, three
// contenders measured and a fourth that failed verify.
func fixtureDownstream() *results.Run {
	start := time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC)
	finished := start.Add(20 * time.Minute)
	run := &results.Run{
		Schema: results.SchemaVersion, ID: "20261121-090000-downstream", Command: []string{"arena", "run", "downstream"},
		Started: start, Finished: &finished, Status: "complete",
		Scenario: results.ScenarioInfo{Name: "downstream", Title: "Downstream calls: fetch, decode, encode: who serves the most?",
			Study: "study 002", Preset: "seed", Repeat: 3, Timeout: 10, Headline: headlineOf(downstream.Scenario{})},
		Env: fixtureEnv(),
		Contenders: []results.Contender{
			{Name: "vertx", Stack: "vert.x", Model: "event loop", Runtime: "java", Verified: "passed"},
			{Name: "spring-webflux", Stack: "spring-boot / netty", Model: "event loop", Runtime: "java", Verified: "passed"},
			{Name: "spring-webflux-fn", Stack: "spring-boot / netty", Model: "event loop", Runtime: "java", Verified: "passed"},
			{Name: "quarkus", Stack: "quarkus", Model: "event loop", Runtime: "java", Verified: "failed: /data/1 answered 500"},
		},
	}
	rps := map[string]float64{"vertx": 9000, "spring-webflux": 3800, "spring-webflux-fn": 3700}
	rss := map[string]float64{"vertx": 140, "spring-webflux": 260, "spring-webflux-fn": 250}
	threads := map[string]int32{"vertx": 18, "spring-webflux": 31, "spring-webflux-fn": 31}
	for _, level := range []string{"self", "lab"} {
		lv := results.Level{Name: level, Load: "closed loop, 100 connections, 10000 requests (at most 2m0s), request timeout 10s",
			Streams: []results.StreamPlan{{Tag: "data", Path: "/data/1", Mode: "closed", Connections: 100, Requests: 10000}}}
		if level == "lab" {
			lv.Downstream = true
		}
		run.Scenario.Levels = append(run.Scenario.Levels, lv)
		for _, name := range []string{"vertx", "spring-webflux", "spring-webflux-fn"} {
			r := rps[name]
			if level == "lab" {
				r *= 1.6
			}
			addClosed(run, closedPoint{contender: name, level: level, tag: "data", mean: 100 / r * 1000, rps: r,
				cpu: 97 - float64(len(name)), rss: rss[name], threads: threads[name], downstream: level == "lab"}, 3, false)
		}
		run.Verdicts = append(run.Verdicts,
			results.Verdict{Contender: "vertx", Level: level, Verdict: "fastest", Tone: results.Good, Why: "…"},
			results.Verdict{Contender: "spring-webflux", Level: level, Verdict: "42 % of fastest", Tone: results.Mixed, Why: "…"},
			results.Verdict{Contender: "spring-webflux-fn", Level: level, Verdict: "41 % of fastest", Tone: results.Mixed, Why: "…"})
	}
	run.Claims = []results.Claim{
		{ID: "a", Text: "Vert.x serves about 2.5× the throughput of Spring WebFlux.", Verdict: "holds", Why: "2.37×"},
		{ID: "b", Text: "WebFlux's annotated and functional endpoints perform about the same.", Verdict: "holds", Why: "…"},
	}
	return run
}

// chartCount is how many chart elements a rendered page holds.
func chartCount(page string) int { return strings.Count(page, `class="arena-chart"`) }

// sectionByID returns the page's <section … id=id>, entities decoded, or fails.
func sectionByID(t *testing.T, page, id string) string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<section [^>]*\bid="` + regexp.QuoteMeta(id) + `">.*?</section>`)
	s := re.FindString(page)
	if s == "" {
		t.Fatalf("no section %q", id)
	}
	return html.UnescapeString(s)
}

func chartDataOf(t *testing.T, page string) chartData {
	t.Helper()
	blob := regexp.MustCompile(`(?s)<script type="application/json" id="arena-data">(.*?)</script>`).FindStringSubmatch(page)
	if blob == nil {
		t.Fatal("no chart data")
	}
	var data chartData
	if err := json.Unmarshal([]byte(blob[1]), &data); err != nil {
		t.Fatalf("chart data: %v", err)
	}
	return data
}

func TestRenderCurves(t *testing.T) {
	page := render(t, fixtureSleep(), []byte("/* chart library */"))

	for i, group := range []string{"sleep 100 ms", "downstream 50 ms"} {
		s := sectionByID(t, page, fmt.Sprintf("curve-%d", i))
		if !strings.Contains(s, group) {
			t.Errorf("curve %d is not %q", i, group)
		}
		for _, metric := range []string{"latency", "rps", "cpu", "rss", "threads"} {
			if !strings.Contains(s, fmt.Sprintf(`data-kind="curve" data-curve="%d" data-metric="%s"`, i, metric)) {
				t.Errorf("curve %s lacks its %s chart", group, metric)
			}
		}
		for _, want := range []string{"latency vs connections", "throughput vs connections", "CPU vs connections", "RSS vs connections", "threads vs connections", "crashed (repeat 2)"} {
			if !strings.Contains(s, want) && !(want == "crashed (repeat 2)" && i == 1) {
				t.Errorf("curve %s lacks %q", group, want)
			}
		}
		hasColumn := strings.Contains(s, "downstream CPU %")
		if hasColumn != (i == 1) {
			t.Errorf("curve %s: downstream CPU column shown %v, want %v", group, hasColumn, i == 1)
		}
	}
	ds := sectionByID(t, page, "curve-1")
	for _, want := range []string{"runs on CPUs 0, the client's", "answering after 50.0 ms", ">netty</th>"} {
		if !strings.Contains(ds, want) {
			t.Errorf("the downstream curve lacks %q", want)
		}
	}
	// The curves come before the levels, whose detail is folded.
	if strings.Index(page, `id="curve-0"`) > strings.Index(page, `id="level-0"`) {
		t.Error("the curves follow the per-level sections")
	}
	if n := strings.Count(page, `<details class="level-detail">`); n != 6 {
		t.Errorf("%d folded levels, want 6", n)
	}
	lab := sectionByID(t, page, "level-3") // data50-c200
	for _, want := range []string{"downstream CPU %", "downstream dotted", "on the client's CPUs", `data-kind="bars"`, "Throughput and response time"} {
		if !strings.Contains(lab, want) {
			t.Errorf("level data50-c200 lacks %q", want)
		}
	}
	if strings.Contains(sectionByID(t, page, "level-0"), "downstream CPU %") {
		t.Error("a level without a downstream shows a downstream column")
	}
	// 2 groups × 5 curves, and 6 levels × (percentiles, p99, requests/s, CPU, RSS, threads).
	if n := chartCount(page); n != 46 {
		t.Errorf("%d chart elements, want 46", n)
	}

	data := chartDataOf(t, page)
	if len(data.Curves) != 2 || len(data.Bars) != 6 {
		t.Fatalf("%d curves and %d bar charts, want 2 and 6", len(data.Curves), len(data.Bars))
	}
	sleep, data50 := data.Curves[0], data.Curves[1]
	if len(sleep.Latency) != 4 || sleep.Latency[1].Dash != "dashed" || sleep.Latency[1].Name != tomcat+" p99" {
		t.Errorf("latency lines: %+v, want mean and dashed p99 per contender", sleep.Latency)
	}
	if len(sleep.CPU) != 2 || len(data50.CPU) != 4 {
		t.Errorf("%d and %d CPU lines, want 2 and 4 (with the downstream's)", len(sleep.CPU), len(data50.CPU))
	}
	if l := data50.CPU[1]; l.Name != tomcat+" downstream" || l.Dash != "dotted" || l.Colour != 0 || len(l.Points) != 3 {
		t.Errorf("downstream CPU line: %+v", l)
	}
	if got := sleep.Latency[0].Points; len(got) != 3 || got[2][0] != 2600.0 {
		t.Errorf("mean latency points: %v, want one per connection count", got)
	}
	if got := sleep.RPS[1].Points; len(got) != 3 { // netty's crashed repeat leaves the other
		t.Errorf("netty's throughput points: %v", got)
	}
	if len(data.Levels[3].Lines["downstream_cpu"]) != 2 || len(data.Levels[0].Lines["downstream_cpu"]) != 0 {
		t.Error("the downstream's CPU timelines are not where the downstream ran")
	}
}

func TestRenderClosedLoop(t *testing.T) {
	page := render(t, fixtureDownstream(), []byte("/* chart library */"))
	tp := sectionByID(t, page, "throughput")
	for _, want := range []string{`data-kind="bars" data-bars="2"`, "self: requests/s", "lab: requests/s", "9000", "14400"} {
		if !strings.Contains(tp, want) {
			t.Errorf("throughput lacks %q", want)
		}
	}
	if strings.Contains(page, `class="curve"`) {
		t.Error("levels without X are drawn as curves")
	}
	if strings.Contains(page, `<details class="level-detail">`) {
		t.Error("levels without X are folded")
	}
	// requests/s overall, and 2 levels × (requests/s, percentiles, p99, CPU, RSS, threads).
	if n := chartCount(page); n != 13 {
		t.Errorf("%d chart elements, want 13", n)
	}
	data := chartDataOf(t, page)
	all := data.Bars[2]
	if len(all.Series) != 2 || all.Series[1].Name != "lab" || len(all.Categories) != 3 || all.ByCategory {
		t.Fatalf("throughput chart: %+v", all)
	}
	if v, lo, hi := all.Series[0].Values[0], all.Series[0].Lo[0], all.Series[0].Hi[0]; lo != 9000.0 || !(hi.(float64) > v.(float64)) {
		t.Errorf("vertx at self: %v (%v–%v), want whiskers around the median", v, lo, hi)
	}
	if !data.Bars[0].ByCategory || data.Bars[0].Series[0].Name != "requests/s" {
		t.Errorf("level self's chart: %+v", data.Bars[0])
	}
	if !strings.Contains(sectionByID(t, page, "level-1"), "downstream CPU %") {
		t.Error("level lab lacks the downstream CPU column")
	}
}

// fixtureMatrixRuns are three scenarios' runs and an older isolation run the matrix must
// pass over.
func fixtureMatrixRuns() []*results.Run {
	older := fixtureRun()
	older.ID, older.Started = "20251119-100000-isolation", older.Started.Add(-24*time.Hour)
	older.Verdicts = []results.Verdict{{Contender: fast, Verdict: "OLDER RUN"}}
	return []*results.Run{fixtureSleep(), older, fixtureRun(), fixtureDownstream()}
}

func renderMatrix(t *testing.T, runs []*results.Run, lib []byte) string {
	t.Helper()
	var buf bytes.Buffer
	if err := RenderMatrix(runs, MatrixOptions{}, lib, &buf); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestRenderMatrix(t *testing.T) {
	page := renderMatrix(t, fixtureMatrixRuns(), []byte("/* chart library */"))
	m := sectionByID(t, page, "matrix")
	if strings.Contains(page, "OLDER RUN") {
		t.Error("the matrix shows an older run of a scenario")
	}
	head := regexp.MustCompile(`(?s)<thead>.*?</thead>`).FindString(m)
	if a, b, c := strings.Index(head, "downstream"), strings.Index(head, "isolation"), strings.Index(head, "sleep"); !(a >= 0 && a < b && b < c) {
		t.Errorf("scenario columns out of order: %s", head)
	}
	rows := map[string][]string{}
	for _, tr := range regexp.MustCompile(`(?s)<tr><th scope="row">([^<]*)(?:<div class="hint model">[^<]*</div>)?</th>(.*?)</tr>`).FindAllStringSubmatch(m, -1) {
		rows[tr[1]] = regexp.MustCompile(`(?s)<td class="mcell[^"]*">(.*?)</td>`).FindAllString(tr[2], -1)
	}
	want := []string{"netty", "quarkus", "servlet-sync", "spring-mvc", "spring-webflux", "spring-webflux-fn", "vertx", "webflux"}
	if len(rows) != len(want) {
		t.Fatalf("rows %v, want %v", slices.Collect(maps.Keys(rows)), want)
	}
	cell := func(contender string, col int) string {
		t.Helper()
		r := rows[contender]
		if len(r) != 3 {
			t.Fatalf("%s has %d cells, want 3", contender, len(r))
		}
		return r[col]
	}
	checks := []struct {
		contender string
		col       int // downstream, isolation, sleep
		want      []string
	}{
		{"vertx", 0, []string{"self", "lab", "9180 requests/s", "14688 requests/s", ">fastest<"}},
		{"spring-webflux", 0, []string{">42 % of fastest<", "3876 requests/s"}},
		{"quarkus", 0, []string{`class="problem"`, "verify failed: /data/1 answered 500"}},
		{"vertx", 1, []string{"not run"}},
		{fast, 1, []string{"/instant p99 4.37 ms", `class="badge good"`, ">isolated<"}},
		{slow, 1, []string{"/instant p99 30.0 s", ">starved<", `class="problem">crashed: study r2`}},
		{tomcat, 2, []string{"sleep 100 ms", "downstream 50 ms", ">flat to 200, then queues<", `class="badge mixed"`, "mean 1300 ms at 2600 connections", "mean 650 ms at 2600 connections"}},
		{netty, 2, []string{">flat to 800, then queues<", "mean 147 ms at 2600 connections", `class="problem">crashed: sleep-c2600 r2`}},
		{netty, 0, []string{"not run"}},
		{tomcat, 1, []string{"not run"}},
	}
	for _, c := range checks {
		got := html.UnescapeString(cell(c.contender, c.col))
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s × column %d lacks %q: %s", c.contender, c.col, w, got)
			}
		}
	}
	if n := strings.Count(m, ">not run<"); n != 16 {
		t.Errorf("%d cells not run, want 14", n)
	}
	claims := sectionByID(t, page, "claims")
	for _, w := range []string{"Vert.x serves about 2.5×", "sync-degrades", "At 200 connections Tomcat and Netty answer alike", `class="badge mixed">partly`} {
		if !strings.Contains(claims, w) {
			t.Errorf("claims lack %q", w)
		}
	}
	if n := chartCount(page); n != 3 {
		t.Errorf("%d charts, want one per scenario", n)
	}
	data := chartDataOf(t, page)
	if s := data.Bars[2].Series; len(s) != 2 || s[0].Name != "sleep 100 ms, 2600 connections" {
		t.Errorf("sleep's headline chart: %+v", s)
	}
	if RenderMatrix(nil, MatrixOptions{}, nil, io.Discard) == nil {
		t.Error("a matrix of no run renders")
	}
}

func TestChromiumDrawsCurves(t *testing.T) {
	t.Parallel()
	browserCheck(t, "sleep", func(lib, out string) error { return WriteFile(fixtureSleep(), lib, out) })
}

func TestChromiumDrawsClosedLoops(t *testing.T) {
	t.Parallel()
	browserCheck(t, "downstream", func(lib, out string) error { return WriteFile(fixtureDownstream(), lib, out) })
}

func TestChromiumDrawsMatrix(t *testing.T) {
	t.Parallel()
	browserCheck(t, "matrix", func(lib, out string) error { return WriteMatrix(fixtureMatrixRuns(), MatrixOptions{}, lib, out) })
}

// TestScreenshots writes the fixtures' pages and pictures of them, and the fixtures as
// runs/<id>/results.json, to $ARENA_SCREENSHOTS for a person to look at; it does nothing
// without it.
func TestScreenshots(t *testing.T) {
	dir := os.Getenv("ARENA_SCREENSHOTS")
	if dir == "" {
		t.Skip("ARENA_SCREENSHOTS is not set")
	}
	needChromium(t)
	lib := ChartLibPath("..")
	// The fixtures as runs, for trying `arena matrix` on.
	for _, run := range fixtureMatrixRuns() {
		folder := filepath.Join(dir, "runs", run.ID)
		if err := os.MkdirAll(folder, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.Save(run, folder); err != nil {
			t.Fatal(err)
		}
	}
	for name, write := range map[string]func(out string) error{
		"sleep":      func(out string) error { return WriteFile(fixtureSleep(), lib, out) },
		"downstream": func(out string) error { return WriteFile(fixtureDownstream(), lib, out) },
		"matrix":     func(out string) error { return WriteMatrix(fixtureMatrixRuns(), MatrixOptions{}, lib, out) },
	} {
		out := filepath.Join(dir, name+".html")
		if err := write(out); err != nil {
			t.Fatal(err)
		}
		if err := screenshot(out, filepath.Join(dir, "report-"+name+".png"), 1280, 3000); err != nil {
			t.Fatal(err)
		}
	}
}

// headlineOf is what a scenario declares it is summed up by, as a run of it records.
func headlineOf(s scenario.Scenario) []results.Headline {
	plan, err := s.Plan(scenario.Options{})
	if err != nil {
		panic(err)
	}
	return plan.Headline
}

// A count-bounded closed loop has no planned length, so the page claims none (it once said
// "Load per cell 300 s", the time bound); levels of different lengths show their range.
func TestLoadLengthIsThePlannedOne(t *testing.T) {
	if page := render(t, fixtureSleep(), []byte("x")); strings.Contains(page, "Load per cell") {
		t.Error("the sleep page claims a load length for count-bounded closed loops")
	}
	if page := render(t, fixtureSleep(), []byte("x")); !strings.Contains(page, "<dt>Request timeout</dt><dd>30 s</dd>") {
		t.Error("the sleep page lost its request timeout")
	}
	levels := []results.Level{{Name: "throughput", Duration: 6}, {Name: "slow", Duration: 15}, {Name: "none"}}
	if got := secondsRange(0, levels, func(l results.Level) float64 { return l.Duration }); got != "6–15 s, by level" {
		t.Errorf("range %q", got)
	}
	if got := secondsRange(20, levels, func(l results.Level) float64 { return l.Duration }); got != "20 s" {
		t.Errorf("shared %q", got)
	}
	if got := secondsRange(0, levels[2:], func(l results.Level) float64 { return l.Duration }); got != "" {
		t.Errorf("none %q", got)
	}
}

// TestRenderTopology: a run whose load came from agents says which host ran what, on which
// CPUs, in place of the one-machine layout.
func TestRenderTopology(t *testing.T) {
	run := fixtureRun()
	run.Env.Topology = &results.Topology{Launcher: "ssh",
		Server: results.TopoHost{Name: "srv", Host: "10.0.0.1", CPUs: "2-3"},
		Agents: []results.TopoHost{{Name: "c1", Host: "c1.lab", Addr: "10.0.0.2:7600", CPUs: "0"}, {Name: "c2", Host: "c2.lab", Addr: "10.0.0.3:7600", CPUs: "1"}}}
	html := render(t, run, []byte("/*lib*/"))
	for _, want := range []string{"The contender ran on srv (10.0.0.1), pinned to CPUs 2-3", "2 agent(s) (ssh)", "c1 on c1.lab (10.0.0.2:7600, CPUs 0)", "c2 on c2.lab (10.0.0.3:7600, CPUs 1)"} {
		if !strings.Contains(html, want) {
			t.Errorf("the report does not say %q", want)
		}
	}
	if strings.Contains(html, "the load client to CPUs") {
		t.Error("the report still gives the one-machine layout")
	}
	if strings.Contains(html, "<h3>Load agents</h3>") {
		t.Error("a table of load agents with no cell driven by agents")
	}
	run.Cells[0].Agents = []results.AgentShare{
		{Name: "c1", Host: "c1.lab", Addr: "10.0.0.2:7600", CPUs: "0", OffsetMs: 0.25, RTTMs: 0.1, BeganLateMs: 0.05,
			Tags: []results.AgentTag{{Tag: "instant", Sent: 500, Completed: 500, P50: 1.5, P99: 4}}, Client: results.Usage{CPUPctMean: 12}},
		{Name: "c2", Host: "c2.lab", Addr: "10.0.0.3:7600", CPUs: "1", ClientBound: true, ClientBoundWhy: "client CPU 95% of 1 core(s)",
			Tags: []results.AgentTag{{Tag: "instant", Sent: 500, Completed: 500, P50: 1.6, P99: 4.2}}, Client: results.Usage{CPUPctMean: 95}},
	}
	html = render(t, run, []byte("/*lib*/"))
	for _, want := range []string{"<h3>Load agents</h3>", "c1.lab", "client CPU 95% of 1 core(s)", ">500<"} {
		if !strings.Contains(html, want) {
			t.Errorf("the load agents' table does not show %q", want)
		}
	}
}
