package cmd

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arena-lab/arena/internal/postgres"
)

func TestDBRejectsBadInput(t *testing.T) {
	setup(t)
	refused(t, []string{"db", "--port", "-1"}, "--port -1: give 0 (any free port) to 65535")
	refused(t, []string{"db", "--cpus", "x"}, "--cpus")
	refused(t, []string{"db", "extra"}, `unknown command "extra" for "arena db"`)
}

// arena db prints the URL of a cluster that holds the data set behind its password, and
// removes the cluster when stopped.
func TestDBServesTheDataSet(t *testing.T) {
	setup(t)
	bin, err := postgres.FindBin()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "arena-postgres-*"))
	var made []string // the clusters that appeared while it served: its own
	t.Run("serves", func(t *testing.T) {
		url := serveWithin(t, time.Minute, "db", "--rows", "300")
		if !regexp.MustCompile(`^postgres://arena:[0-9a-f]{48}@127\.0\.0\.1:\d+/arena$`).MatchString(url) {
			t.Fatalf("arena db printed %q, want its URL", url)
		}
		out, err := exec.Command(filepath.Join(bin, "psql"), "-X", "-A", "-t", url, "-c", "SELECT count(*), max(id) FROM data").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "300|300" {
			t.Errorf("psql: %q (%v), want 300|300", out, err)
		}
		during, _ := filepath.Glob(filepath.Join(os.TempDir(), "arena-postgres-*"))
		for _, d := range during {
			if !slices.Contains(before, d) {
				made = append(made, d)
			}
		}
	}) // its cleanup stops arena db
	if len(made) == 0 {
		t.Fatal("no cluster folder appeared while arena db served")
	}
	for _, d := range made {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s is left after arena db stopped (%v)", d, err)
		}
	}
}
