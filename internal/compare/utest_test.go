package compare

import (
	"math"
	"testing"
)

func near(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Max(1, math.Abs(want)) }

// Small samples against the exact distribution's textbook values: complete separation of n
// and n is 2 / C(2n, n).
func TestMannWhitneyExact(t *testing.T) {
	cases := []struct {
		name string
		a, b []float64
		u, p float64
	}{
		{"3 and 3 apart: 2/20, never below 0.05", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1},
		{"4 and 4 apart: 2/70", []float64{2, 1, 3, 5}, []float64{12, 11, 13, 15}, 0, 0.028571428571428577},
		{"the other way round", []float64{12, 11, 13, 15}, []float64{2, 1, 3, 5}, 16, 0.028571428571428577},
		{"5 and 5 apart: 2/252", []float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, 0, 2.0 / 252},
		{"interleaved, no ties", []float64{2, 1, 3, 5}, []float64{0, 4, 6, 7}, 5, 0.48571428571428577},
		{"4 and 5, U = 1: 2 × 2/126", []float64{1, 2, 3, 5}, []float64{4, 6, 7, 8, 9}, 1, 4.0 / 126},
		{"the same sample twice", []float64{2, 1, 3, 5}, []float64{2, 1, 3, 5}, 8, 1},
	}
	for _, tt := range cases {
		got := MannWhitney(tt.a, tt.b)
		if !got.Exact || got.N1 != len(tt.a) || got.N2 != len(tt.b) || !near(got.U, tt.u) || !near(got.P, tt.p) {
			t.Errorf("%s: %+v, want U %v, P %v, exact", tt.name, got, tt.u, tt.p)
		}
	}
}

// Ties are ranked by their midranks, and the exact P counts the draws of those ranks.
func TestMannWhitneyTies(t *testing.T) {
	// Ranks of {1,1,2} ∪ {2,3,3}: 1.5 1.5 3.5 | 3.5 5.5 5.5; U = 0.5. Of the C(6,3) = 20 draws
	// of three ranks, those whose sum is as far from its mean (10.5) as 6.5: only {1.5,1.5,3.5}
	// and {3.5,5.5,5.5}, each drawable 2 ways (which 3.5): 4 / 20.
	got := MannWhitney([]float64{1, 1, 2}, []float64{2, 3, 3})
	if !near(got.U, 0.5) || !near(got.P, 0.2) {
		t.Errorf("%+v, want U 0.5, P 0.2", got)
	}
	if same := MannWhitney([]float64{7, 7, 7}, []float64{7, 7}); same.P != 1 {
		t.Errorf("every value the same: P %v, want 1", same.P)
	}
	if empty := MannWhitney(nil, []float64{1}); empty.P != 1 {
		t.Errorf("an empty sample: P %v, want 1", empty.P)
	}
}

// Large samples against R's wilcox.test (the normal approximation, tie and continuity
// corrected): l1 <- seq(0, 499)*2; l2 <- seq(0, 599)*2 - 41; l3 <- l2; l3[1:30] <- l1[1:30].
func TestMannWhitneyLarge(t *testing.T) {
	l1 := make([]float64, 500)
	for i := range l1 {
		l1[i] = float64(i * 2)
	}
	l2 := make([]float64, 600)
	for i := range l2 {
		l2[i] = float64(i*2 - 41)
	}
	l3 := append([]float64(nil), l2...)
	copy(l3[:30], l1[:30])
	for _, tt := range []struct {
		name string
		a, b []float64
		u, p float64
	}{
		{"no ties", l1, l2, 135250, 0.0049335360814172224},
		{"the same", l1, l1, 125000, 1},
		{"30 ties", l1, l3, 134845, 0.0038703814239617884},
	} {
		got := MannWhitney(tt.a, tt.b)
		if got.Exact || !near(got.U, tt.u) || math.Abs(got.P-tt.p) > 1e-9 {
			t.Errorf("%s: %+v, want U %v, P %v by the normal approximation", tt.name, got, tt.u, tt.p)
		}
	}
}
