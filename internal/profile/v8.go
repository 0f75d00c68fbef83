package profile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// cpuProfile is V8's .cpuprofile (what node --cpu-prof writes, and profiler.cjs): a call
// tree of nodes and the node each sample hit, from StartTime to EndTime (µs).
type cpuProfile struct {
	Nodes []struct {
		ID        int `json:"id"`
		CallFrame struct {
			FunctionName string `json:"functionName"`
			URL          string `json:"url"`
			LineNumber   int    `json:"lineNumber"` // from 0
		} `json:"callFrame"`
		Children []int `json:"children"`
	} `json:"nodes"`
	StartTime int64 `json:"startTime"`
	EndTime   int64 `json:"endTime"`
	Samples   []int `json:"samples"`
}

// v8Skipped are V8's pseudo-frames that are no work: the loop waiting for events, and the
// tree's root.
var v8Skipped = map[string]bool{"(idle)": true, "(root)": true}

// foldV8Dir folds every process's profile in dir (a cluster's workers write one each) into
// one set of stacks. profiler.cjs ran each only over the load: every sample is kept.
func foldV8Dir(dir string) (results.Stacks, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.cpuprofile"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no .cpuprofile in %s: no Node process of the contender wrote one (its profiler starts and stops on SIGUSR2; was it killed?)", dir)
	}
	stacks := results.Stacks{}
	for _, f := range files {
		p, err := readCPUProfile(f)
		if err != nil {
			return stacks, err
		}
		foldV8(p, stacks)
	}
	return stacks, nil
}

func readCPUProfile(path string) (*cpuProfile, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var p cpuProfile
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return &p, nil
}

// foldV8 adds p's samples of work into stacks.
func foldV8(p *cpuProfile, stacks results.Stacks) {
	parent := map[int]int{}
	name := map[int]string{}
	for _, n := range p.Nodes {
		for _, c := range n.Children {
			parent[c] = n.ID
		}
		cf := n.CallFrame
		fn := cf.FunctionName
		if fn == "" {
			fn = "(anonymous)"
		}
		if cf.URL != "" {
			fn += " " + shortURL(cf.URL) + fmt.Sprintf(":%d", cf.LineNumber+1)
		}
		name[n.ID] = frameName(fn)
	}
	folded := map[int]string{} // node → its stack, built once
	stackOf := func(id int) string {
		if s, ok := folded[id]; ok {
			return s
		}
		var frames []string
		for at, ok := id, true; ok; at, ok = parent[at] {
			if n := name[at]; !v8Skipped[n] {
				frames = append(frames, n)
			}
		}
		for i, j := 0, len(frames)-1; i < j; i, j = i+1, j-1 {
			frames[i], frames[j] = frames[j], frames[i]
		}
		s := strings.Join(frames, ";")
		folded[id] = s
		return s
	}
	for _, id := range p.Samples {
		if s := stackOf(id); !v8Skipped[name[id]] && s != "" {
			stacks[s]++
		}
	}
}

// shortURL keeps what names a script: the package path below node_modules, or the file's
// name for the application's own, node:internal/… as it is.
func shortURL(u string) string {
	u = strings.TrimPrefix(u, "file://")
	if i := strings.LastIndex(u, "node_modules/"); i >= 0 {
		return u[i+len("node_modules/"):]
	}
	if strings.HasPrefix(u, "node:") {
		return u
	}
	return filepath.Base(u)
}
