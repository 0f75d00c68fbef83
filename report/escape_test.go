package report

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// payload runs script when a browser parses it as HTML: an image that fails to load.
func payload(script string) string { return `<img src=x onerror=` + script + `>` }

// hostile is run with every string a reader of results.json could plant in the page set to
// payload: the contender's name (in tables, chart legends, axes and tooltips), verdicts,
// claims, notes, outcomes.
func hostile(t *testing.T, run *results.Run, name string) *results.Run {
	t.Helper()
	raw, err := json.Marshal(run)
	if err != nil {
		t.Fatal(err)
	}
	quoted, _ := json.Marshal(payload("window.x=1"))
	raw = []byte(strings.ReplaceAll(string(raw), `"`+name+`"`, string(quoted)))
	var out results.Run
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	for i := range out.Verdicts {
		out.Verdicts[i].Why += payload("window.x=2")
	}
	for i := range out.Claims {
		out.Claims[i].Why += payload("window.x=3")
	}
	out.Scenario.Notes = append(out.Scenario.Notes, payload("window.x=4"))
	out.Env.Notes = append(out.Env.Notes, payload("window.x=5"))
	for i := range out.Cells {
		out.Cells[i].Outcome.Detail += payload("window.x=6")
	}
	return &out
}

// tipper opens the tooltip of every series of every chart, then plants the payload on purpose
// (window.y, the control: it proves this browser runs such a payload at all) and writes what
// came of both into the body's attributes.
const tipper = `<script>
setTimeout(function () {
  var tips = 0;
  document.querySelectorAll('.arena-chart').forEach(function (el) {
    var c = echarts.getInstanceByDom(el);
    if (!c) return;
    (c.getOption().series || []).forEach(function (s, si) {
      for (var di = 0; di < 3; di++) c.dispatchAction({ type: 'showTip', seriesIndex: si, dataIndex: di });
      Array.prototype.forEach.call(el.querySelectorAll('div'), function (d) {
        if (d.textContent.indexOf('onerror') >= 0) tips++;
      });
    });
  });
  var control = document.createElement('div');
  control.innerHTML = '<img src=x onerror=window.y=1>';
  document.body.appendChild(control);
  setTimeout(function () {
    document.body.dataset.x = String(window.x || 0);
    document.body.dataset.y = String(window.y || 0);
    document.body.dataset.tips = String(tips);
  }, 1000);
}, 300);
</script>
</body>`

// A contender named <img src=x onerror=…> does nothing in headless Chromium, wherever the
// report or the matrix places its name: tables, charts, and the tooltips echarts renders as
// HTML.
func TestHostileNamesDoNothingInTheBrowser(t *testing.T) {
	t.Parallel()
	for name, write := range map[string]func(lib, out string) error{
		"report": func(lib, out string) error { return WriteFile(hostile(t, fixtureRun(), slow), lib, out) },
		"closed": func(lib, out string) error { return WriteFile(hostile(t, fixtureDownstream(), "vertx"), lib, out) },
		"matrix": func(lib, out string) error {
			return WriteMatrix([]*results.Run{hostile(t, fixtureRun(), slow), hostile(t, fixtureStream(t), "netty")}, MatrixOptions{}, lib, out)
		},
	} {
		t.Run(name, func(t *testing.T) {
			page := browserCheck(t, "hostile-"+name, func(lib, out string) error {
				if err := write(lib, out); err != nil {
					return err
				}
				raw, err := os.ReadFile(out)
				if err != nil {
					return err
				}
				end := strings.LastIndex(string(raw), "</body>") // the chart library holds one too
				return os.WriteFile(out, append(raw[:end:end], tipper+string(raw[end+len("</body>"):])...), 0o644)
			})
			switch {
			case page.body["data-y"] != "1":
				t.Fatalf("the control payload did not run (data-y %q): this check cannot tell", page.body["data-y"])
			case page.body["data-tips"] == "" || page.body["data-tips"] == "0":
				t.Fatalf("no tooltip showed the hostile name (data-tips %q): tooltips were not checked", page.body["data-tips"])
			case page.body["data-x"] != "0":
				t.Fatalf("a hostile string ran as HTML: window.x = %s", page.body["data-x"])
			}
		})
	}
}
