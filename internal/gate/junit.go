package gate

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/results"
)

// Suite is a run's checks (or a comparison's) as one JUnit test suite.
type Suite struct {
	Name       string // the run's id, or "A vs B"
	Package    string // the prefix of its test cases' classname, e.g. "arena.isolation"
	Timestamp  time.Time
	Hostname   string
	Properties []Property
	Checks     []Check
}

// Property is a suite's setting, e.g. the scenario or the gate.
type Property struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// RunSuite is run's checks as a suite, with what it ran and the gate it was judged by.
func RunSuite(run *results.Run, g Gate, checks []Check) Suite {
	return Suite{Name: run.ID, Package: "arena." + run.Scenario.Name, Timestamp: run.Started, Hostname: run.Env.Host, Checks: checks,
		Properties: []Property{
			{"scenario", run.Scenario.Name}, {"preset", run.Scenario.Preset}, {"quick", fmt.Sprint(run.Scenario.Quick)},
			{"repeat", fmt.Sprint(run.Scenario.Repeat)}, {"status", run.Status}, {"gate", g.Describe()},
		}}
}

// The document, in the dialect of the Jenkins xUnit plugin's junit-10.xsd (which Jenkins,
// GitLab and GitHub's JUnit reporters read): testsuites of testsuite of testcase, a failure
// or skipped with its message, system-out for the figures of a case that passed.
type (
	xmlSuites struct {
		XMLName  xml.Name   `xml:"testsuites"`
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Errors   int        `xml:"errors,attr"`
		Time     string     `xml:"time,attr"`
		Suites   []xmlSuite `xml:"testsuite"`
	}
	xmlSuite struct {
		Name       string    `xml:"name,attr"`
		Tests      int       `xml:"tests,attr"`
		Failures   int       `xml:"failures,attr"`
		Errors     int       `xml:"errors,attr"`
		Skipped    int       `xml:"skipped,attr"`
		Time       string    `xml:"time,attr"`
		Timestamp  string    `xml:"timestamp,attr,omitempty"`
		Hostname   string    `xml:"hostname,attr,omitempty"`
		Properties *xmlProps `xml:"properties,omitempty"`
		Cases      []xmlCase `xml:"testcase"`
	}
	xmlProps struct {
		Property []Property `xml:"property"`
	}
	xmlCase struct {
		Name      string  `xml:"name,attr"`
		Classname string  `xml:"classname,attr"`
		Time      string  `xml:"time,attr"`
		Failure   *xmlMsg `xml:"failure,omitempty"`
		Skipped   *xmlMsg `xml:"skipped,omitempty"`
		SystemOut string  `xml:"system-out,omitempty"`
	}
	xmlMsg struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr,omitempty"`
		Text    string `xml:",chardata"`
	}
)

// WriteJUnit writes suites as one JUnit XML document named name: a test case per check, a
// failure (its message the figures, its type the words it failed on) for each that failed,
// skipped for each not judged or not asked about.
func WriteJUnit(w io.Writer, name string, suites []Suite) error {
	doc := xmlSuites{Name: name}
	var total float64
	for _, s := range suites {
		xs := xmlSuite{Name: s.Name, Hostname: s.Hostname}
		if !s.Timestamp.IsZero() {
			xs.Timestamp = s.Timestamp.UTC().Format("2006-01-02T15:04:05")
		}
		if len(s.Properties) > 0 {
			xs.Properties = &xmlProps{Property: s.Properties}
		}
		var secs float64
		for _, c := range s.Checks {
			xs.Cases = append(xs.Cases, caseOf(s.Package, c))
			secs += c.Seconds
			switch c.Status {
			case Failed:
				xs.Failures++
			case Skipped:
				xs.Skipped++
			}
		}
		xs.Tests, xs.Time = len(s.Checks), seconds(secs)
		doc.Tests, doc.Failures, total = doc.Tests+xs.Tests, doc.Failures+xs.Failures, total+secs
		doc.Suites = append(doc.Suites, xs)
	}
	doc.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// caseOf is one check as a test case; its classname groups it by kind under pkg.
func caseOf(pkg string, c Check) xmlCase {
	xc := xmlCase{Name: c.Name, Classname: pkg + "." + c.Kind + "s", Time: seconds(c.Seconds)}
	switch c.Status {
	case Failed:
		xc.Failure = &xmlMsg{Message: c.Message, Type: strings.Join(c.FailedOn, ","), Text: body(c)}
	case Skipped:
		xc.Skipped = &xmlMsg{Message: c.Message}
	default:
		xc.SystemOut = body(c)
	}
	return xc
}

// body is a check's message and figures, a line each, for a viewer's detail pane.
func body(c Check) string {
	lines := []string{c.Message}
	if len(c.FailedOn) > 0 {
		lines = append(lines, "failed on: "+strings.Join(c.FailedOn, ", "))
	}
	if len(c.Words) > 0 {
		lines = append(lines, "described by: "+strings.Join(c.Words, ", "))
	}
	for _, s := range c.Streams {
		lines = append(lines, fmt.Sprintf("%s: p50 %s, p99 %s, p99.9 %s, %s requests/s, errors %s (%d of %d)", s.Tag,
			results.FormatMs(s.P50), results.FormatMs(s.P99), results.FormatMs(s.P999), formatRPS(s.RPS), results.FormatPct(s.ErrorPct), s.Errors, s.Sent))
	}
	return strings.Join(lines, "\n")
}

// seconds writes a time as JUnit's time attribute wants it (junit-10.xsd's SUREFIRE_TIME).
func seconds(s float64) string { return fmt.Sprintf("%.3f", s) }
