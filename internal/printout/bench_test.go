package printout

import "testing"

// benchRender measures render, which must not fail.
func benchRender[T any](b *testing.B, render func() (T, error)) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := render(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReceiptPDF(b *testing.B) {
	r := sampleReceipt()
	benchRender(b, func() ([]byte, error) { return ReceiptPDF(r) })
}

func BenchmarkStickerPDF(b *testing.B) {
	s := sampleSticker()
	benchRender(b, func() ([]byte, error) { return StickerPDF(s) })
}

func BenchmarkQRPNG(b *testing.B) {
	benchRender(b, func() ([]byte, error) { return QRPNG("https://hub.example.in/qr/AB12CD34", 512) })
}

func BenchmarkQRSVG(b *testing.B) {
	benchRender(b, func() ([]byte, error) { return QRSVG("https://hub.example.in/qr/AB12CD34") })
}
