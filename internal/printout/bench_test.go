package printout

import "testing"

func BenchmarkReceiptPDF(b *testing.B) {
	r := sampleReceipt()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ReceiptPDF(r); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkStickerPDF(b *testing.B) {
	s := sampleSticker()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := StickerPDF(s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQRPNG(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := QRPNG("https://hub.example.in/qr/AB12CD34", 512); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkQRSVG(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := QRSVG("https://hub.example.in/qr/AB12CD34"); err != nil {
			b.Fatal(err)
		}
	}
}
