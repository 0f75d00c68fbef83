package profile

import (
	"bufio"
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/arena-lab/arena/internal/contender"
	"github.com/arena-lab/arena/internal/results"
)

//go:embed jfr/Fold.java
var foldJava []byte

// foldJFR folds the recording's execution samples between from and to with Fold.java, run by
// the contender's own JDK (the jdk.jfr.consumer API reads what that JDK wrote).
func foldJFR(jdk contender.JDK, recording string, from, to time.Time) (results.Stacks, int64, error) {
	if _, err := os.Stat(recording); err != nil {
		return nil, 0, fmt.Errorf("no JFR recording (%s): the JVM writes it on exit, and this one was killed or never exited", filepath.Base(recording))
	}
	if jdk.Home == "" {
		return nil, 0, errors.New("no JDK to read the JFR recording with")
	}
	dir, err := os.MkdirTemp("", "arena-jfr-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "Fold.java")
	if err := os.WriteFile(src, foldJava, 0o644); err != nil {
		return nil, 0, err
	}
	var stderr bytes.Buffer
	cmd := exec.Command(filepath.Join(jdk.Home, "bin", "java"), "-XX:TieredStopAtLevel=1", "-Xshare:auto", src, recording,
		strconv.FormatInt(from.UnixMilli(), 10), strconv.FormatInt(to.UnixMilli(), 10))
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %v: %s", filepath.Base(recording), err, strings.TrimSpace(stderr.String()))
	}
	return parseFolded(out)
}

// hiddenClass is the address in the name of a hidden class the JVM spins at run time: a
// lambda's (Foo$$Lambda.0x000000001f24c8a0, Foo$$Lambda/0x…) or a method handle's
// (LambdaForm$MH.0x00000000815fa400), which differs from one JVM to the next: without it the
// same frame has the same name in every profile, so repeats merge and two profiles compare
// frame by frame.
var hiddenClass = regexp.MustCompile(`(\$\$Lambda|LambdaForm\$[A-Za-z]+)[./]0x[0-9a-f]+`)

// parseFolded reads "stack count" lines, and Fold.java's "# outside N" trailer.
func parseFolded(out []byte) (results.Stacks, int64, error) {
	stacks := results.Stacks{}
	var outside int64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# outside "); ok {
			outside, _ = strconv.ParseInt(rest, 10, 64)
			continue
		}
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			return nil, 0, fmt.Errorf("folded stacks: no count in %q", line)
		}
		n, err := strconv.ParseInt(line[i+1:], 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("folded stacks: %w", err)
		}
		stacks[hiddenClass.ReplaceAllString(line[:i], "$1")] += n
	}
	return stacks, outside, sc.Err()
}
