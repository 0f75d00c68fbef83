package schemadoc

import (
	"slices"
	"testing"
)

// A cell's threads and processes are counted by the names the process gave them: data, not
// schema; the same names anywhere else are keys the documentation must name.
func TestThreadNamesAreDataOnlyWhereTheyAreCounted(t *testing.T) {
	doc := []byte("`cells` `runtime` `threads` `processes` `other_key`")
	raw := []byte(`{"cells":[{"runtime":{"threads":{"VM Thread":1,"http-nio-...--exec-":10},"processes":{"java":1}}}],
		"other_key":{"VM Thread":1}}`)
	missing, err := Undocumented(raw, doc)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(missing, []string{"VM Thread"}) {
		t.Errorf("undocumented %q; want only the name outside a census, VM Thread under other_key", missing)
	}
}
