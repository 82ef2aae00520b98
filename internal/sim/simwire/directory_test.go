package simwire_test

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// TestDirectoryApply: EVSE- and connector-level PUTs and PATCHes land
// inside their location, and a write below a location, EVSE or connector
// the directory does not hold is refused.
func TestDirectoryApply(t *testing.T) {
	t.Parallel()
	d := simwire.NewDirectory()
	seg := func(s ...string) []string { return append([]string{"NL", "CPO"}, s...) }
	for _, step := range []struct {
		method string
		seg    []string
		body   string
		ok     bool
	}{
		{http.MethodPatch, seg("L1"), `{"name":"x"}`, false},
		{http.MethodPut, seg("L1", "E1"), `{"uid":"E1"}`, false},
		{http.MethodPut, seg("L1"), `{"id":"L1","evses":[{"uid":"E1","status":"AVAILABLE"}]}`, true},
		{http.MethodPut, seg("L1", "E2"), `{"uid":"E2","status":"AVAILABLE"}`, true},
		{http.MethodPut, seg("L1", "E1"), `{"uid":"E1","status":"CHARGING"}`, true},
		{http.MethodPatch, seg("L1", "E2"), `{"status":"BLOCKED"}`, true},
		{http.MethodPatch, seg("L1", "E9"), `{"status":"BLOCKED"}`, false},
		{http.MethodPut, seg("L1", "E9", "C1"), `{"id":"C1"}`, false},
		{http.MethodPut, seg("L1", "E1", "C1"), `{"id":"C1","standard":"IEC_62196_T2"}`, true},
		{http.MethodPatch, seg("L1", "E1", "C1"), `{"max_voltage":230}`, true},
		{http.MethodPatch, seg("L1", "E1", "C2"), `{"max_voltage":230}`, false},
		{http.MethodPatch, seg("L1"), `{"name":"Depot"}`, true},
	} {
		if got := d.Apply(step.method, step.seg, []byte(step.body)); got != step.ok {
			t.Errorf("%s %v: %v, want %v", step.method, step.seg, got, step.ok)
		}
	}
	want := map[string]any{"id": "L1", "name": "Depot", "evses": []any{
		map[string]any{"uid": "E1", "status": "CHARGING", "connectors": []any{
			map[string]any{"id": "C1", "standard": "IEC_62196_T2", "max_voltage": float64(230)}}},
		map[string]any{"uid": "E2", "status": "BLOCKED"},
	}}
	if diff := cmp.Diff(want, d.Get("NL", "CPO", "L1")); diff != "" {
		t.Errorf("location (-want +got):\n%s", diff)
	}
}
