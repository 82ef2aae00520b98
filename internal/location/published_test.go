package location_test

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestPublishedLengths: a location whose address and state are longer than
// the published 2.2.1 limits (45/20) but within the errata's (255/45) is
// accepted and kept whole in the hub's copy, and reaches the eMSPs — pushed
// and pulled — cut to the published limits, so a receiver validating the
// published text does not reject the location.
func TestPublishedLengths(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		addr := strings.Repeat("Ring Road ", 5) + "Bengaluru Ø" // 61 characters
		state := "Karnataka State Region"                       // 22
		loc := locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(0), "E1:AVAILABLE")
		loc["address"], loc["state"] = addr, state
		resp, err := b.CPO.Push(b.ctx, "locations", http.MethodPut, loc, nil, "LOC1")
		hubtest.MustStatus(t, resp, err, http.StatusCreated, 1000)

		_, data := hubGet(t, b.CPO.Platform, "locations", "RECEIVER", "/NL/CP1/LOC1", nil)
		if data["address"] != addr || data["state"] != state {
			t.Errorf("the hub's copy lost the long form: address %q state %q", data["address"], data["state"])
		}
		wantAddr, wantState := string([]rune(addr)[:45]), string([]rune(state)[:20])
		for _, e := range []*sim.EMSP{b.EMSP, b.EMSP2} {
			waitState(t, b.ctx, e.Platform, "location at "+e.Name(), func() bool { return e.Location("NL", "CP1", "LOC1") != nil })
			got := e.Location("NL", "CP1", "LOC1")
			if got["address"] != wantAddr || got["state"] != wantState {
				t.Errorf("%s received address %q state %q, want %q %q", e.Name(), got["address"], got["state"], wantAddr, wantState)
			}
			if got["x_vendor_note"] != "kept as sent" {
				t.Errorf("%s: the cut lost other fields: %v", e.Name(), got)
			}
		}
		_, data = hubGet(t, b.EMSP.Platform, "locations", "SENDER", "/LOC1", nil)
		if data["address"] != wantAddr || data["state"] != wantState {
			t.Errorf("directory GET: address %q state %q, want %q %q", data["address"], data["state"], wantAddr, wantState)
		}

		// A PATCH of the address is cut the same way on its way out.
		long := strings.Repeat("MG Road ", 7) // 56
		if _, err := b.CPO.Push(b.ctx, "locations", http.MethodPatch, map[string]any{"address": long, "last_updated": hubtest.Stamp(1)}, nil, "LOC1"); err != nil {
			t.Fatal(err)
		}
		waitState(t, b.ctx, b.EMSP.Platform, "address PATCH", func() bool {
			l := b.EMSP.Location("NL", "CP1", "LOC1")
			return l != nil && l["address"] == string([]rune(long)[:45])
		})
		// Over the errata's limit is still refused (TestValidation).
	})
}

func TestFitPublished(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"short", `{"address":"Main Street 1","state":"KA"}`, `{"address":"Main Street 1","state":"KA"}`},
		{"no address", `{"last_updated":"2026-01-01T00:00:00Z"}`, `{"last_updated":"2026-01-01T00:00:00Z"}`},
		{"long address, characters not bytes", `{"address":"` + strings.Repeat("ü", 50) + `","n":1.50}`, `{"address":"` + strings.Repeat("ü", 45) + `","n":1.50}`},
		{"long state", `{"state":"` + strings.Repeat("s", 21) + `"}`, `{"state":"` + strings.Repeat("s", 20) + `"}`},
		{"not an object", `[1]`, `[1]`},
		{"escaped, short once unescaped", `{"address":"` + strings.Repeat(`\u00fc`, 45) + `"}`, `{"address":"` + strings.Repeat(`\u00fc`, 45) + `"}`},
		{"escaped, long", `{"state":"` + strings.Repeat(`\"`, 21) + `"}`, `{"state":"` + strings.Repeat(`\"`, 20) + `"}`},
		{"twice, the last long", `{"address":"short","address":"` + strings.Repeat("a", 46) + `"}`, `{"address":"` + strings.Repeat("a", 45) + `"}`},
		{"nested address only", `{"operator":{"address":"` + strings.Repeat("a", 50) + `"}}`, `{"operator":{"address":"` + strings.Repeat("a", 50) + `"}}`},
		{"not a string", `{"address":12345,"state":null}`, `{"address":12345,"state":null}`},
		{"not JSON", `{"address":"` + strings.Repeat("a", 50), `{"address":"` + strings.Repeat("a", 50)},
	}
	for _, tt := range tests {
		got := string(location.FitPublished([]byte(tt.in)))
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: (-want +got)\n%s", tt.name, diff)
		}
		if !utf8.ValidString(got) {
			t.Errorf("%s: invalid UTF-8", tt.name)
		}
	}
}
