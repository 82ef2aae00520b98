package sim

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// PeerHubOptions make a simulated platform another roaming hub.
type PeerHubOptions struct {
	// CountryCode and PartyID are the hub's own party (role HUB).
	CountryCode, PartyID string
	// Behind are the other parties the hub lists in its HubClientInfo
	// (the platform's own party is listed first, CONNECTED).
	Behind []ClientInfo
}

// PeerHub is a simulated roaming hub that peers with ocpihub: it registers
// with the HUB role, lists a CPO and an eMSP behind it in its HubClientInfo
// sender, and forwards the CPO's traffic (locations, tariffs, sessions,
// CDRs, command results, authorization requests) with the CPO in OCPI-from.
// It receives what ocpihub sends to the parties behind it: tokens, commands
// and charging profiles (its CPO side), and keeps what the eMSP behind it
// would get.
type PeerHub struct {
	*CPO
	// EMSP is the eMSP party behind the hub.
	EMSP ClientInfo
	// Received is the eMSP side: the locations, tariffs, sessions and
	// CDRs ocpihub sent the hub (for the eMSP behind it).
	Received *EMSP
}

// StartPeerHub starts a peer hub hub with a CPO cpo and an eMSP emsp behind
// it (each "CC/PID"); tweak adjusts its options (e.g. its versions).
func StartPeerHub(name, hub, cpo, emsp string, logger *slog.Logger, tweak ...func(*Options)) (*PeerHub, error) {
	hcc, hpid, _ := strings.Cut(hub, "/")
	ccc, cpid, _ := strings.Cut(cpo, "/")
	ecc, epid, _ := strings.Cut(emsp, "/")
	e := ClientInfo{CountryCode: ecc, PartyID: epid, Role: "EMSP", Status: "CONNECTED"}
	tweaks := append([]func(*Options){func(o *Options) {
		o.Hub = &PeerHubOptions{CountryCode: hcc, PartyID: hpid, Behind: []ClientInfo{e}}
	}}, tweak...)
	// The eMSP behind is stamped last, with the clock the tweaks chose.
	tweaks = append(tweaks, func(o *Options) {
		now := clock.Clock(clock.Real{})
		if o.Clock != nil {
			now = o.Clock
		}
		o.Hub.Behind[0].LastUpdated = ocpi.NewDateTime(now.Now())
	})
	c, err := StartCPO(name, ccc, cpid, logger, tweaks...)
	if err != nil {
		return nil, err
	}
	r := &EMSP{Platform: c.Platform, locations: simwire.NewDirectory(), tariffs: simwire.NewDirectory()}
	c.Handle("locations", "RECEIVER", "/emsp/locations", r.receiver(r.locations, "/emsp/locations"))
	c.Handle("tariffs", "RECEIVER", "/emsp/tariffs", r.receiver(r.tariffs, "/emsp/tariffs"))
	// The eMSP's tokens: the list ocpihub pulls, and the authorizations
	// of its tokens at ocpihub's CPOs.
	c.Handle("tokens", "SENDER", "/emsp/tokens", r.handleTokens)
	r.handleSessionModules()
	return &PeerHub{CPO: c, EMSP: e, Received: r}, nil
}

// EMSPToken returns a valid token of the eMSP behind the hub.
func (h *PeerHub) EMSPToken(uid, typ, whitelist string) map[string]any {
	return map[string]any{"country_code": h.EMSP.CountryCode, "party_id": h.EMSP.PartyID, "uid": uid, "type": typ,
		"contract_id": "C-" + uid, "issuer": "Peer eMSP", "valid": true, "whitelist": whitelist,
		"last_updated": ocpi.NewDateTime(h.Now())}
}

// KeepToken adds a token of the eMSP behind the hub to its tokens sender
// without pushing it (ocpihub learns of it by a pull), and answers its
// authorizations.
func (h *PeerHub) KeepToken(tok map[string]any) {
	uid, _ := tok["uid"].(string)
	typ, _ := tok["type"].(string)
	h.Received.st.mu.Lock()
	h.Received.st.tokens[tokenKey(uid, typ)] = simwire.Clone(tok)
	h.Received.st.mu.Unlock()
}

// parties are the ClientInfo objects the hub lists.
func (p *Platform) parties() []ClientInfo {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.opts.Hub
	out := []ClientInfo{{CountryCode: p.opts.CountryCode, PartyID: p.opts.PartyID, Role: p.opts.Role, Status: "CONNECTED",
		LastUpdated: ocpi.NewDateTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}}
	return append(out, h.Behind...)
}

// handleHubClientInfo is the hub's HubClientInfo sender: every party behind
// it, one page.
func (p *Platform) handleHubClientInfo(w http.ResponseWriter, r *http.Request) {
	list := p.parties()
	w.Header().Set("X-Total-Count", strconv.Itoa(len(list)))
	w.Header().Set("X-Limit", "100")
	p.OK(w, list)
}

// SetBehind replaces the status of a party behind the hub in its list
// (what the next pull finds); it does not push.
func (h *PeerHub) SetBehind(ci ClientInfo) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i, b := range h.opts.Hub.Behind {
		if b.Role == ci.Role && strings.EqualFold(b.CountryCode, ci.CountryCode) && strings.EqualFold(b.PartyID, ci.PartyID) {
			h.opts.Hub.Behind[i] = ci
			return
		}
	}
	h.opts.Hub.Behind = append(h.opts.Hub.Behind, ci)
}

// PushClientInfo PUTs a ClientInfo to ocpihub's hubclientinfo receiver and
// returns the answer whatever it is.
func (h *PeerHub) PushClientInfo(ctx context.Context, ci ClientInfo) (*ocpiclient.Response, error) {
	base, ok := h.HubEndpoint("hubclientinfo", "RECEIVER")
	if !ok {
		return nil, fmt.Errorf("the hub lists no hubclientinfo RECEIVER")
	}
	return h.Raw(ctx, http.MethodPut, base+"/"+url.PathEscape(ci.CountryCode)+"/"+url.PathEscape(ci.PartyID), ci, nil)
}

// Authorize asks ocpihub for a real-time authorization of a token at the
// CPO behind the hub, addressed to the token's eMSP, and returns the answer
// whatever it is.
func (h *PeerHub) Authorize(ctx context.Context, uid, typ string, to ocpiclient.Party, body any) (*ocpiclient.Response, error) {
	base, ok := h.HubEndpoint("tokens", "SENDER")
	if !ok {
		return nil, fmt.Errorf("the hub lists no tokens SENDER")
	}
	hdr := http.Header{}
	if !to.IsZero() {
		hdr.Set("OCPI-to-country-code", to.CountryCode)
		hdr.Set("OCPI-to-party-id", to.PartyID)
	}
	return h.Raw(ctx, http.MethodPost, base+"/"+url.PathEscape(uid)+"/authorize?type="+url.QueryEscape(typ), body, hdr)
}
