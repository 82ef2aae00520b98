package party

import (
	"testing"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// TestDecodedEndpointsAreNotShared: platforms read with the same
// endpoints text share one decoded slice, which a caller's append cannot
// change for the next; other text decodes anew, and text that does not
// decode is an error every time.
func TestDecodedEndpointsAreNotShared(t *testing.T) {
	raw := []byte(`[{"identifier":"locations","role":"RECEIVER","url":"https://emsp.example/ocpi/2.2.1/locations"},` +
		`{"identifier":"tokens","role":"SENDER","url":"https://emsp.example/ocpi/2.2.1/tokens"}]`)
	first, err := decodeEndpoints(raw)
	if err != nil || len(first) != 2 {
		t.Fatalf("%v %v", first, err)
	}
	grown := append(first, ocpi.Endpoint{Identifier: "cdrs", Role: ocpi.InterfaceReceiver, URL: "https://x.example/cdrs"})
	grown[0].URL = "https://changed.example/"
	second, err := decodeEndpoints(raw)
	if err != nil || len(second) != 2 || second[0].URL != "https://emsp.example/ocpi/2.2.1/locations" {
		t.Fatalf("after an append to the first read: %v %v", second, err)
	}
	other, err := decodeEndpoints([]byte(`[{"identifier":"locations","role":"RECEIVER","url":"https://other.example/l"}]`))
	if err != nil || len(other) != 1 || other[0].URL != "https://other.example/l" {
		t.Fatalf("other text: %v %v", other, err)
	}
	for range 2 {
		if eps, err := decodeEndpoints([]byte(`[{"identifier":`)); err == nil {
			t.Fatalf("broken text decoded: %v", eps)
		}
	}
}
