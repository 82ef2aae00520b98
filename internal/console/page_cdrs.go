package console

import (
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/ocpi"
)

type cdrsView struct {
	CDRs    []cdrRow
	Pager   ui.Pager
	Parties []string
}

type cdrView struct {
	cdrRow
	Costs   []costLine
	Periods []periodRow
	Raw     string
	// HubCost and Difference are the hub's own price of the CDR and the
	// CDR's total minus it; Steps the engine's reasons, as text.
	HubCost    costLine
	Difference costLine
	Steps      []string
}

// costLine is one of a CDR's costs, excl. and incl. VAT.
type costLine struct {
	Label, Excl, Incl string
}

// PageTitle names the page after the CDR.
func (v cdrView) PageTitle() string { return "CDR " + v.ID }

func (c *Console) cdrPages() ([]ui.Page, []ui.Action) {
	if c.cfg.CDRs == nil {
		return nil, nil
	}
	return []ui.Page{
		{
			Path: "/cdrs", Title: "CDRs", Section: "Charging", Nav: "CDRs", Template: "cdrs",
			Load: c.loadCDRs,
		},
		{
			Path: "/cdrs/{cc}/{pid}/{id}", Title: "CDR", Template: "cdr",
			Load: c.loadCDR,
		},
	}, nil
}

// The date range is in whole UTC days: from its first day's midnight to
// the end of its last day.
func dateParam(q url.Values, name string, end bool) (time.Time, error) {
	s := q.Get(name)
	if s == "" {
		return time.Time{}, nil
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, ocpi.Invalid(name, "must be a date (YYYY-MM-DD)")
	}
	if end {
		d = d.AddDate(0, 0, 1)
	}
	return d, nil
}

func (c *Console) loadCDRs(r *http.Request) (any, error) {
	q := r.URL.Query()
	p, err := ui.PartyParam(q.Get("party"), "party")
	if err != nil {
		return nil, err
	}
	f := cdr.BrowseFilter{Party: p, Limit: 50}
	if f.From, err = dateParam(q, "from", false); err != nil {
		return nil, err
	}
	if f.To, err = dateParam(q, "to", true); err != nil {
		return nil, err
	}
	switch f.PriceStatus = q.Get("price"); f.PriceStatus {
	case "", cdr.PriceOK, cdr.PriceMismatch, cdr.PriceUnpriceable:
	default:
		return nil, ocpi.Invalid("price", "must be ok, mismatch or unpriceable")
	}
	f.Offset = pageOffset(q, f.Limit)
	list, total, err := c.cfg.CDRs.Browse(r.Context(), f)
	if err != nil {
		return nil, err
	}
	var v cdrsView
	_, _, v.Pager = ui.OffsetPager(r, int(total), f.Limit)
	for _, d := range list {
		v.CDRs = append(v.CDRs, newCDRRow(d))
	}
	if v.Parties, err = c.partyOptions(r); err != nil {
		return nil, err
	}
	return v, nil
}

func newCDRRow(d *cdr.Stored) cdrRow {
	x := d.CDR
	row := cdrRow{Stored: d, Href: "/cdrs/" + url.PathEscape(d.CountryCode) + "/" + url.PathEscape(d.PartyID) + "/" + url.PathEscape(d.ID)}
	row.CostExcl, row.CostIncl = priceText(x.TotalCost, x.Currency)
	if x.TotalEnergy.Valid() {
		row.Energy = x.TotalEnergy.String() + " kWh"
	}
	if x.TotalTime.Valid() {
		row.Time = x.TotalTime.String() + " h"
	}
	if d.SessionKnown && x.SessionID != "" {
		row.SessionHref = "/sessions/" + url.PathEscape(d.CountryCode) + "/" + url.PathEscape(d.PartyID) + "/" + url.PathEscape(x.SessionID)
	}
	return row
}

// priceText writes a price excl. and incl. VAT with the currency ("" when
// absent).
func priceText(p *ocpi.Price, currency string) (excl, incl string) {
	if p == nil {
		return "", ""
	}
	if p.ExclVAT.Valid() {
		excl = p.ExclVAT.String() + " " + currency
	}
	if p.InclVAT != nil && p.InclVAT.Valid() {
		incl = p.InclVAT.String() + " " + currency
	}
	return excl, incl
}

func (c *Console) loadCDR(r *http.Request) (any, error) {
	ref := cdr.Ref{CountryCode: r.PathValue("cc"), PartyID: r.PathValue("pid"), ID: r.PathValue("id")}
	d, err := c.cfg.CDRs.Find(r.Context(), ref)
	if err != nil {
		return nil, err
	}
	v := cdrView{cdrRow: newCDRRow(d), Raw: ui.PrettyJSON([]byte(d.Body))}
	x := d.CDR
	for _, l := range []struct {
		label string
		p     *ocpi.Price
	}{
		{"Total", x.TotalCost}, {"Fixed", x.TotalFixedCost}, {"Energy", x.TotalEnergyCost}, {"Time", x.TotalTimeCost},
		{"Parking", x.TotalParkingCost}, {"Reservation", x.TotalReservationCost},
	} {
		if l.p != nil {
			e, i := priceText(l.p, x.Currency)
			v.Costs = append(v.Costs, costLine{Label: l.label, Excl: e, Incl: i})
		}
	}
	for _, p := range x.ChargingPeriods {
		v.Periods = append(v.Periods, periodRow{Start: p.StartDateTime, TariffID: p.TariffID, Dimensions: dimensionsText(p.Dimensions)})
	}
	if d.Price.Hub != nil {
		e, i := priceText(d.Price.Hub, x.Currency)
		v.HubCost = costLine{Label: "Hub's price", Excl: e, Incl: i}
		e, i = priceText(d.Price.Difference, x.Currency)
		v.Difference = costLine{Label: "CDR − hub", Excl: e, Incl: i}
	}
	if d.Price.Status != "" && d.Price.Status != cdr.PriceUnpriceable {
		if cost, err := c.cfg.CDRs.Explain(r.Context(), d); err == nil {
			for _, st := range cost.Steps {
				v.Steps = append(v.Steps, fmt.Sprintf("period %d, %s–%s UTC, %s %s: %s", st.Period+1, st.From.UTC().Format("15:04:05"),
					st.To.UTC().Format("15:04:05"), st.Dimension, st.Volume, st.Why))
			}
		}
	}
	return v, nil
}
