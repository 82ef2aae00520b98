package console

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/cdr"
	"github.com/ocpihub/ocpihub/internal/command"
	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	sessionsvc "github.com/ocpihub/ocpihub/internal/session"
)

// chartDays is how many days the sessions charts cover, ending today (UTC,
// on the console's clock).
const chartDays = 30

type sessionsView struct {
	Sessions []sessionRow
	Pager    ui.Pager
	States   []string
	Parties  []string
	Counts   ui.ChartView
	Energy   ui.ChartView
}

// sessionRow is a session as the lists show it.
type sessionRow struct {
	*sessionsvc.Stored
	Href  string
	KWh   string
	Cost  string // excl. VAT, with the currency
	Where string
}

type sessionView struct {
	sessionRow
	Periods  []periodRow
	CostIncl string
	CDRs     []cdrRow
	Commands []*command.Record
	Location string // directory path of the session's location
	Raw      string
}

// periodRow sums a charging period up: when, which tariff, what was
// measured ("ENERGY 12.5 · TIME 1.25").
type periodRow struct {
	Start      ocpi.DateTime
	TariffID   string
	Dimensions string
}

// PageTitle names the page after the session.
func (v sessionView) PageTitle() string { return "Session " + v.ID }

func (c *Console) sessionPages() ([]ui.Page, []ui.Action) {
	if c.cfg.Sessions == nil {
		return nil, nil
	}
	return []ui.Page{
		{
			Path: "/sessions", Title: "Sessions", Section: "Charging", Nav: "Sessions", Template: "sessions", Refresh: 10,
			Load: c.loadSessions,
		},
		{
			Path: "/sessions/{cc}/{pid}/{id}", Title: "Session", Template: "session",
			Load: c.loadSession,
		},
	}, nil
}

func (c *Console) loadSessions(r *http.Request) (any, error) {
	ctx := r.Context()
	q := r.URL.Query()
	p, err := ui.PartyParam(q.Get("party"), "party")
	if err != nil {
		return nil, err
	}
	f := sessionsvc.BrowseFilter{Status: q.Get("status"), Party: p, Limit: 50}
	if f.Status != "" && !slices.Contains(ocpi.SessionStatuses, f.Status) {
		return nil, ocpi.Invalid("status", "must be a session status")
	}
	f.Offset = pageOffset(q, f.Limit)
	list, total, err := c.cfg.Sessions.Browse(ctx, f)
	if err != nil {
		return nil, err
	}
	v := sessionsView{States: ocpi.SessionStatuses}
	_, _, v.Pager = ui.OffsetPager(r, int(total), f.Limit)
	for _, st := range list {
		v.Sessions = append(v.Sessions, newSessionRow(st))
	}
	if v.Parties, err = c.partyOptions(r); err != nil {
		return nil, err
	}
	days, err := c.cfg.Sessions.Daily(ctx, c.clock.Now(), chartDays, time.UTC)
	if err != nil {
		return nil, err
	}
	labels := ui.DailyLabels(c.clock.Now(), chartDays, time.UTC)
	counts := ui.Chart{Title: "Sessions started per day", Labels: labels, Series: []ui.Series{{Name: "Sessions"}}, Height: 180}
	energy := ui.Chart{Title: "Energy per day", Labels: labels, Series: []ui.Series{{Name: "Energy"}}, Unit: "kWh", Scale: 1000, Decimals: 1, Height: 180}
	for _, d := range days {
		counts.Series[0].Values = append(counts.Series[0].Values, d.Sessions)
		energy.Series[0].Values = append(energy.Series[0].Values, d.EnergyWh)
	}
	v.Counts, v.Energy = counts.View(), energy.View()
	return v, nil
}

func newSessionRow(st *sessionsvc.Stored) sessionRow {
	s := st.Session
	row := sessionRow{Stored: st, Href: "/sessions/" + url.PathEscape(st.CountryCode) + "/" + url.PathEscape(st.PartyID) + "/" + url.PathEscape(st.ID)}
	if s.KWh.Valid() {
		row.KWh = s.KWh.String() + " kWh"
	}
	if s.TotalCost != nil {
		row.Cost = s.TotalCost.ExclVAT.String() + " " + s.Currency
	}
	row.Where = s.LocationID + " / " + s.EVSEUID + " / " + s.ConnectorID
	return row
}

func (c *Console) loadSession(r *http.Request) (any, error) {
	ctx := r.Context()
	ref := sessionsvc.Ref{CountryCode: r.PathValue("cc"), PartyID: r.PathValue("pid"), ID: r.PathValue("id")}
	st, err := c.cfg.Sessions.Find(ctx, ref)
	if err != nil {
		return nil, err
	}
	v := sessionView{sessionRow: newSessionRow(st), Raw: ui.PrettyJSON([]byte(st.Body)),
		Location: "/directory/" + url.PathEscape(st.CountryCode) + "/" + url.PathEscape(st.PartyID) + "/" + url.PathEscape(st.Session.LocationID)}
	if tc := st.Session.TotalCost; tc != nil && tc.InclVAT != nil {
		v.CostIncl = tc.InclVAT.String() + " " + st.Session.Currency
	}
	for _, p := range st.Session.ChargingPeriods {
		v.Periods = append(v.Periods, periodRow{Start: p.StartDateTime, TariffID: p.TariffID, Dimensions: dimensionsText(p.Dimensions)})
	}
	if c.cfg.CDRs != nil {
		list, err := c.cfg.CDRs.FindBySession(ctx, st.Ref())
		if err != nil {
			return nil, err
		}
		for _, d := range list {
			v.CDRs = append(v.CDRs, newCDRRow(d))
		}
	}
	if c.cfg.Commands != nil && st.AuthorizationReference != "" {
		// The START_SESSION an eMSP sent with this reference to this CPO.
		list, _, err := c.cfg.Commands.List(ctx, command.ListFilter{Command: ocpi.CommandStartSession, AuthorizationReference: st.AuthorizationReference, Limit: 10})
		if err != nil {
			return nil, err
		}
		for _, cmd := range list {
			if cmd.CPO.CountryCode == "" || strings.EqualFold(cmd.CPO.CountryCode, st.CountryCode) && strings.EqualFold(cmd.CPO.PartyID, st.PartyID) {
				v.Commands = append(v.Commands, cmd)
			}
		}
	}
	return v, nil
}

// dimensionsText writes a charging period's dimensions: "ENERGY 12.5 · TIME 1.25".
func dimensionsText(ds []ocpi.CdrDimension) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = d.Type + " " + d.Volume.String()
	}
	return strings.Join(parts, " · ")
}

// pageOffset is the offset of the request's "page" (1-based) of size rows.
func pageOffset(q url.Values, size int) int {
	page := 1
	if n, err := strconv.Atoi(q.Get("page")); err == nil && n > 1 {
		page = n
	}
	return (page - 1) * size
}

// cdrRow is a CDR as the lists show it.
type cdrRow struct {
	*cdr.Stored
	Href        string
	CostExcl    string
	CostIncl    string
	Energy      string
	Time        string
	SessionHref string
}
