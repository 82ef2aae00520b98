package printout

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func sampleReceipt() Receipt {
	start := time.Date(2026, 3, 12, 8, 35, 0, 0, time.UTC)
	return Receipt{
		ID:            "RCPT-20260312-000451",
		IssuedAt:      time.Date(2026, 3, 12, 9, 48, 30, 0, time.UTC),
		Issuer:        "ocpihub Mobility Services Pvt Ltd",
		IssuerDetails: []string{"GSTIN 27AABCO1234F1Z5", "support@ocpihub.example.in"},
		LocationName:  "Phoenix Marketcity, Basement 2",
		Address:       "LBS Marg, Kurla West\nMumbai 400070",
		EVSEID:        "IN*ABC*E1001*1",
		ConnectorID:   "1",
		SessionStart:  start,
		SessionEnd:    start.Add(72*time.Minute + 14*time.Second),
		EnergyKWh:     "41.2370",
		Captured:      12345600, // ₹1,23,456.00
		Cost:          12245050, // ₹1,22,450.50
		Refunded:      100550,   // the excess, ₹1,005.50
		PaymentID:     "pay_Nq8xK2mP4rT7vW",
		PayerVPA:      "driver.kumar@okaxis",
		CDRID:         "CDR-IN-ABC-000451",
		TariffLines:   []string{"₹18.00/kWh + ₹2.00/min after 60 min", "Incl. 18% GST"},
	}
}

func TestReceiptPDF(t *testing.T) {
	t.Parallel()
	r := sampleReceipt()
	p := renderPage(t, ReceiptPDF, r)

	if w, h := p.sizeMM(); w != 210 || h != 297 {
		t.Errorf("page is %v × %v mm, want A4 (210 × 297)", w, h)
	}
	rows := map[string]string{
		"Receipt no.":         "RCPT-20260312-000451",
		"Issued":              "12 Mar 2026, 15:18:30 IST", // 09:48:30 UTC
		"Location":            "Phoenix Marketcity, Basement 2",
		"Address":             "LBS Marg, Kurla West",
		"EVSE":                "IN*ABC*E1001*1",
		"Connector":           "1",
		"Started":             "12 Mar 2026, 14:05:00 IST",
		"Ended":               "12 Mar 2026, 15:17:14 IST",
		"Duration":            "1 h 12 min",
		"Energy":              "41.2370 kWh",
		"CDR":                 "CDR-IN-ABC-000451",
		"Paid by UPI":         "₹1,23,456.00",
		"Cost of the session": "₹1,22,450.50",
		"Refunded":            "₹1,005.50",
		"Amount paid":         "₹1,22,450.50",
		"Payment reference":   "pay_Nq8xK2mP4rT7vW",
		"Paid from":           "dr****ar@okaxis",
	}
	for label, want := range rows {
		if got := p.after(label); got != want {
			t.Errorf("%s: %q, want %q", label, got, want)
		}
	}
	for _, line := range []string{
		"ocpihub Mobility Services Pvt Ltd", "GSTIN 27AABCO1234F1Z5", "Charging receipt",
		"Mumbai 400070", "₹18.00/kWh + ₹2.00/min after 60 min", "Incl. 18% GST",
	} {
		if !p.has(line) {
			t.Errorf("receipt lacks the line %q", line)
		}
	}
	if p.has("Not refundable (below ₹1.00)") {
		t.Error("receipt shows a not-refundable row for a zero amount")
	}
	if text := strings.Join(p.lines, "\n"); strings.Contains(text, "driver.kumar") {
		t.Error("receipt shows the payer's VPA unmasked")
	}

	if fonts := p.embeddedFonts(t); len(fonts) != 2 {
		t.Errorf("receipt embeds %d fonts, want regular and bold", len(fonts))
	}
	p.assertGlyphs(t)
	if !strings.ContainsRune(p.shown["utf8notosansB"], '₹') || !strings.ContainsRune(p.shown["utf8notosans"], '₹') {
		t.Error("₹ is not shown in both weights (amounts in regular, the total in bold)")
	}
}

func TestReceiptNotRefundable(t *testing.T) {
	t.Parallel()
	r := sampleReceipt()
	r.Captured, r.Cost, r.Refunded, r.NotRefundable = 50000, 49950, 0, 50
	p := renderPage(t, ReceiptPDF, r)
	for label, want := range map[string]string{
		"Paid by UPI":                  "₹500.00",
		"Cost of the session":          "₹499.50",
		"Refunded":                     "₹0.00",
		"Not refundable (below ₹1.00)": "₹0.50",
		"Amount paid":                  "₹500.00",
	} {
		if got := p.after(label); got != want {
			t.Errorf("%s: %q, want %q", label, got, want)
		}
	}
}

func TestReceiptDeterministic(t *testing.T) {
	t.Parallel()
	a, err := ReceiptPDF(sampleReceipt())
	if err != nil {
		t.Fatal(err)
	}
	b, err := ReceiptPDF(sampleReceipt())
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("the same receipt rendered twice gives different bytes")
	}
	// The PDF's creation date is the issue time in UTC, not the render time.
	if !bytes.Contains(a, []byte("/CreationDate (D:20260312094830)")) {
		t.Error("the PDF's creation date is not the receipt's issue time (UTC)")
	}
	other := sampleReceipt()
	other.IssuedAt = other.IssuedAt.Add(time.Second)
	c, err := ReceiptPDF(other)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, c) {
		t.Error("receipts issued at different times render to the same bytes")
	}
}

func TestReceiptInvalid(t *testing.T) {
	t.Parallel()
	wantInvalid(t, sampleReceipt, ReceiptPDF, []invalidCase[Receipt]{
		{"no id", func(r *Receipt) { r.ID = "" }},
		{"no issuer", func(r *Receipt) { r.Issuer = "" }},
		{"no location", func(r *Receipt) { r.LocationName = " " }},
		{"no EVSE", func(r *Receipt) { r.EVSEID = "" }},
		{"no connector", func(r *Receipt) { r.ConnectorID = "" }},
		{"no payment id", func(r *Receipt) { r.PaymentID = "" }},
		{"no CDR id", func(r *Receipt) { r.CDRID = "" }},
		{"no issue time", func(r *Receipt) { r.IssuedAt = time.Time{} }},
		{"no start", func(r *Receipt) { r.SessionStart = time.Time{} }},
		{"no end", func(r *Receipt) { r.SessionEnd = time.Time{} }},
		{"end before start", func(r *Receipt) { r.SessionEnd = r.SessionStart.Add(-time.Second) }},
		{"energy empty", func(r *Receipt) { r.EnergyKWh = "" }},
		{"energy negative", func(r *Receipt) { r.EnergyKWh = "-1.5" }},
		{"energy exponent", func(r *Receipt) { r.EnergyKWh = "1e3" }},
		{"energy bare point", func(r *Receipt) { r.EnergyKWh = "12." }},
		{"negative captured", func(r *Receipt) { r.Captured = -1 }},
		{"negative cost", func(r *Receipt) { r.Cost = -1 }},
		{"negative refund", func(r *Receipt) { r.Refunded = -1 }},
		{"not refundable ₹1.00", func(r *Receipt) { r.Refunded, r.NotRefundable = 0, 100 }},
		{"refund above captured", func(r *Receipt) { r.Refunded = r.Captured + 1 }},
		{"refund plus not refundable above captured", func(r *Receipt) { r.Refunded, r.NotRefundable = r.Captured, 1 }},
		{"too long for a page", func(r *Receipt) { r.TariffLines = make([]string, 60) }},
	})
	// The edges that are allowed: a full refund, a zero-length session.
	r := sampleReceipt()
	r.Refunded, r.Cost, r.SessionEnd = r.Captured, 0, r.SessionStart
	if _, err := ReceiptPDF(r); err != nil {
		t.Errorf("full refund of a zero-length session: %v", err)
	}
}

func TestMaskVPA(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"driver.kumar@okaxis": "dr****ar@okaxis",
		"9876543210@ybl":      "98****10@ybl",
		"ravi@ybl":            "r****@ybl",
		"ab@upi":              "****@upi",
		"noat":                "n****",
	} {
		if got := maskVPA(in); got != want {
			t.Errorf("maskVPA(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{
		0:                                     "0 s",
		35*time.Second + 900*time.Millisecond: "35 s",
		42*time.Minute + 10*time.Second:       "42 min 10 s",
		time.Hour + 5*time.Minute + 59*time.Second: "1 h 05 min",
		26 * time.Hour: "26 h 00 min",
	} {
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
