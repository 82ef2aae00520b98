package console

import (
	"net/http"
	"slices"
	"sort"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

type evsesView struct {
	EVSEs  []evseRow
	Pager  ui.Pager
	Counts []statusCount
	Total  int64
	CPOs   []string
	States []string
}

type evseRow struct {
	location.EVSE
	Href  string
	Power string
}

// statusCount is one status with its count, linking to the list filtered
// by it.
type statusCount struct {
	Status string
	Count  int64
	Href   string
}

func (c *Console) evsePages() ([]ui.Page, []ui.Action) {
	if c.cfg.Locations == nil {
		return nil, nil
	}
	return []ui.Page{{
		Path: "/evses", Title: "EVSE statuses", Section: "Network", Nav: "EVSE statuses", Template: "evses", Refresh: 30,
		Load: c.loadEVSEs,
	}}, nil
}

func (c *Console) loadEVSEs(r *http.Request) (any, error) {
	ctx := r.Context()
	q := r.URL.Query()
	f := location.EVSEFilter{Status: q.Get("status"), Limit: 50}
	cpo, err := ui.PartyParam(q.Get("cpo"), "cpo")
	if err != nil {
		return nil, err
	}
	f.CountryCode, f.PartyID = cpo.CountryCode, cpo.PartyID
	counts, err := c.cfg.Locations.EVSECounts(ctx, f)
	if err != nil {
		return nil, err
	}
	v := evsesView{States: ocpi.EVSEStatuses}
	for _, st := range ocpi.EVSEStatuses {
		v.Total += counts[st]
		if counts[st] > 0 {
			v.Counts = append(v.Counts, statusCount{Status: st, Count: counts[st], Href: ui.WithQuery("/evses", q, "status", st)})
		}
	}
	// The total first: how many the filter without a status keeps.
	var total int64
	for _, n := range counts {
		total += n
	}
	if f.Status != "" {
		total = counts[f.Status]
	}
	lo, _, pager := ui.OffsetPager(r, int(total), f.Limit)
	f.Offset = lo
	list, n, err := c.cfg.Locations.EVSEs(ctx, f)
	if err != nil {
		return nil, err
	}
	if n != total { // changed between the two reads: page on the newer figure
		_, _, pager = ui.OffsetPager(r, int(n), f.Limit)
	}
	v.Pager = pager
	for _, e := range list {
		row := evseRow{EVSE: e, Href: "/directory/" + e.CountryCode + "/" + e.PartyID + "/" + e.LocationID}
		if e.MaxPowerW > 0 {
			row.Power = ui.Scaled(e.MaxPowerW, 1000, 1) + " kW"
		}
		v.EVSEs = append(v.EVSEs, row)
	}
	if v.CPOs, err = c.partyOptions(r, party.RoleCPO); err != nil {
		return nil, err
	}
	return v, nil
}

// partyOptions lists the parties of the registered platforms ("IN/ACM"),
// of the given roles (none: every role), for a filter's choices.
func (c *Console) partyOptions(r *http.Request, roles ...party.Role) ([]string, error) {
	platforms, err := c.cfg.Parties.List(r.Context(), party.Filter{})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range platforms {
		for _, h := range p.Roles {
			if len(roles) > 0 && !slices.Contains(roles, h.Role) {
				continue
			}
			k := party.Notation(h.CountryCode, h.PartyID)
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}
