package profile

import (
	"cmp"
	"slices"
	"strings"

	"github.com/arena-lab/arena/internal/results"
)

// Share is one frame's shares (0..1) of two profiles' samples, in it or below it (A, B) and
// in it alone (SelfA, SelfB): a wrapper's total is large and its self small.
type Share struct {
	Name         string
	A, B         float64
	SelfA, SelfB float64
}

// Carried are the n frames whose share of a's samples most exceeds their share of b's: what
// a spends its time on that b does not, or less. Frames common to both (the event loop, the
// socket writes) cancel out, so a contender beside its stack's minimal example shows what it
// carries beyond the floor (its router, its filters), nested frames each on a line.
func Carried(a, b results.Stacks, n int) []Share {
	sa, ta := a.Shares()
	sb, tb := b.Shares()
	out := make([]Share, 0, len(ta))
	for name, v := range ta {
		if v > tb[name] {
			out = append(out, Share{Name: name, A: v, B: tb[name], SelfA: sa[name], SelfB: sb[name]})
		}
	}
	slices.SortFunc(out, func(x, y Share) int {
		if c := cmp.Compare(y.A-y.B, x.A-x.B); c != 0 {
			return c
		}
		return strings.Compare(x.Name, y.Name)
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
