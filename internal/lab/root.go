// Package lab runs the experiment: it builds and verifies contenders, then for every
// level, repeat and contender starts the server pinned, drives the scenario's load, probes
// both processes, stops the server and records the cell, saving results as cells finish.
package lab

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/arena-lab/arena/internal/contender"
)

// Builder builds contenders into the lab's cache with the lab's shared settings.
func (l *Lab) Builder() *contender.Builder {
	return &contender.Builder{CacheDir: filepath.Join(l.Root, ".arena", "builds"), Settings: l.Settings}
}

// FindRoot locates the lab's folder (the one holding contenders/ and scenarios/):
// $ARENA_ROOT, else the working directory or one of its parents, else the executable's.
func FindRoot() (string, error) {
	if r := os.Getenv("ARENA_ROOT"); r != "" {
		if isRoot(r) {
			return filepath.Abs(r)
		}
		return "", errors.New("ARENA_ROOT=" + r + " is not a lab: it needs both a contenders/ and a scenarios/ folder")
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, s := range starts {
		for dir := s; ; dir = filepath.Dir(dir) {
			if isRoot(dir) {
				return dir, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return "", errors.New("cannot find the arena folder (with contenders/ and scenarios/): run from inside it or set ARENA_ROOT")
}

func isRoot(dir string) bool {
	for _, sub := range []string{"contenders", "scenarios"} {
		if st, err := os.Stat(filepath.Join(dir, sub)); err != nil || !st.IsDir() {
			return false
		}
	}
	return true
}
