package report

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// needChromium skips a test that launches Chromium under -short (make test-unit promises
// no browser) and where Chromium is missing, except in CI, where it fails.
func needChromium(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("launches Chromium; -short runs no browser")
	}
	if _, err := FindChromium(); err != nil {
		needs(t, err.Error())
	}
}

// browserCheck writes a page with write (given the chart library's path and the page's),
// opens it in headless Chromium, checks what a reader would see (CheckInBrowser's checks)
// and returns the rendered page for a test's own checks.
func browserCheck(t *testing.T, name string, write func(libPath, out string) error) *renderedPage {
	t.Helper()
	needChromium(t)
	lib := chartLib(t)
	dir := t.TempDir()
	libPath := filepath.Join(dir, "echarts.min.js")
	if err := os.WriteFile(libPath, lib, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name+".html")
	if err := write(libPath, out); err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	dump, err := runChromium(out, "--dump-dom")
	if err != nil {
		t.Fatal(err)
	}
	page, err := parseDOM(dump)
	if err != nil {
		t.Fatalf("parsing the dumped DOM: %v", err)
	}
	t.Logf("%s: chromium took %s, %s of %s charts drawn", name, time.Since(began).Round(time.Millisecond), page.body["data-charts-drawn"], page.body["data-charts-expected"])
	if err := page.check(); err != nil {
		t.Error(err)
	}
	return page
}

// screenshot renders the page at htmlPath in a width × height window to pngPath, for
// TestScreenshots.
func screenshot(htmlPath, pngPath string, width, height int) error {
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
