package findings

import (
	"os/exec"
	"runtime/debug"
	"strings"
)

// shortRev is how many hex digits of a revision the page shows: git's --short, which the
// lab records the measuring arena's revision with (results.Environment.ArenaRev).
const shortRev = 7

// ThisArena is the revision of the arena running now, the one that judges a reproduction
// again: the binary's own VCS stamp ("+dirty" for a changed tree), else the checkout's HEAD
// at root, as the lab records the measuring arena's; "" when neither says.
func ThisArena(root string) string {
	rev, dirty := "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value[:min(shortRev, len(s.Value))]
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	if rev == "" {
		out, err := exec.Command("git", "-C", root, "rev-parse", "--short", "HEAD").Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

// MeasuredBy are the arena revisions that measured the reproduction's runs, each once in the
// order its first run was made, or why there is none.
func (f *Findings) MeasuredBy() string {
	var revs []string
	for _, r := range f.Runs {
		revs = appendNew(revs, orUnknown(r.Env.ArenaRev))
	}
	if len(revs) == 0 {
		return "no run saved"
	}
	return strings.Join(revs, ", ")
}

// JudgedByText is the arena revision that judged the runs again and rendered the page, or
// that none was recorded.
func (f *Findings) JudgedByText() string { return orUnknown(f.JudgedBy) }
