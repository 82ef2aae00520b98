package sim

import (
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
)

// ClientInfo is the HubClientInfo object as a platform receives it
// (hubclientinfo.md §2).
type ClientInfo struct {
	PartyID     string        `json:"party_id"`
	CountryCode string        `json:"country_code"`
	Role        string        `json:"role"`
	Status      string        `json:"status"`
	LastUpdated ocpi.DateTime `json:"last_updated"`
}

var connectionStatuses = []string{"CONNECTED", "OFFLINE", "PLANNED", "SUSPENDED"}

// handleClientInfo is the hubclientinfo receiver: PUT and GET
// {clientinfo_url}/{country_code}/{party_id}. A PUT whose body names another
// party than its URL, or carries an unknown status, is refused with 2001.
func (p *Platform) handleClientInfo(w http.ResponseWriter, r *http.Request) {
	rest := r.URL.Path[strings.Index(r.URL.Path, "/clientinfo")+len("/clientinfo"):]
	parts := strings.Split(strings.Trim(rest, "/"), "/")
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		p.Reply(w, http.StatusNotFound, 2000, nil)
		return
	}
	cc, pid := strings.ToUpper(parts[0]), strings.ToUpper(parts[1])
	switch r.Method {
	case http.MethodPut:
		var ci ClientInfo
		if err := json.NewDecoder(r.Body).Decode(&ci); err != nil {
			p.Reply(w, http.StatusBadRequest, 2001, nil)
			return
		}
		if !strings.EqualFold(ci.CountryCode, cc) || !strings.EqualFold(ci.PartyID, pid) || ci.Role == "" ||
			!slices.Contains(connectionStatuses, ci.Status) || ci.LastUpdated.IsZero() {
			p.Reply(w, http.StatusOK, 2001, nil)
			return
		}
		p.mu.Lock()
		p.clientInfo[ci.Role+"/"+cc+"/"+pid] = ci
		p.mu.Unlock()
		p.OK(w, nil)
	case http.MethodGet:
		p.mu.Lock()
		var keys []string
		for k := range p.clientInfo {
			if strings.HasSuffix(k, "/"+cc+"/"+pid) {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		var ci *ClientInfo
		if len(keys) > 0 {
			v := p.clientInfo[keys[0]]
			ci = &v
		}
		p.mu.Unlock()
		if ci == nil {
			p.Reply(w, http.StatusNotFound, 2000, nil)
			return
		}
		p.OK(w, ci)
	default:
		p.Reply(w, http.StatusMethodNotAllowed, 2000, nil)
	}
}

// ClientInfo returns the last ClientInfo the hub pushed for a party.
func (p *Platform) ClientInfo(role, cc, pid string) (ClientInfo, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	ci, ok := p.clientInfo[role+"/"+strings.ToUpper(cc)+"/"+strings.ToUpper(pid)]
	return ci, ok
}
