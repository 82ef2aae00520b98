package v211_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
)

const tariff221 = `{"country_code": "NL", "party_id": "TNM", "id": "T1", "currency": "EUR",
  "tariff_alt_text": [{"language": "en", "text": "0.25/kWh"}], "tariff_alt_url": "https://tnm.example/t1",
  "elements": [
    {"price_components": [{"type": "ENERGY", "price": 0.25, "step_size": 1}],
     "restrictions": {"start_time": "08:00", "end_time": "20:00", "min_kwh": 0.5, "max_power": 22, "day_of_week": ["MONDAY"]}},
    {"price_components": [{"type": "PARKING_TIME", "price": "2.00", "step_size": 300}]}],
  "last_updated": "2026-01-01T00:00:00Z"}`

func TestTariffRoundTrip(t *testing.T) {
	t.Parallel()
	in := decode[ocpi.Tariff](t, []byte(tariff221))
	legacy, loss, ok := v211.FromTariff(&in)
	if !ok || len(loss) > 0 {
		t.Fatalf("ok %v loss %v", ok, loss)
	}
	validate211(t, "tariff", legacy)
	back := reread[v211.Tariff](t, legacy)
	out := back.To221("NL", "TNM")
	if diff := cmp.Diff(canonical(t, in), canonical(t, out)); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	// 2.0 writes prices as strings.
	b20, err := v211.Encode(v211.V20, "tariffs", "", legacy)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b20), `"price":"0.25"`) || !strings.Contains(string(b20), `"min_kwh":"0.5"`) {
		t.Errorf("2.0 tariff: %s", b20)
	}
}

// TestTariffLoss: what 2.1.1 cannot say is dropped and reported; an element
// whose restriction 2.1.1 lacks is left out rather than loosened, and a
// tariff with no element left is not sent at all.
func TestTariffLoss(t *testing.T) {
	t.Parallel()
	in := decode[ocpi.Tariff](t, []byte(tariff221))
	in.Type = "AD_HOC_PAYMENT"
	in.MaxPrice = &ocpi.Price{ExclVAT: ocpi.NewNumber("10")}
	start := in.LastUpdated
	in.StartDateTime = &start
	in.Elements[0].PriceComponents[0].VAT = ocpi.NewNumber("21")
	in.Elements[1].Restrictions = &ocpi.TariffRestrictions{Reservation: "RESERVATION"}
	legacy, loss, ok := v211.FromTariff(&in)
	if !ok {
		t.Fatal("not ok")
	}
	for _, f := range []string{"type", "max_price", "start_date_time", "elements[].price_components[].vat", "elements[].restrictions"} {
		if !slices.Contains(loss.Fields(), f) {
			t.Errorf("loss lacks %s: %v", f, loss)
		}
	}
	if len(legacy.Elements) != 1 || legacy.Elements[0].PriceComponents[0].Type != "ENERGY" {
		t.Errorf("elements: %+v", legacy.Elements)
	}
	validate211(t, "tariff", legacy)

	in.Elements = in.Elements[1:]
	if _, _, ok := v211.FromTariff(&in); ok {
		t.Error("a tariff without a 2.1.1 element must not be sent")
	}
}

func TestCredentials(t *testing.T) {
	t.Parallel()
	c := ocpi.Credentials{Token: "tok", URL: "https://hub.example/ocpi/versions", Roles: []ocpi.CredentialsRole{
		{Role: "HUB", CountryCode: "IN", PartyID: "HUB", BusinessDetails: ocpi.BusinessDetails{Name: "ocpihub"}},
		{Role: "EMSP", CountryCode: "IN", PartyID: "OHE", BusinessDetails: ocpi.BusinessDetails{Name: "ocpihub eMSP"}},
	}}
	legacy, loss := v211.FromCredentials(c, "HUB")
	if legacy.PartyID != "HUB" || len(loss) != 1 {
		t.Errorf("legacy %+v loss %v", legacy, loss)
	}
	validate211(t, "credentials", legacy)
	back := legacy.To221("CPO")
	if back.Roles[0].Role != "CPO" || back.Roles[0].PartyID != "HUB" || back.Token != "tok" {
		t.Errorf("back: %+v", back)
	}
	bad := legacy
	bad.PartyID = "TOOLONG"
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "party_id") {
		t.Errorf("bad party_id: %v", err)
	}
	bad = legacy
	bad.BusinessDetails.Name = ""
	if err := bad.Check(); err == nil || !strings.Contains(err.Error(), "business_details.name") {
		t.Errorf("missing name: %v", err)
	}
}
