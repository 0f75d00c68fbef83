package export

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"testing"
)

// dashboardFile is the Grafana dashboard deploy/ ships for the exported series.
const dashboardFile = "../../deploy/grafana/arena-dashboard.json"

// The dashboard parses, picks its Prometheus through a variable, is templated by run,
// scenario and contender, and queries no series the exporters do not write.
func TestTheDashboardReadsWhatTheExportersWrite(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title      string
		Templating struct {
			List []struct {
				Name, Type string
				Query      any
			}
		}
		Panels []struct {
			Title      string
			Datasource struct{ Type, UID string }
			Targets    []struct {
				Expr       string
				Datasource struct{ Type, UID string }
			}
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	for _, want := range []string{"datasource", "run", "scenario", "contender"} {
		if !slices.Contains(vars, want) {
			t.Errorf("no template variable %q (has %v)", want, vars)
		}
	}
	name := regexp.MustCompile(`\barena_[a-z0-9_]+`)
	queried := map[string]bool{}
	check := func(where, expr string) {
		for _, n := range name.FindAllString(expr, -1) {
			queried[n] = true
			if !slices.Contains(MetricNames, n) {
				t.Errorf("%s queries %s, which no exporter writes (%v)", where, n, MetricNames)
			}
		}
	}
	for _, v := range d.Templating.List {
		if q, err := json.Marshal(v.Query); err == nil {
			check("variable "+v.Name, string(q))
		}
	}
	for _, p := range d.Panels {
		if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
			t.Errorf("panel %q: datasource %q, %d queries; want the variable's, and a query", p.Title, p.Datasource.UID, len(p.Targets))
		}
		for _, tg := range p.Targets {
			check("panel "+p.Title, tg.Expr)
		}
	}
	for _, want := range []string{metricRPS, metricErrors, metricP50, metricP99, metricLatency, metricCPU, metricRSS} {
		if !queried[want] {
			t.Errorf("no panel shows %s", want)
		}
	}
}
