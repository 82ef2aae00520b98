package location

import "testing"

func TestSummaryStatusAndE7(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		evses map[string]int
		want  string
	}{
		{map[string]int{"AVAILABLE": 1, "OUTOFORDER": 3}, "AVAILABLE"},
		{map[string]int{"CHARGING": 1, "OUTOFORDER": 1}, "CHARGING"},
		{map[string]int{"RESERVED": 2}, "CHARGING"},
		{map[string]int{"INOPERATIVE": 1, "REMOVED": 1}, "OUTOFORDER"},
		{map[string]int{"REMOVED": 2}, "REMOVED"},
		{map[string]int{"UNKNOWN": 1, "REMOVED": 1}, "UNKNOWN"},
		{map[string]int{}, "UNKNOWN"},
	} {
		if got := (Summary{EVSEs: tc.evses}).Status(); got != tc.want {
			t.Errorf("Status(%v) = %s, want %s", tc.evses, got, tc.want)
		}
	}
	for _, s := range []string{"12.9352420", "-77.1212620", "0.0000001", "-0.5000000", "180.0000000"} {
		if got := FromE7(E7(s)); got != s {
			t.Errorf("FromE7(E7(%s)) = %s", s, got)
		}
	}
}
