package agent

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// entry is one member of a test archive: a header, and a regular file's content.
type entry struct {
	hdr  tar.Header
	body string
}

func file(name, body string) entry {
	return entry{tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body))}, body}
}

// tarGz is the gzipped tar of entries.
func tarGz(t testing.TB, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, e := range entries {
		hdr := e.hdr
		if err := tw.WriteHeader(&hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// outside is what of parent is not its "run" folder, and the links anywhere in it: what an
// extraction into parent/run must never leave.
func outside(t testing.TB, parent string) []string {
	t.Helper()
	var bad []string
	_ = filepath.WalkDir(parent, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == parent {
			return err
		}
		rel, _ := filepath.Rel(parent, path)
		if rel != "run" && !strings.HasPrefix(rel, "run"+string(filepath.Separator)) || d.Type()&fs.ModeSymlink != 0 {
			bad = append(bad, rel)
		}
		return nil
	})
	return bad
}

// TestExtractionBounds replays issue 34 (7): a run's archive from a server agent (or someone
// in its place) that names paths outside the folder, links, devices, too many entries or too
// many bytes, or that would be unpacked through a link, is refused and writes nothing outside.
func TestExtractionBounds(t *testing.T) {
	defer func(b int64, f int) { maxArchiveBytes, maxArchiveFiles = b, f }(maxArchiveBytes, maxArchiveFiles)
	maxArchiveBytes, maxArchiveFiles = 100, 5
	link := func(name, to string, kind byte) entry {
		return entry{tar.Header{Name: name, Linkname: to, Typeflag: kind}, ""}
	}
	cases := []struct {
		name, want string
		entries    []entry
	}{
		{"a path with ..", "outside", []entry{file("../escaped", "x")}},
		{"an absolute path", "outside", []entry{file("/tmp/escaped", "x")}},
		{"a symbolic link", "no links", []entry{link("l", "/etc", tar.TypeSymlink), file("l/passwd", "x")}},
		{"a hard link", "no links", []entry{link("h", "/etc/passwd", tar.TypeLink)}},
		{"a device", "no links", []entry{{tar.Header{Name: "dev", Typeflag: tar.TypeChar, Devmajor: 1, Devminor: 3}, ""}}},
		{"too many entries", "more than 5", []entry{file("1", ""), file("2", ""), file("3", ""), file("4", ""), file("5", ""), file("6", "")}},
		{"too many bytes", "pass 100 bytes", []entry{file("a", strings.Repeat("a", 60)), file("b", strings.Repeat("b", 60))}},
	}
	for _, c := range cases {
		parent := t.TempDir()
		err := extractTarGz(bytes.NewReader(tarGz(t, c.entries...)), filepath.Join(parent, "run"))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want refused saying %q", c.name, err, c.want)
		}
		if bad := outside(t, parent); len(bad) > 0 {
			t.Errorf("%s: left %v", c.name, bad)
		}
	}
	parent, theirs := t.TempDir(), t.TempDir()
	if err := os.Symlink(theirs, filepath.Join(parent, "run")); err != nil {
		t.Fatal(err)
	}
	if err := extractTarGz(bytes.NewReader(tarGz(t, file("results.json", "{}"))), filepath.Join(parent, "run")); err == nil {
		t.Error("a run's folder that is a link was unpacked into")
	}
	if entries, _ := os.ReadDir(theirs); len(entries) != 0 {
		t.Errorf("the link's folder holds %d entries", len(entries))
	}
	parent = t.TempDir()
	good := tarGz(t, entry{tar.Header{Name: "logs", Typeflag: tar.TypeDir, Mode: 0o755}, ""}, file("logs/a.log", "hello"), file("results.json", "{}"))
	if err := extractTarGz(bytes.NewReader(good), filepath.Join(parent, "run")); err != nil {
		t.Fatalf("a run's folder: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(parent, "run", "logs", "a.log")); err != nil || string(b) != "hello" {
		t.Errorf("logs/a.log: %q %v", b, err)
	}
}

// TestCoordinatorCapsAnswers: an agent's answer past the bound is refused, not read whole.
func TestCoordinatorCapsAnswers(t *testing.T) {
	defer func(n int64) { maxAnswer = n }(maxAnswer)
	maxAnswer = 1 << 10
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"progress":"` + strings.Repeat("x", 4<<10) + `"}` + "\n"))
	}))
	defer srv.Close()
	r := &Remote{addr: strings.TrimPrefix(srv.URL, "http://"), scheme: "http", client: srv.Client(), hello: Hello{Name: "big"}}
	if _, err := r.RunRemote(context.Background(), RunRequest{Spec: remoteSpec}, &bytes.Buffer{}); err == nil {
		t.Error("a run's event past the bound was read")
	}
	var v map[string]any
	req, _ := r.request(context.Background(), http.MethodGet, "/v1/hello", nil)
	if err := r.do(req, &v); err == nil {
		t.Error("an answer past the bound was decoded")
	}
}

// FuzzExtractTarGz: whatever the archive, extraction writes nothing outside the run's folder,
// makes no link, and holds to the entry bound.
func FuzzExtractTarGz(f *testing.F) {
	f.Add(tarGz(f, file("results.json", "{}"), file("logs/a.log", "x")))
	f.Add(tarGz(f, file("../x", "x")))
	f.Add(tarGz(f, file("/abs", "x")))
	f.Add(tarGz(f, entry{tar.Header{Name: "l", Linkname: "..", Typeflag: tar.TypeSymlink}, ""}, file("l/x", "x")))
	f.Add(tarGz(f, file("a/../../b", "x")))
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		parent := t.TempDir()
		_ = extractTarGz(bytes.NewReader(data), filepath.Join(parent, "run"))
		if bad := outside(t, parent); len(bad) > 0 {
			t.Fatalf("left %v", bad)
		}
		n := 0
		_ = filepath.WalkDir(filepath.Join(parent, "run"), func(string, fs.DirEntry, error) error { n++; return nil })
		if n > maxArchiveFiles+1 {
			t.Fatalf("%d entries unpacked, bound %d", n, maxArchiveFiles)
		}
	})
}
