package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// legacy reports whether the connection with the hub is in 2.1.1 or 2.0:
// the simulator then sends and answers with the legacy shapes.
func (p *Platform) legacy() bool { return v211.IsLegacy(p.HubVersion()) }

// legacyNow is now as a legacy timestamp.
func (p *Platform) legacyNow() v211.DateTime { return v211.NewDateTime(ocpi.NewDateTime(p.Now())) }

// sessionLocation is the CPO's own copy of a location trimmed to one EVSE
// and connector: what a 2.1.1 session or CDR carries.
func (c *CPO) sessionLocation(locationID, evseUID, connectorID string) (*v211.Location, error) {
	loc := c.locations.Get(c.opts.CountryCode, c.opts.PartyID, locationID)
	if loc == nil {
		return nil, fmt.Errorf("the CPO has no location %s", locationID)
	}
	evses, _ := loc["evses"].([]any)
	e := simwire.FindObj(evses, "uid", evseUID)
	if e == nil {
		return nil, fmt.Errorf("location %s has no EVSE %s", locationID, evseUID)
	}
	conns, _ := e["connectors"].([]any)
	k := simwire.FindObj(conns, "id", connectorID)
	if k == nil {
		return nil, fmt.Errorf("EVSE %s has no connector %s", evseUID, connectorID)
	}
	e["connectors"] = []any{k}
	loc["evses"] = []any{e}
	b, err := json.Marshal(loc)
	if err != nil {
		return nil, err
	}
	var l v211.Location
	if err := v211.Decode(c.HubVersion(), "locations", v211.LevelLocation, b, c.Now(), &l); err != nil {
		return nil, err
	}
	return &l, nil
}

// encode writes a legacy object in the CPO's version.
func (c *CPO) encode(module string, v any) (map[string]any, error) {
	b, err := v211.Encode(c.HubVersion(), module, "", v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

// startLegacySession is StartSession for a 2.1.1 CPO: the session carries
// the token's auth_id and the location trimmed to the EVSE and connector;
// 2.1.1 has no COMMAND auth_method, the token was authorized by the
// command (AUTH_REQUEST).
func (c *CPO) startLegacySession(ctx context.Context, cmd map[string]any) (string, error) {
	tok, _ := cmd["token"].(map[string]any)
	locID, _ := cmd["location_id"].(string)
	evseUID, _ := cmd["evse_uid"].(string)
	evseUID, connID := c.firstConnector(locID, evseUID)
	loc, err := c.sessionLocation(locID, evseUID, connID)
	if err != nil {
		return "", err
	}
	authID, _ := tok["auth_id"].(string)
	now := c.legacyNow()
	c.st.mu.Lock()
	c.st.seq++
	id := fmt.Sprintf("S%d-%d", c.st.seq, now.UnixMilli()%1_000_000)
	c.st.mu.Unlock()
	s, err := c.encode("sessions", v211.Session{ID: id, StartDateTime: now, KWh: ocpi.NumberFromInt(0), AuthID: authID, AuthMethod: "AUTH_REQUEST",
		Location: loc, Currency: c.plan().Currency, Status: "ACTIVE", LastUpdated: now})
	if err != nil {
		return "", err
	}
	if err := c.PutSession(ctx, s); err != nil {
		return "", err
	}
	return id, nil
}

// stopLegacySession is StopSession for a 2.1.1 CPO: a PATCH to COMPLETED
// (the cost a number, excluding VAT), then a 2.1.1 CDR.
func (c *CPO) stopLegacySession(ctx context.Context, s map[string]any) error {
	id, _ := s["id"].(string)
	p := c.plan()
	now := c.legacyNow()
	var start v211.DateTime
	if err := json.Unmarshal([]byte(`"`+fmt.Sprint(s["start_datetime"])+`"`), &start); err != nil {
		return fmt.Errorf("session %s start: %w", id, err)
	}
	kwh := ocpi.NewNumber(p.KWh)
	period := v211.ChargingPeriod{StartDateTime: start, Dimensions: []ocpi.CdrDimension{{Type: "ENERGY", Volume: kwh}}}
	patch, err := c.encode("sessions", struct {
		Status          string                `json:"status"`
		EndDateTime     v211.DateTime         `json:"end_datetime"`
		KWh             ocpi.Number           `json:"kwh"`
		ChargingPeriods []v211.ChargingPeriod `json:"charging_periods"`
		TotalCost       ocpi.Number           `json:"total_cost"`
		LastUpdated     v211.DateTime         `json:"last_updated"`
	}{"COMPLETED", now, kwh, []v211.ChargingPeriod{period}, ocpi.NewNumber(p.CostExclVAT), now})
	if err != nil {
		return err
	}
	if err := c.PatchSession(ctx, id, patch); err != nil {
		return err
	}
	b, _ := json.Marshal(s["location"])
	var loc v211.Location
	if err := json.Unmarshal(b, &loc); err != nil {
		return err
	}
	authID, _ := s["auth_id"].(string)
	method, _ := s["auth_method"].(string)
	hours := ocpi.NewNumber(fmt.Sprintf("%.4f", time.Since(start.Time().Time).Hours()))
	cost := ocpi.NewNumber(p.CostExclVAT)
	if p.FinalCostDelta != "" {
		cost = cost.Add(ocpi.NewNumber(p.FinalCostDelta))
	}
	cdr, err := c.encode("cdrs", v211.CDR{ID: "CDR-" + id, StartDateTime: start, StopDateTime: now, AuthID: authID, AuthMethod: method,
		Location: &loc, Currency: p.Currency, ChargingPeriods: []v211.ChargingPeriod{{StartDateTime: start, Dimensions: []ocpi.CdrDimension{
			{Type: "ENERGY", Volume: kwh}, {Type: "TIME", Volume: hours}}}},
		TotalCost: cost, TotalEnergy: kwh, TotalTime: hours, LastUpdated: now})
	if err != nil {
		return err
	}
	_, err = c.PostCDR(ctx, cdr)
	return err
}

// legacyToken is a token of the eMSP in the 2.1.1 shape (auth_id, no
// owner fields).
func (e *EMSP) legacyToken(uid, typ, whitelist string) map[string]any {
	if typ != "OTHER" {
		typ = "RFID"
	}
	return map[string]any{"uid": uid, "type": typ, "auth_id": "C-" + uid, "issuer": e.opts.Name, "valid": true,
		"whitelist": whitelist, "last_updated": e.legacyNow()}
}

// legacyAuthorization is the 2.1.1 AuthorizationInfo the eMSP answers
// with: allowed and the location, no token or reference.
func legacyAuthorization(allowed string, location map[string]any) map[string]any {
	out := map[string]any{"allowed": allowed}
	if location != nil && strings.EqualFold(allowed, "ALLOWED") {
		out["location"] = location
	}
	return out
}
