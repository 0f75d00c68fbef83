package lab

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func allowed(t *testing.T) []int {
	t.Helper()
	cpus, err := AllowedCPUs()
	if err != nil {
		t.Fatalf("AllowedCPUs: %v", err)
	}
	if len(cpus) == 0 || !slices.IsSorted(cpus) {
		t.Fatalf("AllowedCPUs = %v, want a sorted, non-empty list", cpus)
	}
	return cpus
}

func TestParseCPUs(t *testing.T) {
	avail := allowed(t)
	tests := []struct {
		list  string
		want  []int
		needs int // the highest CPU the case uses
	}{
		{"0", []int{0}, 0},
		{" 0 ", []int{0}, 0},
		{"0-1", []int{0, 1}, 1},
		{"1,0", []int{0, 1}, 1},
		{"0, 1", []int{0, 1}, 1},
		{"1,0,1,0-1", []int{0, 1}, 1},
		{"1-1", []int{1}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			if !slices.Contains(avail, tt.needs) || !slices.Contains(avail, 0) {
				t.Skipf("this machine lets the tests use CPUs %s only", FormatCPUs(avail))
			}
			got, err := ParseCPUs(tt.list)
			if err != nil {
				t.Fatalf("ParseCPUs(%q): %v", tt.list, err)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ParseCPUs(%q) = %v, want %v", tt.list, got, tt.want)
			}
		})
	}
}

func TestParseCPUsRejects(t *testing.T) {
	avail := FormatCPUs(allowed(t))
	tests := []struct {
		list string
		want []string
	}{
		{"", []string{`CPU list ""`, "not a CPU number or range"}},
		{"a", []string{`"a" is not a CPU number or range`}},
		{"2-1", []string{`"2-1" is not a CPU number or range`}},
		{"-1", []string{`"-1" is not a CPU number or range`}},
		{"0-", []string{`"0-" is not a CPU number or range`}},
		{"0,,1", []string{`"" is not a CPU number or range`}},
		{"1.5", []string{`"1.5"`}},
		{"4096", []string{"CPU 4096 is not available here", "(available: " + avail + ")"}},
		{"0,4096", []string{"CPU 4096 is not available here", "(available: " + avail + ")"}},
		{"4090-4096", []string{"is not available here", "(available: " + avail + ")"}},
	}
	for _, tt := range tests {
		t.Run(tt.list, func(t *testing.T) {
			got, err := ParseCPUs(tt.list)
			if err == nil {
				t.Fatalf("ParseCPUs(%q) = %v, want an error", tt.list, got)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
		})
	}
}

// A typo such as 0-4000000000 must be refused at once, not expanded CPU by CPU.
func TestParseCPUsHugeRange(t *testing.T) {
	for _, list := range []string{"0-4000000000", "0-9223372036854775807"} {
		done := make(chan error, 1)
		go func() {
			_, err := ParseCPUs(list)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "is not available here") {
				t.Errorf("ParseCPUs(%q) = %v, want not available", list, err)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("ParseCPUs(%q) still running after 2 s", list)
		}
	}
}

func TestFormatCPUs(t *testing.T) {
	tests := []struct {
		in   []int
		want string
	}{
		{nil, ""},
		{[]int{0}, "0"},
		{[]int{0, 1}, "0,1"},
		{[]int{2, 3, 7}, "2,3,7"},
	}
	for _, tt := range tests {
		if got := FormatCPUs(tt.in); got != tt.want {
			t.Errorf("FormatCPUs(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
	// What FormatCPUs writes, ParseCPUs reads back.
	avail := allowed(t)
	back, err := ParseCPUs(FormatCPUs(avail))
	if err != nil || !slices.Equal(back, avail) {
		t.Errorf("ParseCPUs(FormatCPUs(%v)) = %v, %v", avail, back, err)
	}
}
