package report

import (
	_ "embed"
	"fmt"
	"io"
	"path/filepath"

	"github.com/arena-lab/arena/internal/findings"
	"github.com/arena-lab/arena/internal/results"
)

//go:embed findings.html
var findingsTemplate string

var findingsPage = parsePage("findings", findingsTemplate, matrixParts)

// findingsView is a reproduction's findings page: each study's claims with its figures
// beside ours, then the matrix of every contender on every scenario.
type findingsView struct {
	*findings.Findings
	Matrix  *matrixView
	Reports map[string]string // each run's report, relative to the page
	assets
}

// Title is the page's title.
func (v *findingsView) Title() string { return "arena findings · " + v.Reproduction.ID }

// Elapsed is how long the reproduction took, so far.
func (v *findingsView) Elapsed() string {
	if v.Reproduction.Finished == nil {
		return ""
	}
	return v.Reproduction.Finished.Sub(v.Reproduction.Started).Round(60e9).String()
}

// Report is the link to a run's report, "" where it has none.
func (v *findingsView) Report(id string) string { return v.Reports[id] }

// RenderFindings writes the findings page to w, with chartLib (echarts.min.js) inlined. The
// page sits in the reproduction's folder: each run's report is linked as <run>/report.html.
func RenderFindings(f *findings.Findings, builds map[string]string, claims func(*results.Run) []results.Claim, chartLib []byte, w io.Writer) error {
	v := &findingsView{Findings: f, Reports: map[string]string{}}
	var runs []*results.Run
	for _, r := range f.Runs {
		runs = append(runs, r.Run)
		v.Reports[r.ID] = filepath.ToSlash(filepath.Join(r.ID, "report.html"))
	}
	bars := []barsData{}
	if len(runs) > 0 {
		m, b, err := buildMatrix(runs, MatrixOptions{Reports: v.Reports, Builds: builds, Claims: claims})
		if err != nil {
			return err
		}
		v.Matrix, bars = m, b
	}
	var err error
	if v.assets, err = newAssets(chartLib, chartData{Levels: []levelData{}, Curves: []curveData{}, Bars: bars}); err != nil {
		return fmt.Errorf("report: findings: %w", err)
	}
	return execute(findingsPage, v, w)
}

// WriteFindings renders the findings page to outPath, replacing it only once complete.
func WriteFindings(f *findings.Findings, builds map[string]string, claims func(*results.Run) []results.Claim, chartLibPath, outPath string) error {
	return writeAtomic(chartLibPath, outPath, func(lib []byte, w io.Writer) error { return RenderFindings(f, builds, claims, lib, w) })
}
