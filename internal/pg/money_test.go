package pg

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestParseRupees(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
		bad  bool
	}{
		{in: "0", want: 0},
		{in: "1", want: 100},
		{in: "1.5", want: 150},
		{in: "1.50", want: 150},
		{in: "1.05", want: 105},
		{in: "0.01", want: 1},
		{in: "123456.78", want: 12345678},
		{in: "007.10", want: 710},
		{in: "-0.50", want: -50},
		{in: "-12", want: -1200},
		{in: "92233720368547758.07", want: math.MaxInt64},
		{in: "92233720368547758.08", bad: true},
		{in: "92233720368547759", bad: true},
		{in: "1.005", bad: true},
		{in: "1.000", bad: true},
		{in: "1.", bad: true},
		{in: ".5", bad: true},
		{in: "", bad: true},
		{in: "-", bad: true},
		{in: "+1", bad: true},
		{in: "1e2", bad: true},
		{in: "1,000.00", bad: true},
		{in: " 1", bad: true},
		{in: "1.2.3", bad: true},
		{in: "--1", bad: true},
		{in: "NaN", bad: true},
		{in: "١٢", bad: true}, // Arabic-Indic digits are not ASCII digits
	}
	for _, tt := range tests {
		got, err := ParseRupees(tt.in)
		if tt.bad {
			if err == nil || !errors.Is(err, ErrAmount) {
				t.Errorf("ParseRupees(%q) = %d, %v; want an ErrAmount", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseRupees(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
	}
}

func TestFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		paise       int64
		rupees, inr string
		usd         string
	}{
		{paise: 0, rupees: "0.00", inr: "₹0.00", usd: "USD 0.00"},
		{paise: 5, rupees: "0.05", inr: "₹0.05", usd: "USD 0.05"},
		{paise: 50, rupees: "0.50", inr: "₹0.50", usd: "USD 0.50"},
		{paise: 100, rupees: "1.00", inr: "₹1.00", usd: "USD 1.00"},
		{paise: 99999, rupees: "999.99", inr: "₹999.99", usd: "USD 999.99"},
		{paise: 100000, rupees: "1000.00", inr: "₹1,000.00", usd: "USD 1,000.00"},
		{paise: 12345600, rupees: "123456.00", inr: "₹1,23,456.00", usd: "USD 123,456.00"},
		{paise: 1234567890, rupees: "12345678.90", inr: "₹1,23,45,678.90", usd: "USD 12,345,678.90"},
		{paise: 100000000000, rupees: "1000000000.00", inr: "₹1,00,00,00,000.00", usd: "USD 1,000,000,000.00"},
		{paise: -100050, rupees: "-1000.50", inr: "-₹1,000.50", usd: "-USD 1,000.50"},
		{paise: -5, rupees: "-0.05", inr: "-₹0.05", usd: "-USD 0.05"},
		{paise: math.MaxInt64, rupees: "92233720368547758.07", inr: "₹92,23,37,20,36,85,47,758.07", usd: "USD 92,233,720,368,547,758.07"},
		{paise: math.MinInt64, rupees: "-92233720368547758.08", inr: "-₹92,23,37,20,36,85,47,758.08", usd: "-USD 92,233,720,368,547,758.08"},
	}
	for _, tt := range tests {
		if got := FormatRupees(tt.paise); got != tt.rupees {
			t.Errorf("FormatRupees(%d) = %q, want %q", tt.paise, got, tt.rupees)
		}
		if got := FormatINR(tt.paise); got != tt.inr {
			t.Errorf("FormatINR(%d) = %q, want %q", tt.paise, got, tt.inr)
		}
		if got := INR(tt.paise).Display(); got != tt.inr {
			t.Errorf("INR(%d).Display() = %q, want %q", tt.paise, got, tt.inr)
		}
		if got := (Amount{tt.paise, "USD"}).Display(); got != tt.usd {
			t.Errorf("USD(%d).Display() = %q, want %q", tt.paise, got, tt.usd)
		}
		if tt.paise == math.MinInt64 {
			continue // its magnitude does not fit an int64
		}
		if back, err := ParseRupees(tt.rupees); err != nil || back != tt.paise {
			t.Errorf("ParseRupees(FormatRupees(%d)) = %d, %v", tt.paise, back, err)
		}
	}
}

func TestAmount(t *testing.T) {
	t.Parallel()
	a, err := ParseAmount("150.5", "INR")
	if err != nil || a != INR(15050) {
		t.Fatalf("ParseAmount = %+v, %v", a, err)
	}
	if a.String() != "150.50 INR" || a.Rupees() != "150.50" || a.IsZero() {
		t.Errorf("String %q Rupees %q IsZero %v", a.String(), a.Rupees(), a.IsZero())
	}
	for _, cur := range []string{"", "inr", "RUPEE", "IN"} {
		if _, err := ParseAmount("1", cur); err == nil {
			t.Errorf("ParseAmount with currency %q: want an error", cur)
		}
	}
	if _, err := ParseAmount("1.001", "INR"); !errors.Is(err, ErrAmount) {
		t.Errorf("ParseAmount(1.001) = %v, want ErrAmount", err)
	}
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"refund-0001", "550e8400-e29b-41d4-a716-446655440000", "RF_ABCDEFGHIJ"} {
		if got := IdempotencyKey(id); got != id {
			t.Errorf("IdempotencyKey(%q) = %q, want the id itself", id, got)
		}
	}
	for _, id := range []string{"r1", "refund 0001 x", "ref/0001/abc", "refund#000001", strings.Repeat("a", 65), "रिफंड-000000001"} {
		got := IdempotencyKey(id)
		if got == id || len(got) < 10 || len(got) > 64 || !keyChars(got) {
			t.Errorf("IdempotencyKey(%q) = %q, want a derived valid key", id, got)
		}
		if again := IdempotencyKey(id); again != got {
			t.Errorf("IdempotencyKey(%q) is not deterministic: %q then %q", id, got, again)
		}
	}
	if IdempotencyKey("r1") == IdempotencyKey("r2") {
		t.Error("different refund ids gave the same key")
	}
}

func TestPaymentStatusRank(t *testing.T) {
	t.Parallel()
	order := []PaymentStatus{PaymentCreated, PaymentFailed, PaymentAuthorized, PaymentCaptured, PaymentRefunded}
	for i := 1; i < len(order); i++ {
		if order[i-1].Rank() >= order[i].Rank() {
			t.Errorf("%s ranks %d, not below %s (%d)", order[i-1], order[i-1].Rank(), order[i], order[i].Rank())
		}
	}
	if PaymentStatus("bogus").Rank() != 0 {
		t.Error("an unknown status must rank 0")
	}
	for s, final := range map[PaymentStatus]bool{PaymentCreated: false, PaymentAuthorized: false, PaymentCaptured: true, PaymentFailed: true, PaymentRefunded: true} {
		if s.Final() != final {
			t.Errorf("%s.Final() = %v", s, s.Final())
		}
	}
}

func FuzzParseRupees(f *testing.F) {
	for _, s := range []string{"0", "1.5", "-0.01", "123456.78", "1e3", "1.005", "92233720368547758.07", ".", "-"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseRupees(s)
		if err != nil {
			return
		}
		back := FormatRupees(p)
		if p2, err := ParseRupees(back); err != nil || p2 != p {
			t.Fatalf("%q → %d → %q → %d, %v", s, p, back, p2, err)
		}
		// Accepted input has at most two decimals, so it is exact: the
		// canonical form differs only by padding and leading zeros.
		if strings.ContainsAny(s, "eE+ ,") {
			t.Fatalf("accepted %q", s)
		}
	})
}
