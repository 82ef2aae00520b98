package cdr_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// priceTariff is 20.00 per kWh excl. VAT (18 %): 7.5 kWh cost 150.00.
func priceTariff(id, price string) map[string]any {
	return map[string]any{"country_code": "IN", "party_id": "CP1", "id": id, "currency": "INR", "last_updated": ts(0),
		"elements": []any{map[string]any{"price_components": []any{
			map[string]any{"type": "ENERGY", "price": price, "vat": 18, "step_size": 1}}}}}
}

func priceLocation() map[string]any {
	return map[string]any{"country_code": "IN", "party_id": "CP1", "id": "LOC1", "publish": true,
		"address": "MG Road 1", "city": "Bengaluru", "country": "IND", "time_zone": "Asia/Kolkata",
		"coordinates": map[string]any{"latitude": "12.97160", "longitude": "77.59460"}, "last_updated": ts(0),
		"evses": []any{map[string]any{"uid": "E1", "evse_id": "IN*CP1*EE1", "status": "AVAILABLE", "last_updated": ts(0),
			"connectors": []any{map[string]any{"id": "1", "standard": "IEC_62196_T2", "format": "SOCKET", "power_type": "AC_3_PHASE",
				"max_voltage": 230, "max_amperage": 32, "tariff_ids": []any{"T1"}, "last_updated": ts(0)}}}}}
}

// TestCDRPriceCheck: the hub prices every CDR from its tariffs (its own
// snapshot, else its connector's) and flags one whose total_cost is off by
// more than the tolerance — with a webhook event and a metric — while still
// forwarding it unchanged; a CDR it cannot price is accepted and marked
// unpriceable, never refused.
func TestCDRPriceCheck(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		if err := b.CPO.PutTariff(b.Ctx, "T1", priceTariff("T1", "20.00")); err != nil {
			t.Fatal(err)
		}
		if err := b.CPO.PutLocation(b.Ctx, "LOC1", priceLocation()); err != nil {
			t.Fatal(err)
		}
		find := func(id string) *cdr.Stored {
			t.Helper()
			c, err := b.H.CDRs.Find(b.Ctx, cdr.Ref{CountryCode: "IN", PartyID: "CP1", ID: id})
			if err != nil {
				t.Fatal(err)
			}
			return c
		}

		// Priced from the connector's tariff T1: 7.5 kWh × 20.00 = 150.00.
		hubtest.MustStatus(t, b.post(t, b.CPO.Platform, cdrJSON("OK1", "S1", "150.00")), nil, http.StatusCreated, 1000)
		if c := find("OK1"); c.Price.Status != cdr.PriceOK || c.Price.Hub.ExclVAT.String() != "150" || c.Price.Hub.InclVAT.String() != "177" {
			t.Errorf("OK1 price check: %+v", c.Price)
		}

		// 10 % too high: flagged, the event names both totals, and the eMSP
		// still gets the CDR as the CPO sent it.
		hubtest.MustStatus(t, b.post(t, b.CPO.Platform, cdrJSON("HIGH1", "S2", "165.00")), nil, http.StatusCreated, 1000)
		c := find("HIGH1")
		if c.Price.Status != cdr.PriceMismatch || c.Price.Difference.ExclVAT.String() != "15" || c.Price.Note == "" {
			t.Errorf("HIGH1 price check: %+v", c.Price)
		}
		evs, err := b.Events.Wait(b.Ctx, event.CDRCostMismatch, 1)
		if err != nil {
			t.Fatal(err)
		}
		if d := evs[0].Data.(map[string]any); d["cdr_id"] != "HIGH1" || d["hub_total_cost"] == nil {
			t.Errorf("cdr.cost_mismatch data: %v", d)
		}
		// The eMSP may get a CDR twice (a redelivery): find HIGH1's.
		var high []byte
		for n := 2; high == nil; n++ {
			reqs, err := b.EMSP.WaitFor(b.Ctx, n, sim.PathHas(http.MethodPost, "/emsp/cdrs"))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range reqs {
				if strings.Contains(string(r.Body), `"HIGH1"`) {
					high = r.Body
				}
			}
		}
		if !strings.Contains(strings.ReplaceAll(string(high), " ", ""), `"excl_vat":165`) {
			t.Errorf("the eMSP got the flagged CDR changed: %s", high)
		}

		// The CDR's own tariff snapshot wins over the connector's: at 22.00
		// per kWh, 165.00 is right.
		own := cdrJSON("SNAP1", "S3", "165.00")
		own["tariffs"] = []any{priceTariff("T1", "22.00")}
		hubtest.MustStatus(t, b.post(t, b.CPO.Platform, own), nil, http.StatusCreated, 1000)
		if c := find("SNAP1"); c.Price.Status != cdr.PriceOK {
			t.Errorf("SNAP1 price check: %+v", c.Price)
		}

		// A period naming a tariff the CDR does not carry: accepted,
		// unpriceable, the reason kept.
		odd := cdrJSON("ODD1", "S4", "150.00")
		odd["tariffs"] = []any{priceTariff("T1", "20.00")}
		odd["charging_periods"] = []any{map[string]any{"start_date_time": ts(0), "tariff_id": "NOPE",
			"dimensions": []any{map[string]any{"type": "ENERGY", "volume": 7.5}}}}
		hubtest.MustStatus(t, b.post(t, b.CPO.Platform, odd), nil, http.StatusCreated, 1000)
		if c := find("ODD1"); c.Price.Status != cdr.PriceUnpriceable || !strings.Contains(c.Price.Note, "tariff_id") {
			t.Errorf("ODD1 price check: %+v", c.Price)
		}

		// A connector the hub knows no tariff for.
		bare := cdrJSON("BARE1", "S5", "150.00")
		bare["cdr_location"].(map[string]any)["id"] = "ELSEWHERE"
		hubtest.MustStatus(t, b.post(t, b.CPO.Platform, bare), nil, http.StatusCreated, 1000)
		if c := find("BARE1"); c.Price.Status != cdr.PriceUnpriceable {
			t.Errorf("BARE1 price check: %+v", c.Price)
		}

		// A tariff snapshot the engine refuses (an element no moment can
		// reach): accepted, unpriceable, the note names element and field.
		shadow := cdrJSON("SHADOW1", "S6", "150.00")
		st := priceTariff("T1", "20.00")
		st["elements"] = append(st["elements"].([]any), map[string]any{"price_components": []any{
			map[string]any{"type": "ENERGY", "price": "10.00", "step_size": 1}}, "restrictions": map[string]any{"start_time": "22:00"}})
		shadow["tariffs"] = []any{st}
		hubtest.MustStatus(t, b.post(t, b.CPO.Platform, shadow), nil, http.StatusCreated, 1000)
		if c := find("SHADOW1"); c.Price.Status != cdr.PriceUnpriceable || !strings.Contains(c.Price.Note, "elements[1].price_components[0].type") {
			t.Errorf("SHADOW1 price check: %+v", c.Price)
		}

		// The metric counts each outcome.
		resp, err := http.Get(b.H.PublicURL() + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, want := range []string{`ocpihub_cdr_price_checks_total{outcome="mismatch"} 1`, `ocpihub_cdr_price_checks_total{outcome="ok"} 2`,
			`ocpihub_cdr_price_checks_total{outcome="unpriceable"} 3`} {
			if !strings.Contains(string(body), want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
	})
}

// TestCDRPriceTolerance: the operator's tolerance decides what is flagged:
// with 20 % allowed, a total 10 % above the hub's price is ok; with 0 and
// 0 %, one paisa off is a mismatch.
func TestCDRPriceTolerance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, abs, pct, total, want string
	}{{"wide", "0", "20", "165.00", cdr.PriceOK}, {"exact", "0", "0", "150.01", cdr.PriceMismatch}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
				b := setup(t, h)
				if err := b.CPO.PutTariff(b.Ctx, "T1", priceTariff("T1", "20.00")); err != nil {
					t.Fatal(err)
				}
				if err := b.CPO.PutLocation(b.Ctx, "LOC1", priceLocation()); err != nil {
					t.Fatal(err)
				}
				hubtest.MustStatus(t, b.post(t, b.CPO.Platform, cdrJSON("TOL1", "S1", c.total)), nil, http.StatusCreated, 1000)
				got, err := h.CDRs.Find(b.Ctx, cdr.Ref{CountryCode: "IN", PartyID: "CP1", ID: "TOL1"})
				if err != nil {
					t.Fatal(err)
				}
				if got.Price.Status != c.want {
					t.Errorf("price check %+v, want %s", got.Price, c.want)
				}
			}, fast, func(o *hubtest.Options) {
				prev := o.Config
				o.Config = func(cfg *app.Config) {
					prev(cfg)
					cfg.CDRPriceTolerance = &cdr.Tolerance{Absolute: decimal.RequireFromString(c.abs), Percent: decimal.RequireFromString(c.pct)}
				}
			})
		})
	}
}
