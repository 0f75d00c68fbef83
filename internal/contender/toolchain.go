package contender

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// MinJava is the oldest JDK the contenders build and run on (virtual threads).
const MinJava = 21

// JDKHint says where to get a JDK of MinJava or newer: Debian 12 packages only OpenJDK 17
// (openjdk-21 is Debian 13's and Ubuntu 24.04's), so the hint names what exists everywhere.
const JDKHint = "install a JDK 21 or newer, e.g. Temurin (adoptium.net: its apt repository or tarball), or apt-get install openjdk-21-jdk-headless on Debian 13 or Ubuntu 24.04 (Debian 12 has only 17); arena finds one under /usr/lib/jvm, or set ARENA_JAVA_HOME to its folder"

// JDK is a Java installation.
type JDK struct {
	Home    string
	Version string // e.g. "25.0.1"
	Major   int
}

// FindJDK finds a JDK of MinJava or newer: $ARENA_JAVA_HOME if set (and then only it),
// else $JAVA_HOME, else the newest under /usr/lib/jvm. The machine's default java may be
// older, so it is never assumed.
func FindJDK() (JDK, error) {
	if h := os.Getenv("ARENA_JAVA_HOME"); h != "" {
		j, err := readJDK(h)
		if err != nil {
			return JDK{}, fmt.Errorf("ARENA_JAVA_HOME=%s: %w", h, err)
		}
		if j.Major < MinJava {
			return JDK{}, fmt.Errorf("ARENA_JAVA_HOME=%s is Java %s; contenders need %d or newer", h, j.Version, MinJava)
		}
		return j, nil
	}
	var candidates []string
	if h := os.Getenv("JAVA_HOME"); h != "" {
		candidates = append(candidates, h)
	}
	homes, _ := filepath.Glob("/usr/lib/jvm/*")
	candidates = append(candidates, homes...)
	var best JDK
	var seen []string
	for _, h := range candidates {
		j, err := readJDK(h)
		if err != nil {
			continue
		}
		seen = append(seen, fmt.Sprintf("%s (%s)", h, j.Version))
		if j.Major >= MinJava && j.Major > best.Major {
			best = j
		}
	}
	if best.Home == "" {
		found := "none"
		if len(seen) > 0 {
			found = strings.Join(seen, ", ")
		}
		return JDK{}, fmt.Errorf("no JDK %d or newer found (looked at $JAVA_HOME and /usr/lib/jvm; found: %s): %s", MinJava, found, JDKHint)
	}
	return best, nil
}

// readJDK reads a JDK's release file; a home without bin/javac is not a JDK.
func readJDK(home string) (JDK, error) {
	if _, err := os.Stat(filepath.Join(home, "bin", "javac")); err != nil {
		return JDK{}, fmt.Errorf("no bin/javac: not a JDK")
	}
	f, err := os.Open(filepath.Join(home, "release"))
	if err != nil {
		return JDK{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "JAVA_VERSION="); ok {
			v = strings.Trim(v, `"`)
			major, _ := strconv.Atoi(strings.SplitN(strings.TrimPrefix(v, "1."), ".", 2)[0])
			if strings.HasPrefix(v, "1.") {
				major, _ = strconv.Atoi(strings.SplitN(v[2:], ".", 2)[0])
			}
			return JDK{Home: home, Version: v, Major: major}, nil
		}
	}
	return JDK{}, fmt.Errorf("no JAVA_VERSION in %s/release", home)
}

// Versions reports a toolchain's version line, or "" when it is not installed.
func Versions(cmd string, args ...string) string {
	out, err := exec.Command(cmd, args...).CombinedOutput()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}
