package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// chromiumTimeout bounds one headless run; a page that draws offline takes seconds.
const chromiumTimeout = 60 * time.Second

// errNoChromium says that no headless browser is installed (Debian: apt-get install chromium).
var errNoChromium = errors.New("chromium is not installed: neither chromium nor chromium-browser is on PATH")

// FindChromium finds a headless browser to check reports with.
func FindChromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", errNoChromium
}

// runChromium opens htmlPath in a headless Chromium with a fresh profile and extra flags,
// and returns what it printed on stdout. The flags keep it off the network and give the
// page's scripts virtual time to finish before Chromium dumps or shoots it.
func runChromium(htmlPath string, extra ...string) ([]byte, error) {
	bin, err := FindChromium()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "arena-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)

	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile, "--virtual-time-budget=10000",
	}
	args = append(args, extra...)
	args = append(args, (&url.URL{Scheme: "file", Path: abs}).String())

	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	// Chromium forks renderers and helpers; on timeout the whole group must go.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer in %s", chromiumTimeout)
		}
		return nil, fmt.Errorf("chromium: %w\n%s", err, tail(stderr.String(), 20))
	}
	return stdout.Bytes(), nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// CheckInBrowser opens a report in headless Chromium and checks what a reader would see:
// no script error, every chart the page meant to draw drawn, and a drawing in each.
func CheckInBrowser(htmlPath string) error {
	dump, err := runChromium(htmlPath, "--dump-dom")
	if err != nil {
		return err
	}
	page, err := parseDOM(dump)
	if err != nil {
		return fmt.Errorf("parsing the dumped DOM: %w", err)
	}
	return page.check()
}

func (p *renderedPage) check() error {
	var problems []string
	if e := strings.TrimSpace(p.errors); e != "" {
		problems = append(problems, "the page reported errors:\n"+e)
	}
	expected, drawn := p.body["data-charts-expected"], p.body["data-charts-drawn"]
	if expected == "" || expected == "0" || drawn != expected {
		problems = append(problems, fmt.Sprintf("charts drawn %q of expected %q", drawn, expected))
	}
	if p.profileBoxes > 0 && p.topFrames == 0 {
		problems = append(problems, fmt.Sprintf("%d top-frames tables, and no frame in any", p.profileBoxes))
	}
	for i, c := range p.charts {
		if !c.drawing {
			problems = append(problems, fmt.Sprintf("chart %d (%s %s) holds no drawing", i, c.kind, c.tag))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

var (
	scriptBody = regexp.MustCompile(`(?is)(<script\b[^>]*>).*?</script>`)
	styleBody  = regexp.MustCompile(`(?is)(<style\b[^>]*>).*?</style>`)
)

// markup is the page without the contents of its scripts and style sheet, whose text
// is code rather than markup (the chart library names the SVG namespace's URL, say).
func markup(page string) string {
	page = scriptBody.ReplaceAllString(page, "$1</script>")
	return styleBody.ReplaceAllString(page, "$1</style>")
}

// renderedChart is what the browser left inside one .arena-chart.
type renderedChart struct {
	kind, tag string
	drawing   bool // an <svg> with paths, or a <canvas>
	paths     int
	text      strings.Builder
}

type renderedPage struct {
	body   map[string]string
	errors string
	charts []*renderedChart
	// profileBoxes are the levels' top-frames comparisons; topFrames the frame cells app.js
	// filled in them.
	profileBoxes, topFrames int
}

// parseDOM reads Chromium's --dump-dom output. Scripts and styles are dropped first:
// their text is not markup, and the rest is close enough to XML for a lenient decoder.
func parseDOM(dump []byte) (*renderedPage, error) {
	d := xml.NewDecoder(strings.NewReader(markup(string(dump))))
	d.Strict, d.AutoClose, d.Entity = false, xml.HTMLAutoClose, xml.HTMLEntity
	type frame struct {
		chart  *renderedChart
		errors bool
	}
	page := &renderedPage{body: map[string]string{}}
	stack := []frame{{}}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return page, nil
		}
		if err != nil {
			return nil, err
		}
		top := stack[len(stack)-1]
		switch tok := tok.(type) {
		case xml.StartElement:
			attrs := map[string]string{}
			for _, a := range tok.Attr {
				attrs[a.Name.Local] = a.Value
			}
			f := top
			switch name := strings.ToLower(tok.Name.Local); {
			case name == "body":
				page.body = attrs
			case attrs["id"] == "arena-errors":
				f.errors = true
			case strings.Contains(" "+attrs["class"]+" ", " profile-compare "):
				page.profileBoxes++
			case name == "td" && attrs["class"] == "frame":
				page.topFrames++
			case strings.Contains(" "+attrs["class"]+" ", " arena-chart "):
				f.chart = &renderedChart{kind: attrs["data-kind"], tag: attrs["data-tag"]}
				page.charts = append(page.charts, f.chart)
			case f.chart != nil && name == "canvas":
				f.chart.drawing = true
			case f.chart != nil && name == "path":
				f.chart.paths++
				f.chart.drawing = true
			}
			stack = append(stack, f)
		case xml.EndElement:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
		case xml.CharData:
			if top.errors {
				page.errors += string(tok)
			}
			if top.chart != nil {
				top.chart.text.Write(tok)
			}
		}
	}
}
