package findings

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arena-lab/arena/internal/results"
)

// TestBuildReadsNoRunOutsideItsReproduction: a step whose run id is a path (a record built
// past the reader's check) is refused, naming the id; the run it points at, beside the
// reproduction's folder, is neither read into the findings nor linked.
func TestBuildReadsNoRunOutsideItsReproduction(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "reproduce-x")
	outside := filepath.Join(parent, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := results.Save(&results.Run{Schema: results.SchemaVersion, ID: "outside", Status: results.RunComplete}, outside); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"../outside", outside} {
		rep := &results.Reproduction{Schema: results.ReproductionSchema, ID: "reproduce-x", Status: results.RunComplete,
			Steps: []results.Step{{Part: results.PartStudies, RunSpec: results.RunSpec{Scenario: "sleep"}, Run: id, Status: results.RunComplete}}}
		f, err := Build(rep, dir, registry)
		if err == nil || !strings.Contains(err.Error(), `id "`+id+`"`) {
			t.Errorf("a step run %q: findings %v, %v; want a refusal naming it", id, f != nil && len(f.Runs) > 0, err)
		}
	}
}
