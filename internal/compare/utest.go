package compare

import (
	"math"
	"sort"
)

// UTest is a two-sided Mann-Whitney U test of two samples: whether one tends to lie above the
// other, from their ranks alone, as benchstat compares benchmarks. It assumes nothing of
// their distributions, which is why it suits a handful of repeats.
type UTest struct {
	N1, N2 int
	U      float64 // pairs (x of the first, y of the second) with x > y, ties counting a half
	P      float64 // two-sided
	Exact  bool    // P from the exact distribution of the ranks (ties included), not the normal approximation
}

// exactUpTo is the most values in all for which P is exact: the count of ways to draw the
// ranks stays below 2^53 (C(50, 25) ≈ 1.3e14), so float64 counts them exactly.
const exactUpTo = 50

// MannWhitney tests a against b. With no values on either side, P is 1: nothing tells them
// apart.
func MannWhitney(a, b []float64) UTest {
	t := UTest{N1: len(a), N2: len(b), P: 1}
	if t.N1 == 0 || t.N2 == 0 {
		return t
	}
	ranks, ties := rank(a, b) // doubled midranks: integers, ties and all
	var r1 int
	for _, r := range ranks[:t.N1] {
		r1 += r
	}
	n1, n2, n := float64(t.N1), float64(t.N2), float64(t.N1+t.N2)
	t.U = float64(r1)/2 - n1*(n1+1)/2
	if ties == n*n*n-n { // every value the same
		return t
	}
	if t.N1+t.N2 <= exactUpTo {
		t.P, t.Exact = exactP(ranks, t.N1, r1), true
		return t
	}
	// The normal approximation, with the tie correction and the continuity correction R's
	// wilcox.test applies.
	mu := n1 * n2 / 2
	sigma := math.Sqrt(n1 * n2 / 12 * ((n + 1) - ties/(n*(n-1))))
	z := (math.Abs(t.U-mu) - 0.5) / sigma
	t.P = min(1, math.Erfc(max(z, 0)/math.Sqrt2))
	return t
}

// rank ranks a and b together: each value's doubled midrank (a's first, then b's), and the
// ties' Σ(t³ − t) for the normal approximation's variance.
func rank(a, b []float64) ([]int, float64) {
	type v struct {
		x float64
		i int
	}
	all := make([]v, 0, len(a)+len(b))
	for i, x := range a {
		all = append(all, v{x, i})
	}
	for i, x := range b {
		all = append(all, v{x, len(a) + i})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].x < all[j].x })
	ranks := make([]int, len(all))
	var ties float64
	for i := 0; i < len(all); {
		j := i
		for j < len(all) && all[j].x == all[i].x {
			j++
		}
		for k := i; k < j; k++ {
			ranks[all[k].i] = i + 1 + j // (i+1 + j) / 2, doubled
		}
		t := float64(j - i)
		ties += t*t*t - t
		i = j
	}
	return ranks, ties
}

// exactP is the two-sided P of a first sample of n1 whose doubled ranks sum to r1: the share of
// all ways to draw n1 of the ranks whose sum lies at least as far from its mean.
func exactP(ranks []int, n1, r1 int) float64 {
	total := 0
	for _, r := range ranks {
		total += r
	}
	// ways[k][s]: draws of k ranks that sum to s.
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, total+1)
	}
	ways[0][0] = 1
	for _, r := range ranks {
		for k := n1; k >= 1; k-- {
			for s := total; s >= r; s-- {
				ways[k][s] += ways[k-1][s-r]
			}
		}
	}
	mean := float64(total) * float64(n1) / float64(len(ranks))
	far := math.Abs(float64(r1)-mean) - 1e-9
	var hit, all float64
	for s, w := range ways[n1] {
		all += w
		if math.Abs(float64(s)-mean) >= far {
			hit += w
		}
	}
	return hit / all
}
