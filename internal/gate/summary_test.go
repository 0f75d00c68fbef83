package gate

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/arena-lab/arena/internal/results/schemadoc"
)

// summary.json is written atomically beside results.json, read back as written, and every
// key it can hold is documented in docs/results.md.
func TestSummaryFile(t *testing.T) {
	run := isolationRun(t)
	g := mustParse(t, []string{FailFails, FailUntested}, "instant:p99<50ms", "errors<1%")
	s := NewSummary(run, g, append(g.Judge(run), Regressions(comparison(t, []float64{2000, 1990, 2010, 1995, 2005}, []float64{1500, 1490, 1510, 1495, 1505}), 10, true)...))
	dir := t.TempDir()
	if err := WriteSummary(dir, s); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, SummaryFile)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("summary.json: %v, %v", st, err)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*")); len(leftovers) > 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
	back, err := LoadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, s) {
		t.Errorf("read back\n%+v\nwritten\n%+v", back, s)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	schemadoc.Check(t, SummaryFile, raw, "../../docs/results.md")

	if err := WriteSummary(filepath.Join(dir, "nosuch"), s); err == nil {
		t.Error("a summary written into a missing folder")
	}
	if _, err := LoadSummary(filepath.Join(dir, "nosuch")); err == nil {
		t.Error("a missing summary read")
	}
}
