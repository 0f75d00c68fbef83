package gate

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/golden"
)

// junit10 are the rules of the common JUnit XML schema, the Jenkins xUnit plugin's
// junit-10.xsd (github.com/jenkinsci/xunit-plugin, src/main/resources/org/jenkinsci/plugins/
// xunit/types/model/xsd/junit-10.xsd; MIT licence, © 2014 Gregory Boissinot), which GitLab's,
// GitHub's and Jenkins' JUnit viewers read, written out here element by element: what each
// may hold (the schema's choices are unbounded, so any order and number), the attributes it
// must and may have (an undeclared attribute is invalid), and whether it holds text (mixed
// content or xs:string; element-only content may hold whitespace alone).
var junit10 = map[string]struct {
	children, required, optional []string
	text                         bool
	times                        []string // attributes of the schema's SUREFIRE_TIME type
}{
	"testsuites": {children: []string{"testsuite"}, optional: []string{"name", "time", "tests", "failures", "errors"}, times: []string{"time"}},
	"testsuite": {children: []string{"testsuite", "properties", "testcase", "system-out", "system-err"},
		required: []string{"name", "tests", "failures", "errors"},
		optional: []string{"group", "time", "skipped", "timestamp", "hostname", "id", "package", "file", "log", "url"}, times: []string{"time"}},
	"properties": {children: []string{"property"}},
	"property":   {required: []string{"name", "value"}},
	"testcase": {children: []string{"skipped", "error", "failure", "rerunFailure", "rerunError", "flakyFailure", "flakyError", "system-out", "system-err"},
		required: []string{"name"}, optional: []string{"time", "classname", "group"}},
	"failure":      {optional: []string{"type", "message"}, text: true},
	"error":        {optional: []string{"type", "message"}, text: true},
	"skipped":      {optional: []string{"type", "message"}, text: true},
	"system-out":   {text: true},
	"system-err":   {text: true},
	"rerunFailure": {children: []string{"stackTrace", "system-out", "system-err"}, required: []string{"type"}, optional: []string{"message"}, text: true},
	"rerunError":   {children: []string{"stackTrace", "system-out", "system-err"}, required: []string{"type"}, optional: []string{"message"}, text: true},
	"flakyFailure": {children: []string{"stackTrace", "system-out", "system-err"}, required: []string{"type"}, optional: []string{"message"}, text: true},
	"flakyError":   {children: []string{"stackTrace", "system-out", "system-err"}, required: []string{"type"}, optional: []string{"message"}, text: true},
	"stackTrace":   {text: true},
}

// surefireTime is the schema's SUREFIRE_TIME pattern (an XSD pattern matches the whole value).
var surefireTime = regexp.MustCompile(`^(([0-9]{0,3},)*[0-9]{3}|[0-9]{0,3})*(\.[0-9]*)?$`)

// node is an element of a parsed document.
type node struct {
	name     string
	attrs    map[string]string
	children []*node
	text     string
}

// parseXML reads a well-formed document into its element tree.
func parseXML(doc []byte) (*node, error) {
	dec := xml.NewDecoder(bytes.NewReader(doc))
	var stack []*node
	var root *node
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("not well-formed XML: %w", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			n := &node{name: tok.Name.Local, attrs: map[string]string{}}
			if tok.Name.Space != "" {
				n.name = tok.Name.Space + ":" + tok.Name.Local // the schema has no namespace
			}
			for _, a := range tok.Attr {
				n.attrs[a.Name.Local] = a.Value
			}
			if len(stack) > 0 {
				stack[len(stack)-1].children = append(stack[len(stack)-1].children, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(tok)
			}
		}
	}
	if root == nil {
		return nil, errors.New("no element")
	}
	return root, nil
}

// junit10Errors are the ways the element tree root breaks junit10's rules.
func junit10Errors(root *node) []string {
	var errs []string
	if root.name != "testsuites" && root.name != "testsuite" {
		errs = append(errs, fmt.Sprintf("root <%s>: a JUnit document is testsuites or testsuite", root.name))
	}
	var walk func(n *node, path string)
	walk = func(n *node, path string) {
		rule, ok := junit10[n.name]
		if !ok {
			errs = append(errs, fmt.Sprintf("%s: no element <%s> in junit-10.xsd", path, n.name))
			return
		}
		for _, a := range rule.required {
			if _, ok := n.attrs[a]; !ok {
				errs = append(errs, fmt.Sprintf("%s: required attribute %q missing", path, a))
			}
		}
		for a, v := range n.attrs {
			if !slices.Contains(rule.required, a) && !slices.Contains(rule.optional, a) {
				errs = append(errs, fmt.Sprintf("%s: attribute %q is not declared", path, a))
			}
			if slices.Contains(rule.times, a) && !surefireTime.MatchString(v) {
				errs = append(errs, fmt.Sprintf("%s: %s=%q is no SUREFIRE_TIME", path, a, v))
			}
		}
		if !rule.text && strings.TrimSpace(n.text) != "" {
			errs = append(errs, fmt.Sprintf("%s: text %q in element-only content", path, n.text))
		}
		for i, c := range n.children {
			if !slices.Contains(rule.children, c.name) {
				errs = append(errs, fmt.Sprintf("%s: <%s> may not hold <%s>", path, n.name, c.name))
			}
			walk(c, fmt.Sprintf("%s/%s[%d]", path, c.name, i))
		}
	}
	walk(root, root.name)
	return errs
}

// validateJUnit10 fails t for every way doc breaks junit10's rules, and for counts that
// disagree with the test cases (beyond the schema, which types them as strings: viewers
// read them as integers that add up); it returns the document's tree.
func validateJUnit10(t *testing.T, doc []byte) *node {
	t.Helper()
	root, err := parseXML(doc)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	for _, e := range junit10Errors(root) {
		t.Errorf("junit-10.xsd: %s", e)
	}
	checkCounts(t, root)
	return root
}

// checkCounts holds every suite's tests, failures and skipped to its test cases, and the
// testsuites' totals to their sum.
func checkCounts(t *testing.T, root *node) {
	t.Helper()
	count := func(n *node, attr string) int {
		v, err := strconv.Atoi(n.attrs[attr])
		if err != nil {
			t.Errorf("<%s name=%q> %s=%q is no count", n.name, n.attrs["name"], attr, n.attrs[attr])
		}
		return v
	}
	suites := []*node{root}
	if root.name == "testsuites" {
		suites = root.children
	}
	var tests, failures int
	for _, s := range suites {
		var cases, failed, skipped int
		for _, c := range s.children {
			if c.name != "testcase" {
				continue
			}
			cases++
			for _, inner := range c.children {
				failed += map[bool]int{true: 1}[inner.name == "failure"]
				skipped += map[bool]int{true: 1}[inner.name == "skipped"]
			}
		}
		if count(s, "tests") != cases || count(s, "failures") != failed || count(s, "skipped") != skipped || count(s, "errors") != 0 {
			t.Errorf("suite %q says tests=%s failures=%s skipped=%s; it holds %d cases, %d failed, %d skipped",
				s.attrs["name"], s.attrs["tests"], s.attrs["failures"], s.attrs["skipped"], cases, failed, skipped)
		}
		tests, failures = tests+cases, failures+failed
	}
	if root.name == "testsuites" && (count(root, "tests") != tests || count(root, "failures") != failures) {
		t.Errorf("testsuites says tests=%s failures=%s; its suites hold %d and %d", root.attrs["tests"], root.attrs["failures"], tests, failures)
	}
}

// The rules refuse what the schema refuses.
func TestJUnit10RulesRefuseWhatTheSchemaDoes(t *testing.T) {
	for doc, want := range map[string]string{
		`<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><testcase/></testsuite></testsuites>`:                             `required attribute "name" missing`,
		`<testsuites><testsuite name="a" tests="0" failures="0"></testsuite></testsuites>`:                                                   `required attribute "errors" missing`,
		`<testsuites><testsuite name="a" tests="0" failures="0" errors="0" colour="red"></testsuite></testsuites>`:                           `attribute "colour" is not declared`,
		`<testsuites time="1.5s"></testsuites>`:                                                                                              `is no SUREFIRE_TIME`,
		`<testsuites time="-1"></testsuites>`:                                                                                                `is no SUREFIRE_TIME`,
		`<testsuites><testcase name="a"/></testsuites>`:                                                                                      `<testsuites> may not hold <testcase>`,
		`<testsuites><testsuite name="a" tests="1" failures="0" errors="0"><testcase name="x"><passed/></testcase></testsuite></testsuites>`: `no element <passed>`,
		`<testsuites><testsuite name="a" tests="0" failures="0" errors="0">words</testsuite></testsuites>`:                                   `in element-only content`,
		`<results/>`:                  `root <results>`,
		`<testsuites xmlns="urn:x"/>`: `no element <urn:x:testsuites>`,
	} {
		root, err := parseXML([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if errs := junit10Errors(root); !strings.Contains(strings.Join(errs, "\n"), want) {
			t.Errorf("%s: %q, want %q", doc, errs, want)
		}
	}
	for _, ok := range []string{"0", "12.345", "1,234.5", ".5", "5."} {
		if !surefireTime.MatchString(ok) {
			t.Errorf("SUREFIRE_TIME refuses %q", ok)
		}
	}
}

// The JUnit file of a judged run: valid by junit-10.xsd's rules, a test case per cell,
// claim and threshold, the starved cell a failure with its figures in the message.
func TestJUnitOfARun(t *testing.T) {
	run := isolationRun(t)
	g := mustParse(t, []string{FailFails}, "instant:p99<50ms", "errors<5%")
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, "arena run isolation", []Suite{RunSuite(run, g, g.Judge(run))}); err != nil {
		t.Fatal(err)
	}
	root := validateJUnit10(t, buf.Bytes())
	golden.Check(t, "isolation.junit.xml", buf.Bytes())

	suite := root.children[0]
	if suite.attrs["name"] != run.ID || suite.attrs["tests"] != "11" || suite.attrs["failures"] != "4" || suite.attrs["timestamp"] != "2026-11-23T10:00:00" {
		t.Errorf("suite %v", suite.attrs)
	}
	var starved *node
	for _, c := range suite.children {
		if c.name == "testcase" && c.attrs["name"] == "spring-mvc/seed" {
			starved = c
		}
	}
	if starved == nil || starved.attrs["classname"] != "arena.isolation.cells" || len(starved.children) != 1 || starved.children[0].name != "failure" {
		t.Fatalf("the starved cell's case: %+v", starved)
	}
	f := starved.children[0]
	if f.attrs["type"] != "fails" || !strings.HasPrefix(f.attrs["message"], "spring-mvc at seed: starved (instant p99 20.02 s); instant p50 3.00 s, p99 20.02 s") ||
		!strings.Contains(f.text, "instant: p50 3.00 s, p99 20.02 s, p99.9 20.02 s, 9.50 requests/s, errors 10.0 % (20 of 200)") {
		t.Errorf("the starved cell's failure: %v\n%s", f.attrs, f.text)
	}
}

// Names and messages are escaped: whatever a claim or a log says, the document stays valid.
func TestJUnitEscapes(t *testing.T) {
	odd := "a <b> & \"c\" 'd'\nline two\x01\x1b[31m red"
	checks := []Check{
		{Kind: KindClaim, Name: odd, Status: Failed, FailedOn: []string{FailFails}, Message: odd},
		{Kind: KindClaim, Name: "skipped " + odd, Status: Skipped, Message: odd},
		{Kind: KindCell, Name: "passed", Status: Passed, Message: odd, Seconds: 1234.5678},
	}
	var buf bytes.Buffer
	if err := WriteJUnit(&buf, odd, []Suite{{Name: odd, Package: "arena.x", Checks: checks}, {Name: "empty"}}); err != nil {
		t.Fatal(err)
	}
	root := validateJUnit10(t, buf.Bytes())
	c := root.children[0].children[0]
	if !strings.HasPrefix(c.attrs["name"], "a <b> & \"c\" 'd'\nline two") || !strings.Contains(c.children[0].attrs["message"], "line two") {
		t.Errorf("round trip: %q", c.attrs["name"])
	}
	if root.children[0].attrs["time"] != "1234.568" || root.children[1].attrs["tests"] != "0" {
		t.Errorf("suites %v %v", root.children[0].attrs, root.children[1].attrs)
	}
}

// A comparison's suite is valid too, and a regression not asked about is skipped.
func TestJUnitOfAComparison(t *testing.T) {
	c := comparison(t, []float64{2000, 1990, 2010, 1995, 2005}, []float64{1500, 1490, 1510, 1495, 1505})
	for _, fail := range []bool{true, false} {
		var buf bytes.Buffer
		suite := Suite{Name: "A → B", Package: "arena.compare.sleep", Checks: Regressions(c, DefaultRegression, fail)}
		if err := WriteJUnit(&buf, "arena compare A B", []Suite{suite}); err != nil {
			t.Fatal(err)
		}
		root := validateJUnit10(t, buf.Bytes())
		if got, want := root.attrs["failures"], map[bool]string{true: "4", false: "0"}[fail]; got != want {
			t.Errorf("fail=%v: %s failures, want %s\n%s", fail, got, want, buf.String())
		}
	}
}
