package console

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/ocpihub/ocpihub/internal/console/ui"
	"github.com/ocpihub/ocpihub/internal/party"
)

type partiesView struct {
	Platforms []*party.Platform
	Pager     ui.Pager
	Total     int
	Statuses  []string
	Roles     []string
}

type partyView struct {
	*party.Platform
	// Peer is set for a peer hub: the parties behind it and their
	// reachability.
	Peer *party.Peer
}

// PageTitle names the page after the platform.
func (v partyView) PageTitle() string { return v.Name }

func (c *Console) partyPages() ([]ui.Page, []ui.Action) {
	pages := []ui.Page{
		{
			Path: "/parties", Title: "Parties", Section: "Network", Nav: "Parties", Template: "parties", Refresh: 30,
			Load: func(r *http.Request) (any, error) {
				all, err := c.cfg.Parties.List(r.Context(), party.Filter{})
				if err != nil {
					return nil, err
				}
				if err := c.cfg.Parties.AttachHealth(r.Context(), all...); err != nil {
					return nil, err
				}
				list := filterPlatforms(all, r)
				page, pager := ui.Paginate(r, list, 25)
				return partiesView{Platforms: page, Pager: pager, Total: len(all),
					Statuses: []string{"CONNECTED", "PENDING", "SUSPENDED", "UNREGISTERED"}, Roles: party.Roles}, nil
			},
		},
		{
			Path: "/parties/{id}", Title: "Party", Template: "party",
			Load: func(r *http.Request) (any, error) {
				id, err := ui.PathInt(r, "id")
				if err != nil {
					return nil, err
				}
				p, err := c.cfg.Parties.Find(r.Context(), id)
				if err != nil {
					return nil, err
				}
				if err := c.cfg.Parties.AttachHealth(r.Context(), p); err != nil {
					return nil, err
				}
				v := partyView{Platform: p}
				peer, isPeer, err := c.peerOf(r, p)
				if err != nil {
					return nil, err
				}
				if isPeer {
					v.Peer = peer
				}
				return v, nil
			},
		},
	}
	act := func(verb, done string, fn func(r *http.Request, id int64) (string, error)) ui.Action {
		return ui.Action{
			Path: "/parties/{id}/" + verb,
			Do: func(r *http.Request) (ui.Result, error) {
				id, err := ui.PathInt(r, "id")
				if err != nil {
					return ui.Result{}, err
				}
				back := "/parties/" + strconv.FormatInt(id, 10)
				warning, err := fn(r, id)
				if err != nil {
					return ui.Result{Redirect: back}, err
				}
				p, err := c.cfg.Parties.Find(r.Context(), id)
				if err != nil {
					return ui.Result{Redirect: back}, err
				}
				c.logger.InfoContext(r.Context(), "console: platform "+verb, "platform_id", id, "name", p.Name)
				if warning != "" {
					return ui.Result{Redirect: back, Flash: fmt.Sprintf("%s %s; %s", p.Name, done, warning), Failed: true}, nil
				}
				return ui.Result{Redirect: back, Flash: fmt.Sprintf("%s %s.", p.Name, done)}, nil
			},
		}
	}
	actions := []ui.Action{
		act("suspend", "is suspended: its tokens are refused and partners see it SUSPENDED", func(r *http.Request, id int64) (string, error) {
			return "", c.cfg.Parties.Suspend(r.Context(), id)
		}),
		act("resume", "is connected again", func(r *http.Request, id int64) (string, error) {
			return "", c.cfg.Parties.Resume(r.Context(), id)
		}),
		act("rotate", "has new credentials tokens in both directions", func(r *http.Request, id int64) (string, error) {
			_, err := c.cfg.Parties.Rotate(r.Context(), id)
			return "", err
		}),
		act("disconnect", "is unregistered", func(r *http.Request, id int64) (string, error) {
			return c.cfg.Parties.Disconnect(r.Context(), id)
		}),
	}
	return pages, actions
}

// filterPlatforms applies the list's filters: status, connection, role and
// a search over names, party ids and URLs.
func filterPlatforms(all []*party.Platform, r *http.Request) []*party.Platform {
	q := r.URL.Query()
	status, conn, role := q.Get("status"), q.Get("connection"), q.Get("role")
	search := strings.ToLower(strings.TrimSpace(q.Get("q")))
	var out []*party.Platform
	for _, p := range all {
		if status != "" && string(p.Status) != status {
			continue
		}
		if conn != "" && (p.Connection != conn || p.Status != party.StatusConnected) {
			continue
		}
		if health := q.Get("health"); health != "" && (p.Health == nil || p.Health.State != health) {
			continue
		}
		if role != "" && !slices.ContainsFunc(p.Roles, func(h party.HostedParty) bool { return string(h.Role) == role }) {
			continue
		}
		if search != "" && !matches(p, search) {
			continue
		}
		out = append(out, p)
	}
	return out
}

func matches(p *party.Platform, search string) bool {
	hay := []string{p.Name, p.VersionsURL, strconv.FormatInt(p.ID, 10)}
	for _, r := range p.Roles {
		hay = append(hay, r.CountryCode+"-"+r.PartyID, r.CountryCode+"/"+r.PartyID, r.PartyID, r.BusinessDetails.Name)
	}
	for _, h := range hay {
		if strings.Contains(strings.ToLower(h), search) {
			return true
		}
	}
	return false
}

// peerOf returns the peer hub view of a platform with the HUB role; found
// is false for other platforms.
func (c *Console) peerOf(r *http.Request, p *party.Platform) (peer *party.Peer, found bool, err error) {
	if !slices.ContainsFunc(p.Roles, func(h party.HostedParty) bool { return h.Role == party.RoleHUB && !h.Represented }) {
		return nil, false, nil
	}
	peers, err := c.cfg.Parties.Peers(r.Context())
	if err != nil {
		return nil, false, err
	}
	for i := range peers {
		if peers[i].PlatformID == p.ID {
			return &peers[i], true, nil
		}
	}
	return nil, false, nil
}
