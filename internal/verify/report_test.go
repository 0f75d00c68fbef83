package verify

import "testing"

// A report tallies its groups in order, and passes a group only when it was checked and
// every check of it passed.
func TestReportTalliesGroups(t *testing.T) {
	r := Report{Checks: []Check{
		{Group: GroupHTTP, OK: true}, {Group: GroupHTTP, OK: true},
		{Group: GroupStream, OK: true}, {Group: GroupStream, Name: "stream: drops", Detail: "none"},
	}}
	if got, want := r.Summary(), "http 2/2 ✓, stream 1/2 ✗"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	for _, tc := range []struct {
		groups []string
		want   bool
	}{
		{[]string{GroupHTTP}, true},
		{[]string{GroupHTTP, GroupStream}, false},
		{[]string{GroupChat}, false}, // never checked
	} {
		if got := r.PassedGroups(tc.groups...); got != tc.want {
			t.Errorf("PassedGroups(%v) = %v, want %v", tc.groups, got, tc.want)
		}
	}
	if r.Passed() {
		t.Error("a report with a failed check passed")
	}
}
