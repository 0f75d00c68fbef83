package results

import (
	"reflect"
	"testing"
)

func TestStacksTopCountsSelfAtTheLeafAndTotalOncePerStack(t *testing.T) {
	s := Stacks{
		"main;serve;parse":       5,
		"main;serve;write":       3,
		"main;serve;serve;parse": 2, // recursion: serve counts once in this stack's total
		"main":                   1,
	}
	if got := s.Samples(); got != 11 {
		t.Fatalf("samples %d, want 11", got)
	}
	want := []Frame{
		{Name: "parse", Self: 7, Total: 7},
		{Name: "write", Self: 3, Total: 3},
		{Name: "main", Self: 1, Total: 11},
	}
	if got := s.Top(3); !reflect.DeepEqual(got, want) {
		t.Fatalf("top %+v\nwant %+v", got, want)
	}
}

func TestFlameKeepsBranchesAboveTheFloor(t *testing.T) {
	s := Stacks{"a;b": 90, "a;c": 9, "a;d": 1}
	f := s.Flame("all", 0.05) // 5 % of 100: d (1) goes, c (9) stays
	if f.Value != 100 || len(f.Children) != 1 || f.Children[0].Name != "a" {
		t.Fatalf("root %+v; want all=100 over a", f)
	}
	var names []string
	for _, c := range f.Children[0].Children {
		names = append(names, c.Name)
	}
	if !reflect.DeepEqual(names, []string{"b", "c"}) || f.Children[0].Value != 100 {
		t.Fatalf("a's children %v (a=%d); want b, c in name order, a keeping all 100 samples", names, f.Children[0].Value)
	}
}

func TestMergeProfilesAddsRepeatsAndNamesTheMissing(t *testing.T) {
	one := Stacks{"a;b": 6, "a;c": 4}
	two := Stacks{"a;b": 2, "a;d": 8}
	p1 := &Profile{Tool: "pprof", Samples: 10, Top: one.Top(TopFrames), Flame: one.Flame("all", 0)}
	p2 := &Profile{Tool: "pprof", Samples: 10, Top: two.Top(TopFrames), Flame: two.Flame("all", 0)}
	m := MergeProfiles([]*Profile{p1, {Tool: "pprof", Error: "killed"}, p2})
	if m == nil || m.Samples != 20 || m.Flame.Value != 20 {
		t.Fatalf("merged %+v; want 20 samples", m)
	}
	if m.Top[0] != (Frame{Name: "b", Self: 8, Total: 8}) || m.Top[1] != (Frame{Name: "d", Self: 8, Total: 8}) {
		t.Fatalf("top %+v; want b and d at 8 samples each", m.Top)
	}
	if m.Error == "" {
		t.Fatal("a repeat without a profile is not named")
	}
	if p1.Flame.Value != 10 {
		t.Fatal("merging changed a repeat's own tree")
	}
	if MergeProfiles([]*Profile{{Error: "x"}}) != nil {
		t.Fatal("no samples anywhere, yet a merged profile")
	}
}
