package printout

import (
	"slices"
	"strings"
	"testing"
)

func sampleSticker() Sticker {
	return Sticker{
		URL:          "https://hub.example.in/qr/AB12CD34",
		QRRef:        "AB12CD34",
		LocationName: "Phoenix Marketcity, Basement 2",
		Address:      "LBS Marg, Kurla West\nMumbai 400070",
		EVSEID:       "IN*ABC*E1001*1",
		ConnectorID:  "1",
		Standard:     "IEC_62196_T2_COMBO",
		MaxPowerW:    60000,
		TariffLines:  []string{"₹18.00/kWh + ₹2.00/min after 60 min", "Incl. 18% GST"},
		Operator:     "Volt Mumbai Charging Pvt Ltd",
		Support:      "Help 1800 123 4567",
	}
}

func TestStickerPDF(t *testing.T) {
	t.Parallel()
	s := sampleSticker()
	p := renderPage(t, StickerPDF, s)

	if w, h := p.sizeMM(); w != 105 || h != 148 {
		t.Errorf("page is %v × %v mm, want A6 (105 × 148)", w, h)
	}
	for _, line := range []string{
		"Scan with any UPI app",
		"QR ref AB12CD34",
		"Phoenix Marketcity, Basement 2",
		"LBS Marg, Kurla West",
		"Mumbai 400070",
		"EVSE IN*ABC*E1001*1 · Connector 1",
		"CCS2 · 60 kW",
		"₹18.00/kWh + ₹2.00/min after 60 min",
		"Incl. 18% GST",
		"Operated by Volt Mumbai Charging Pvt Ltd · Help 1800 123 4567",
	} {
		if !p.has(line) {
			t.Errorf("sticker lacks the line %q; it has:\n%s", line, strings.Join(p.lines, "\n"))
		}
	}
	// The QR reference is printed right under the code, before the location.
	if i, j := slices.Index(p.lines, "QR ref AB12CD34"), slices.Index(p.lines, s.LocationName); i > j {
		t.Errorf("QR ref at line %d, location name at %d", i, j)
	}

	if fonts := p.embeddedFonts(t); len(fonts) != 2 {
		t.Errorf("sticker embeds %d fonts, want regular and bold", len(fonts))
	}
	p.assertGlyphs(t)

	// The code drawn on the page (vector squares) decodes to the URL.
	if got := decodeQR(t, p.qrImage(t)); got != s.URL {
		t.Errorf("sticker QR decodes to %q, want %q", got, s.URL)
	}
}

func TestStickerQRSize(t *testing.T) {
	t.Parallel()
	p := renderPage(t, StickerPDF, sampleSticker())
	m, err := encode(sampleSticker().URL)
	if err != nil {
		t.Fatal(err)
	}
	// Dark modules span n modules of the 70 mm square (quiet zone included),
	// centred horizontally on the 105 mm page.
	minX, maxX := 1e9, -1e9
	for _, r := range p.page.Content().Rect {
		minX, maxX = min(minX, r.Min.X, r.Max.X), max(maxX, r.Min.X, r.Max.X)
	}
	mm := func(pt float64) float64 { return pt / 72 * 25.4 }
	wantSpan := stickerQR * float64(m.n) / float64(m.n+2*quietZone)
	if got := mm(maxX - minX); got < wantSpan-0.1 || got > wantSpan+0.1 {
		t.Errorf("QR modules span %.2f mm, want %.2f", got, wantSpan)
	}
	if centre := mm(minX+maxX) / 2; centre < 52.4 || centre > 52.6 {
		t.Errorf("QR centred at x = %.2f mm, want 52.5", centre)
	}
}

func TestStickerText(t *testing.T) {
	t.Parallel()
	s := sampleSticker()
	s.LocationName = "Café Résidence — चार्जिंग"
	s.Standard = "TESLA_S"
	s.MaxPowerW = 7400
	s.Support = ""
	s.Address = ""
	p := renderPage(t, StickerPDF, s)
	p.assertGlyphs(t)
	// Latin with diacritics prints; Devanagari, which the font lacks,
	// prints as "?" (one per code point) rather than as blank boxes.
	for _, line := range []string{"Café Résidence — ????????", "TESLA_S · 7.4 kW", "Operated by Volt Mumbai Charging Pvt Ltd"} {
		if !p.has(line) {
			t.Errorf("sticker lacks the line %q; it has:\n%s", line, strings.Join(p.lines, "\n"))
		}
	}
}

func TestStickerInvalid(t *testing.T) {
	t.Parallel()
	wantInvalid(t, sampleSticker, StickerPDF, []invalidCase[Sticker]{
		{"no URL", func(s *Sticker) { s.URL = "" }},
		{"no QR ref", func(s *Sticker) { s.QRRef = " " }},
		{"no location name", func(s *Sticker) { s.LocationName = "" }},
		{"no EVSE", func(s *Sticker) { s.EVSEID = "" }},
		{"no connector", func(s *Sticker) { s.ConnectorID = "" }},
		{"no operator", func(s *Sticker) { s.Operator = "" }},
		{"negative power", func(s *Sticker) { s.MaxPowerW = -1 }},
		{"five tariff lines", func(s *Sticker) { s.TariffLines = make([]string, 5) }},
		{"URL too long for a QR", func(s *Sticker) { s.URL += strings.Repeat("x", maxQRContent) }},
		{"address too long for A6", func(s *Sticker) { s.Address = strings.Repeat("Very long street name, ", 20) }},
	})
	// Four tariff lines, the most allowed, fit.
	s := sampleSticker()
	s.TariffLines = []string{"₹18.00/kWh", "₹2.00/min after 60 min", "₹50.00 per session", "Incl. 18% GST"}
	if _, err := StickerPDF(s); err != nil {
		t.Errorf("four tariff lines: %v", err)
	}
}

func TestFormatKW(t *testing.T) {
	t.Parallel()
	for w, want := range map[int64]string{60000: "60 kW", 7400: "7.4 kW", 3300: "3.3 kW", 22080: "22.1 kW", 149950: "150 kW"} {
		if got := formatKW(w); got != want {
			t.Errorf("formatKW(%d) = %q, want %q", w, got, want)
		}
	}
}
