package lab

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/arena-lab/arena/internal/contender"
)

// The Node version recorded with a run is the lab's own node's (what the node contenders
// run on), read from the binary, not the machine's node on PATH; none when it is not installed.
func TestEnvironmentRecordsTheLabsNode(t *testing.T) {
	root := t.TempDir()
	if got := Environment(root, contender.Settings{HeapMB: 256}, []int{0}, []int{0}).NodeVersion; got != "" {
		t.Errorf("no lab Node: NodeVersion %q, want none", got)
	}
	bin := filepath.Join(contender.NodeHome(root), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "node"), []byte("#!/bin/sh\necho v"+contender.NodeVersion+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Environment(root, contender.Settings{HeapMB: 256}, []int{0}, []int{0}).NodeVersion; got != "v"+contender.NodeVersion {
		t.Errorf("NodeVersion %q, want the lab's node's v%s", got, contender.NodeVersion)
	}
}
