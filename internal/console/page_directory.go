package console

import (
	"encoding/json"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
)

// directoryMapLimit caps the points drawn on the directory map; the table
// pages through everything.
const directoryMapLimit = 5000

type directoryView struct {
	Map       ui.MapView
	Locations []locationRow
	Pager     ui.Pager
	Statuses  ui.ChartView
	EVSEs     int64
	CPOs      []party.PartyRef
	States    []string
	Truncated bool // the map shows the newest directoryMapLimit locations
}

type locationRow struct {
	location.Summary
	Href     string
	EVSEText string
}

type locationView struct {
	Loc     ocpi.Location
	Summary location.Summary
	Map     ui.MapView
	Raw     string
}

// PageTitle names the page after the location.
func (v locationView) PageTitle() string {
	if v.Loc.Name != "" {
		return v.Loc.Name
	}
	return "Location " + v.Loc.ID
}

func (c *Console) directoryPages() ([]ui.Page, []ui.Action) {
	if c.cfg.Locations == nil {
		return nil, nil
	}
	return []ui.Page{
		{
			Path: "/directory", Title: "Directory", Section: "Network", Nav: "Directory", Template: "directory", Refresh: 30,
			Load: c.loadDirectory,
		},
		{
			Path: "/directory/{cc}/{pid}/{id}", Title: "Location", Template: "location",
			Load: func(r *http.Request) (any, error) {
				ref := location.Ref{CountryCode: r.PathValue("cc"), PartyID: r.PathValue("pid"), LocationID: r.PathValue("id")}
				raw, err := c.cfg.Locations.Get(r.Context(), ref)
				if err != nil {
					return nil, err
				}
				var v locationView
				if err := json.Unmarshal(raw, &v.Loc); err != nil {
					return nil, err
				}
				v.Raw = ui.PrettyJSON([]byte(raw))
				// The summary (EVSE counts) of this one location.
				list, err := c.cfg.Locations.Summaries(r.Context(), location.SummaryFilter{CountryCode: ref.CountryCode, PartyID: ref.PartyID, Limit: directoryMapLimit})
				if err != nil {
					return nil, err
				}
				for _, s := range list {
					if strings.EqualFold(s.ID, ref.LocationID) {
						v.Summary = s
					}
				}
				var pts []ui.MapPoint
				for _, e := range v.Loc.EVSEs {
					if e.Coordinates != nil {
						pts = append(pts, ui.MapPoint{ID: e.UID, Name: e.UID, Status: e.Status, Latitude: e.Coordinates.Latitude, Longitude: e.Coordinates.Longitude})
					}
				}
				if len(pts) == 0 && v.Loc.Coordinates != nil {
					pts = append(pts, ui.MapPoint{ID: v.Loc.ID, Name: v.Loc.Name, Status: v.Summary.Status(), Latitude: v.Loc.Coordinates.Latitude, Longitude: v.Loc.Coordinates.Longitude})
				}
				v.Map = ui.NewMap(pts, ui.MapOptions{Width: 640, Height: 300, TileURL: c.cfg.MapTiles, Attribution: c.cfg.MapAttribution})
				return v, nil
			},
		},
	}, nil
}

func (c *Console) loadDirectory(r *http.Request) (any, error) {
	ctx := r.Context()
	q := r.URL.Query()
	f := location.SummaryFilter{EVSEStatus: q.Get("status")}
	if cpo := q.Get("cpo"); cpo != "" {
		cc, pid, err := party.ParseParty(cpo)
		if err != nil {
			return nil, ocpi.Invalid("cpo", "must be COUNTRY_CODE/PARTY_ID")
		}
		f.CountryCode, f.PartyID = cc, pid
	}
	v := directoryView{States: ocpi.EVSEStatuses}

	// The map: every location the filters keep (up to the cap).
	all := f
	all.Limit = directoryMapLimit + 1
	everything, err := c.cfg.Locations.Summaries(ctx, all)
	if err != nil {
		return nil, err
	}
	if len(everything) > directoryMapLimit {
		everything, v.Truncated = everything[:directoryMapLimit], true
	}
	pts := make([]ui.MapPoint, len(everything))
	for i, s := range everything {
		pts[i] = ui.MapPoint{ID: s.CountryCode + "-" + s.PartyID + "-" + s.ID, Name: orID(s), Status: s.Status(),
			Latitude: s.Latitude, Longitude: s.Longitude, Href: locationHref(s), Detail: evseText(s)}
	}
	v.Map = c.Map(pts)

	// The table: 50 a page, newest first.
	page := f
	page.Limit = 51
	if a := q.Get("after"); a != "" {
		n, err := strconv.ParseInt(a, 10, 64)
		if err != nil || n <= 0 {
			return nil, ocpi.Invalid("after", "must be a location key")
		}
		page.Before = n
	}
	rows, err := c.cfg.Locations.Summaries(ctx, page)
	if err != nil {
		return nil, err
	}
	more := len(rows) > 50
	if more {
		rows = rows[:50]
	}
	var last int64
	for _, s := range rows {
		v.Locations = append(v.Locations, locationRow{Summary: s, Href: locationHref(s), EVSEText: evseText(s)})
		last = s.Key
	}
	v.Pager = ui.KeysetPager(r, len(rows), last, more)

	counts, err := c.cfg.Locations.EVSEStatusCounts(ctx)
	if err != nil {
		return nil, err
	}
	ch := ui.Chart{Title: "EVSEs by status", Series: []ui.Series{{Name: "EVSEs"}}, Width: 960, Height: 160}
	for _, st := range ocpi.EVSEStatuses {
		v.EVSEs += counts[st]
		ch.Labels = append(ch.Labels, st)
		ch.Series[0].Values = append(ch.Series[0].Values, counts[st])
	}
	v.Statuses = ch.View()

	platforms, err := c.cfg.Parties.List(ctx, party.Filter{})
	if err != nil {
		return nil, err
	}
	for _, p := range platforms {
		for _, h := range p.Roles {
			if h.Role == party.RoleCPO {
				v.CPOs = append(v.CPOs, h.PartyRef)
			}
		}
	}
	sort.Slice(v.CPOs, func(i, j int) bool { return v.CPOs[i].String() < v.CPOs[j].String() })
	return v, nil
}

func locationHref(s location.Summary) string {
	return "/directory/" + s.CountryCode + "/" + s.PartyID + "/" + s.ID
}

func orID(s location.Summary) string {
	if s.Name != "" {
		return s.Name
	}
	return s.ID
}

// evseText is "3 of 4 EVSEs available".
func evseText(s location.Summary) string {
	total := 0
	for st, n := range s.EVSEs {
		if st != "REMOVED" {
			total += n
		}
	}
	return strconv.Itoa(s.EVSEs["AVAILABLE"]) + " of " + strconv.Itoa(total) + " EVSEs available"
}
