package faulty

import (
	"os/exec"
	"strings"
	"testing"
)

// Nothing the arena binary runs imports the wrapped servers: only tests can misbehave so.
func TestTheBinaryCannotMisbehave(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/arena-lab/arena").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 {
		t.Fatalf("go list gave %d packages: %q", len(deps), out)
	}
	for _, d := range deps {
		if d == "github.com/arena-lab/arena/internal/faulty" {
			t.Fatal("the arena binary imports internal/faulty")
		}
	}
}
