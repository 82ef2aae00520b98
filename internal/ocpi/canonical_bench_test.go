package ocpi_test

import (
	"testing"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// BenchmarkCanonicalCDR: a CDR decoded, validated and brought to the form
// the hub stores, as its POST does.
func BenchmarkCanonicalCDR(b *testing.B) {
	raw := []byte(validCDR)
	b.ReportAllocs()
	for b.Loop() {
		var d ocpi.CDR
		if err := ocpi.DecodeValid(raw, &d); err != nil {
			b.Fatal(err)
		}
		if _, err := ocpi.Canonical(raw, &d); err != nil {
			b.Fatal(err)
		}
	}
}
