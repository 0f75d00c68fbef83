// Package report renders a run's results.json as one self-contained HTML page: tables
// drawn in Go, charts drawn in the browser by the echarts library inlined into the page,
// so that the file opens offline and can be mailed or archived as it is.
package report

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/arena-lab/arena/internal/results"
)

var (
	//go:embed page.html
	pagePartials string
	//go:embed template.html
	pageTemplate string
	//go:embed style.css
	styleCSS string
	//go:embed app.js
	appJS string
)

var page = parsePage("report", pageTemplate)

// parsePage parses a page's template with the partials every page shares, and those it
// shares with some (e.g. the matrix's table).
func parsePage(name, text string, partials ...string) *template.Template {
	t := template.Must(template.New(name).Funcs(funcs).Parse(pagePartials))
	for _, p := range partials {
		t = template.Must(t.Parse(p))
	}
	return template.Must(t.Parse(text))
}

// assets are what every page inlines: the style, the chart library, the page's script and
// its chart data.
type assets struct {
	CSS      template.CSS
	App      template.JS
	ChartLib template.JS
	Data     template.JS
}

func newAssets(chartLib []byte, data any) (assets, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return assets{}, fmt.Errorf("report: chart data: %w", err)
	}
	return assets{
		CSS: template.CSS(styleCSS), App: template.JS(appJS),
		ChartLib: template.JS(scriptEnd.ReplaceAll(chartLib, []byte(`<\/$1`))),
		Data:     template.JS(raw), // json.Marshal escapes <, > and &, so it cannot leave the <script>
	}, nil
}

// execute renders a page in full before writing any of it.
func execute(t *template.Template, v any, w io.Writer) error {
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// ChartLibPath is where `npm ci` in report/web puts the chart library the page inlines.
func ChartLibPath(labRoot string) string {
	return filepath.Join(labRoot, "report", "web", "node_modules", "echarts", "dist", "echarts.min.js")
}

// scriptEnd matches what would close an inline <script> early; the library has none
// today, and "<\/script" means the same to JavaScript should a later version gain one.
var scriptEnd = regexp.MustCompile(`(?i)</(script)`)

// Render writes the report of run to w, with chartLib (echarts.min.js) inlined.
func Render(run *results.Run, chartLib []byte, w io.Writer) error {
	if run == nil {
		return errors.New("report: no run to render")
	}
	v := buildPage(run)
	var err error
	if v.assets, err = newAssets(chartLib, buildChartData(v)); err != nil {
		return err
	}
	return execute(page, v, w)
}

// WriteFile renders run to outPath, replacing it only once the new page is complete.
func WriteFile(run *results.Run, chartLibPath, outPath string) error {
	return writeAtomic(chartLibPath, outPath, func(lib []byte, w io.Writer) error { return Render(run, lib, w) })
}

// writeAtomic reads the chart library and renders with it to outPath, replacing it only
// once the new page is complete.
func writeAtomic(chartLibPath, outPath string, render func(lib []byte, w io.Writer) error) error {
	lib, err := os.ReadFile(chartLibPath)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("report: chart library %s is missing: run `npm ci` in report/web", chartLibPath)
	}
	if err != nil {
		return fmt.Errorf("report: chart library: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(outPath), "."+filepath.Base(outPath)+".*")
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if err := render(lib, tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil { // CreateTemp's 0600 would hide the report from others
		tmp.Close()
		return fmt.Errorf("report: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := os.Rename(tmp.Name(), outPath); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
