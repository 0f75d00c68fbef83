package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// chromiumTimeout bounds one headless run; a page that draws offline takes seconds.
const chromiumTimeout = 60 * time.Second

// errNoChromium says that no headless browser is installed (Debian: apt-get install chromium).
var errNoChromium = errors.New("chromium is not installed: neither chromium nor chromium-browser is on PATH")

func findChromium() (string, error) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, nil
		}
	}
	return "", errNoChromium
}

// runChromium opens htmlPath in a headless Chromium with a fresh profile and extra flags,
// and returns what it printed on stdout. The flags keep it off the network and give the
// page's scripts virtual time to finish before Chromium dumps or shoots it.
func runChromium(htmlPath string, extra ...string) ([]byte, error) {
	bin, err := findChromium()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(htmlPath)
	if err != nil {
		return nil, err
	}
	profile, err := os.MkdirTemp("", "arena-chromium-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(profile)

	args := []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + profile, "--virtual-time-budget=10000",
	}
	args = append(args, extra...)
	args = append(args, (&url.URL{Scheme: "file", Path: abs}).String())

	ctx, cancel := context.WithTimeout(context.Background(), chromiumTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	// Chromium forks renderers and helpers; on timeout the whole group must go.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer in %s", chromiumTimeout)
		}
		return nil, fmt.Errorf("chromium: %w\n%s", err, tail(stderr.String(), 20))
	}
	return stdout.Bytes(), nil
}

// Screenshot renders the report at htmlPath in a width × height window to pngPath.
func Screenshot(htmlPath, pngPath string, width, height int) error {
	abs, err := filepath.Abs(pngPath)
	if err != nil {
		return err
	}
	// A picture left from before must not pass for this one.
	if err := os.Remove(abs); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	if _, err := runChromium(htmlPath, "--hide-scrollbars", "--screenshot="+abs, fmt.Sprintf("--window-size=%d,%d", width, height)); err != nil {
		return err
	}
	if _, err := os.Stat(abs); err != nil {
		return fmt.Errorf("chromium wrote no screenshot: %w", err)
	}
	return nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
