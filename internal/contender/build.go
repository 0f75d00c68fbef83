package contender

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// skipDirs are build outputs and caches under a source folder: they never count as sources
// (Python writes __pycache__ beside the modules it imports, at start, not at build).
var skipDirs = map[string]bool{"target": true, "node_modules": true, "build": true, ".git": true, "bin": true, "out": true,
	".venv": true, "__pycache__": true}

// SourceHash fingerprints what a build reads: the build command, the runtime and every
// source file's path and bytes. The same hash means the same build.
func SourceHash(m *Manifest) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "build=%s\nruntime=%s\n", m.Build, m.Runtime)
	var files []string
	for _, src := range m.Sources {
		root := filepath.Join(m.Dir, src)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != root && skipDirs[d.Name()] {
					return filepath.SkipDir
				}
				return nil
			}
			files = append(files, p)
			return nil
		})
		if err != nil {
			return "", fmt.Errorf("contender %s: source %q: %w", m.Name, src, err)
		}
	}
	sort.Strings(files)
	for _, p := range files {
		rel, _ := filepath.Rel(m.Dir, p)
		f, err := os.Open(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "file=%s\n", filepath.ToSlash(rel))
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// Builder builds contenders and remembers, per contender, the hash of its last good build.
type Builder struct {
	CacheDir string // e.g. <lab>/.arena/builds
	Settings Settings
}

// BuildResult says what Build did.
type BuildResult struct {
	Hash     string
	Built    bool // false: the cached build was current
	Duration time.Duration
	Log      string
}

// Build runs the contender's build unless its last good build had the same source hash
// (and its artifact, if it names one, is still there). force rebuilds anyway.
func (b *Builder) Build(ctx context.Context, m *Manifest, force bool) (BuildResult, error) {
	hash, err := SourceHash(m)
	if err != nil {
		return BuildResult{}, err
	}
	res := BuildResult{Hash: hash, Log: filepath.Join(b.CacheDir, m.Name+".log")}
	stamp := filepath.Join(b.CacheDir, m.Name+".hash")
	if m.Build == "" {
		return res, nil
	}
	if !force {
		if old, err := os.ReadFile(stamp); err == nil && strings.TrimSpace(string(old)) == hash && m.artifactPresent() {
			return res, nil
		}
	}
	if err := os.MkdirAll(b.CacheDir, 0o755); err != nil {
		return res, err
	}
	logf, err := os.Create(res.Log)
	if err != nil {
		return res, err
	}
	defer logf.Close()
	env, err := b.Settings.Env(m, nil)
	if err != nil {
		return res, err
	}
	start := time.Now()
	cmd := exec.CommandContext(ctx, "sh", "-c", m.Build)
	cmd.Dir = m.Dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logf, logf
	setProcessGroup(cmd)
	err = cmd.Run()
	res.Duration, res.Built = time.Since(start), true
	if err != nil {
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		return res, fmt.Errorf("building %s failed (%v); last lines of %s:\n%s", m.Name, err, res.Log, indent(lastLines(res.Log, 15)))
	}
	if !m.artifactPresent() {
		return res, fmt.Errorf("building %s succeeded but its artifact %s is missing", m.Name, m.Artifact)
	}
	return res, os.WriteFile(stamp, []byte(hash+"\n"), 0o644)
}

func (m *Manifest) artifactPresent() bool {
	if m.Artifact == "" {
		return true
	}
	_, err := os.Stat(filepath.Join(m.Dir, m.Artifact))
	return err == nil
}

func lastLines(path string, n int) []string {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

func indent(lines []string) string {
	return "    " + strings.Join(lines, "\n    ")
}
