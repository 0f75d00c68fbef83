package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"html"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/load"
	"github.com/arena-lab/arena/internal/probe"
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
			Levels: []results.Level{{Name: "study", Load: "open loop: instant 10/s, delayed 10/s, liveness 1/s, readiness 1/s", Streams: streams}},
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
			{Contender: slow, Verdict: "starved", Why: "instant p99 rose from 4 ms to 41 s while /delayed held the workers"},
			{Contender: fast, Verdict: "isolated", Why: "instant p99 stayed under 10 ms"},
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
		tg := results.Tag{TagStats: load.TagStats{Tag: tag, Scheduled: 20 * rate, Sent: 20 * rate, Completed: 20 * rate, Status: map[string]int64{"2xx": 20 * rate}}}
		for i := range 20 {
			t := float64(i + 1)
			w := load.Window{T: t, Count: rate, P99: latencyAt(contender, tag, t)}
			if tag == "delayed" && t < 10 { // nothing completes before the first 10 s delay
				w = load.Window{T: t}
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
		c.Server.Timeline = append(c.Server.Timeline, probe.Sample{T: t, CPUPct: cpu, RSSMB: rss, Threads: threads + int32(i)})
		c.Client.Timeline = append(c.Client.Timeline, probe.Sample{T: t, CPUPct: clientCPU, RSSMB: 30, Threads: 9})
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
	if _, err := FindChromium(); err != nil {
		needs(t, err.Error())
	}
	lib := chartLib(t)
	dir := t.TempDir()
	libPath := filepath.Join(dir, "echarts.min.js")
	if err := os.WriteFile(libPath, lib, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "report.html")
	if err := WriteFile(fixtureRun(), libPath, out); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	dump, err := runChromium(out, "--dump-dom")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("chromium took %s", time.Since(began).Round(time.Millisecond))
	page, err := parseDOM(dump)
	if err != nil {
		t.Fatalf("parsing the dumped DOM: %v", err)
	}
	if err := page.check(); err != nil {
		t.Error(err)
	}
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
