package upi

import (
	"testing"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/upi/charger"
	"github.com/ocpihub/ocpihub/internal/upi/qrmap"
)

func TestPaiseOf(t *testing.T) {
	t.Parallel()
	n := ocpi.NewNumber
	incl := func(s string) *ocpi.Number { v := n(s); return &v }
	cases := []struct {
		price *ocpi.Price
		want  int64
		err   bool
	}{
		{&ocpi.Price{ExclVAT: n("231.25"), InclVAT: incl("272.88")}, 272_88, false},
		{&ocpi.Price{ExclVAT: n("231.25")}, 231_25, false},
		{&ocpi.Price{ExclVAT: n("1"), InclVAT: incl("272.885")}, 272_89, false}, // half away from zero
		{&ocpi.Price{ExclVAT: n("1"), InclVAT: incl("272.8849")}, 272_88, false},
		{&ocpi.Price{ExclVAT: n("1"), InclVAT: incl("0.005")}, 1, false},
		{&ocpi.Price{ExclVAT: n("0")}, 0, false},
		{&ocpi.Price{ExclVAT: n("12.5E1")}, 125_00, false},
		{&ocpi.Price{ExclVAT: n("-1.00")}, 0, true},
		{&ocpi.Price{ExclVAT: n("1e25")}, 0, true},
		{nil, 0, true},
	}
	for _, c := range cases {
		got, err := paiseOf(c.price)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("paiseOf(%+v) = %d, %v; want %d, error %v", c.price, got, err, c.want, c.err)
		}
	}
}

func TestMaskVPA(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"driver@okpgsim": "dr****@okpgsim", "ab@upi": "ab**@upi", "a@upi": "a**@upi", "": "", "noat": ""} {
		if got := maskVPA(in); got != want {
			t.Errorf("maskVPA(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestParseTenant(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"IN*CPO": "IN*CPO", "in-cpo": "IN*CPO", "INCPO": "IN*CPO", " nl*ACM ": "NL*ACM"} {
		cc, pid, err := qrmap.ParseTenant(in)
		if err != nil || qrmap.TenantOf(cc, pid) != want {
			t.Errorf("ParseTenant(%q) = %s %s %v, want %s", in, cc, pid, err, want)
		}
	}
	for _, bad := range []string{"", "IND*CPO", "IN*CP", "I1*CPO", "IN*C-O", "INCP"} {
		if _, _, err := qrmap.ParseTenant(bad); err == nil {
			t.Errorf("ParseTenant(%q) accepted", bad)
		}
	}
}

func TestTariffSummary(t *testing.T) {
	t.Parallel()
	step := int64(1)
	tf := &ocpi.Tariff{Currency: "INR", Elements: []ocpi.TariffElement{{PriceComponents: []ocpi.PriceComponent{
		{Type: "ENERGY", Price: ocpi.NewNumber("18.5"), VAT: ocpi.NewNumber("18"), StepSize: &step},
		{Type: "TIME", Price: ocpi.NewNumber("60"), StepSize: &step},
		{Type: "FLAT", Price: ocpi.NewNumber("1234.5678"), StepSize: &step},
	}}}}
	got := charger.TariffSummary(tf)
	want := []string{"₹18.50 per kWh + 18% tax", "₹60.00 per hour of charging", "₹1234.5678 per session"}
	if len(got) != len(want) {
		t.Fatalf("%q", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("line %d: %q, want %q", i, got[i], want[i])
		}
	}
	if charger.TariffSummary(nil) != nil {
		t.Error("summary of no tariff")
	}
}
