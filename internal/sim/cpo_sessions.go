package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
)

// SessionPlan is what the CPO simulator's sessions consume and cost.
type SessionPlan struct {
	KWh            string // default "12.5"
	CostExclVAT    string // default "231.25"
	CostInclVAT    string // default "272.88"
	Currency       string // default "INR"
	FinalCostDelta string // added to the CDR's total_cost (a cost mismatch); default none
	// Tariffs are the tariffs the CDR carries (its snapshot); default none.
	Tariffs []map[string]any
}

// Command is a command the CPO simulator received.
type Command struct {
	Command string
	Body    map[string]any
	Header  http.Header
}

// cpoState is the CPO simulator's sessions side.
type cpoState struct {
	mu sync.Mutex
	// sessionPush orders the pushes of sessions: a PATCH after a
	// STOP_SESSION never overtakes the PUT of the session it stops.
	sessionPush sync.Mutex
	tokens      map[string]map[string]any
	sessions    map[string]map[string]any
	cdrs        []map[string]any
	commands    []Command
	onCommand   func(command string, body map[string]any) CommandBehavior
	plan        SessionPlan
	errs        []error
	seq         int
	profiles    []Command
	background  sync.WaitGroup
	// losePushes: sessions and CDRs are kept but never reach the hub (a
	// lost push; the hub's pull recovers them).
	losePushes bool
}

// handleSessionModules adds the modules a CPO offers for tokens, commands,
// sessions, CDRs and charging profiles.
func (c *CPO) handleSessionModules() {
	c.st = &cpoState{tokens: map[string]map[string]any{}, sessions: map[string]map[string]any{}}
	c.Handle("tokens", "RECEIVER", "/cpo/tokens", c.handleTokens)
	c.Handle("commands", "RECEIVER", "/cpo/commands", c.handleCommand)
	c.Handle("sessions", "SENDER", "/cpo/sessions", c.handleSessions)
	c.Handle("cdrs", "SENDER", "/cpo/cdrs", c.handleCDRs)
	c.Handle("chargingprofiles", "RECEIVER", "/cpo/chargingprofiles", c.handleProfile)
}

// OnCommand scripts the answers to commands (nil: the default behaviour).
func (c *CPO) OnCommand(fn func(command string, body map[string]any) CommandBehavior) {
	c.st.mu.Lock()
	c.st.onCommand = fn
	c.st.mu.Unlock()
}

// SetPlan sets what the simulator's sessions consume and cost.
func (c *CPO) SetPlan(p SessionPlan) {
	c.st.mu.Lock()
	c.st.plan = p
	c.st.mu.Unlock()
}

// Commands returns the commands received so far.
func (c *CPO) Commands() []Command {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return append([]Command(nil), c.st.commands...)
}

// Errors returns what went wrong in the simulator's background work
// (results, sessions and CDRs it pushed).
func (c *CPO) Errors() []error {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return append([]error(nil), c.st.errs...)
}

// ReceivedToken returns the CPO's copy of a token pushed by the hub (nil if
// none).
func (c *CPO) ReceivedToken(cc, pid, uid, typ string) map[string]any {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return simwire.Clone(c.st.tokens[strings.ToUpper(cc+"/"+pid+"/"+uid+"/"+typ)])
}

// Session returns the CPO's own copy of one of its sessions.
func (c *CPO) Session(id string) map[string]any {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	return simwire.Clone(c.st.sessions[id])
}

// Wait waits for the background work started by commands to finish.
func (c *CPO) Wait() { c.st.background.Wait() }

// handleTokens is the CPO's tokens receiver: PUT, PATCH and GET of
// /{cc}/{pid}/{uid}?type=.
func (c *CPO) handleTokens(w http.ResponseWriter, r *http.Request) {
	seg := simwire.Segments(r.URL.Path, "/cpo/tokens")
	if len(seg) != 3 {
		c.Reply(w, http.StatusNotFound, 2000, nil)
		return
	}
	typ := r.URL.Query().Get("type")
	var obj map[string]any
	if r.Method == http.MethodPut || r.Method == http.MethodPatch {
		if err := json.NewDecoder(r.Body).Decode(&obj); err != nil {
			c.Reply(w, http.StatusBadRequest, 2001, nil)
			return
		}
		if t, _ := obj["type"].(string); typ == "" && r.Method == http.MethodPut {
			// 2.1.1 token URLs name no type: the token says it.
			typ = t
		}
	}
	if typ == "" {
		typ = "RFID"
	}
	key := strings.ToUpper(seg[0] + "/" + seg[1] + "/" + seg[2] + "/" + typ)
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	switch r.Method {
	case http.MethodGet:
		if t, ok := c.st.tokens[key]; ok {
			c.OK(w, t)
			return
		}
		c.Reply(w, http.StatusNotFound, 2004, nil)
	case http.MethodPut, http.MethodPatch:
		cur, ok := c.st.tokens[key]
		if r.Method == http.MethodPatch {
			if !ok {
				c.Reply(w, http.StatusNotFound, 2004, nil)
				return
			}
			for k, v := range obj {
				cur[k] = v
			}
			obj = cur
		}
		c.st.tokens[key] = obj
		c.OK(w, nil)
	default:
		c.Reply(w, http.StatusMethodNotAllowed, 2000, nil)
	}
}

// LosePushes makes the CPO's session and CDR pushes get lost on the way (it
// keeps the objects and serves them from its senders, so only a pull brings
// them to the hub), or stops that.
func (c *CPO) LosePushes(lose bool) {
	c.st.mu.Lock()
	c.st.losePushes = lose
	c.st.mu.Unlock()
}

// hubPush sends method to one of the hub's module RECEIVER URLs plus path
// segments and requires success (nil, nil: a push lost on the way).
func (c *CPO) hubPush(ctx context.Context, module, method string, body any, path ...string) (*ocpiclient.Response, error) {
	c.st.mu.Lock()
	lose := c.st.losePushes
	c.st.mu.Unlock()
	if lose {
		return nil, nil
	}
	base, found := c.HubEndpoint(module, "RECEIVER")
	if !found {
		return nil, fmt.Errorf("the hub lists no %s RECEIVER", module)
	}
	for _, s := range path {
		base += "/" + url.PathEscape(s)
	}
	resp, err := c.Raw(ctx, method, base, body, nil)
	return resp, ok(resp, err)
}

func (c *CPO) plan() SessionPlan {
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	p := c.st.plan
	def := func(v *string, d string) {
		if *v == "" {
			*v = d
		}
	}
	def(&p.KWh, "12.5")
	def(&p.CostExclVAT, "231.25")
	def(&p.CostInclVAT, "272.88")
	def(&p.Currency, "INR")
	return p
}

// StartSession creates an ACTIVE session for a StartSession command body,
// as a CPO does when the EV is plugged in, and PUTs it to the hub. It
// returns the session id.
func (c *CPO) StartSession(ctx context.Context, cmd map[string]any) (string, error) {
	if c.legacy() {
		return c.startLegacySession(ctx, cmd)
	}
	tok, _ := cmd["token"].(map[string]any)
	loc, _ := cmd["location_id"].(string)
	evse, _ := cmd["evse_uid"].(string)
	conn, _ := cmd["connector_id"].(string)
	if evse == "" || conn == "" {
		evse, conn = c.firstConnector(loc, evse)
	}
	now := ocpi.NewDateTime(c.Now())
	c.st.mu.Lock()
	c.st.seq++
	id := fmt.Sprintf("S%d-%d", c.st.seq, now.UnixMilli()%1_000_000)
	c.st.mu.Unlock()
	s := map[string]any{
		"country_code": c.opts.CountryCode, "party_id": c.opts.PartyID, "id": id, "start_date_time": now, "kwh": 0,
		"cdr_token": map[string]any{"country_code": tok["country_code"], "party_id": tok["party_id"], "uid": tok["uid"],
			"type": tok["type"], "contract_id": tok["contract_id"]},
		"auth_method": "COMMAND", "location_id": loc, "evse_uid": evse, "connector_id": conn,
		"currency": c.plan().Currency, "status": "ACTIVE", "last_updated": now,
	}
	if ref, _ := cmd["authorization_reference"].(string); ref != "" {
		s["authorization_reference"] = ref
	}
	if err := c.PutSession(ctx, s); err != nil {
		return "", err
	}
	return id, nil
}

// firstConnector picks the EVSE (the given one, or the first) and its
// first connector from the CPO's own copy of a location.
func (c *CPO) firstConnector(locationID, evseUID string) (string, string) {
	loc := c.locations.Get(c.opts.CountryCode, c.opts.PartyID, locationID)
	evses, _ := loc["evses"].([]any)
	for _, e := range evses {
		m, _ := e.(map[string]any)
		uid, _ := m["uid"].(string)
		if evseUID != "" && !strings.EqualFold(uid, evseUID) {
			continue
		}
		conns, _ := m["connectors"].([]any)
		if len(conns) > 0 {
			cm, _ := conns[0].(map[string]any)
			id, _ := cm["id"].(string)
			return uid, id
		}
	}
	if evseUID == "" {
		evseUID = "#NA"
	}
	return evseUID, "#NA"
}

// PutSession keeps a session as the CPO's own and PUTs it to the hub. The
// CPO knows its session before the hub has answered, as a real one does: a
// STOP_SESSION may come while the PUT is still on its way. A session the
// hub refused is forgotten.
func (c *CPO) PutSession(ctx context.Context, s map[string]any) error {
	id, _ := s["id"].(string)
	c.st.mu.Lock()
	prev, had := c.st.sessions[id]
	c.st.sessions[id] = simwire.Clone(s)
	c.st.mu.Unlock()
	c.st.sessionPush.Lock()
	defer c.st.sessionPush.Unlock()
	if _, err := c.hubPush(ctx, "sessions", http.MethodPut, s, c.opts.CountryCode, c.opts.PartyID, id); err != nil {
		c.st.mu.Lock()
		if had {
			c.st.sessions[id] = prev
		} else {
			delete(c.st.sessions, id)
		}
		c.st.mu.Unlock()
		return err
	}
	return nil
}

// PatchSession PATCHes a session at the hub and applies the patch to the
// CPO's own copy (charging_periods appended).
func (c *CPO) PatchSession(ctx context.Context, id string, patch map[string]any) error {
	c.st.sessionPush.Lock()
	_, err := c.hubPush(ctx, "sessions", http.MethodPatch, patch, c.opts.CountryCode, c.opts.PartyID, id)
	c.st.sessionPush.Unlock()
	if err != nil {
		return err
	}
	c.st.mu.Lock()
	defer c.st.mu.Unlock()
	s := c.st.sessions[id]
	if s == nil {
		return nil
	}
	simwire.PatchSession(s, simwire.Clone(patch))
	return nil
}

// StopSession ends one of the CPO's sessions as a CPO does after a
// STOP_SESSION: a PATCH to COMPLETED with the energy and cost of the plan,
// then the CDR.
func (c *CPO) StopSession(ctx context.Context, id string) error {
	s := c.Session(id)
	if s == nil {
		return fmt.Errorf("no session %s", id)
	}
	if c.legacy() {
		return c.stopLegacySession(ctx, s)
	}
	p := c.plan()
	now := ocpi.NewDateTime(c.Now())
	start, _ := ocpi.ParseDateTime(fmt.Sprint(s["start_date_time"]))
	period := map[string]any{"start_date_time": start, "dimensions": []any{map[string]any{"type": "ENERGY", "volume": json.Number(p.KWh)}}}
	cost := map[string]any{"excl_vat": json.Number(p.CostExclVAT), "incl_vat": json.Number(p.CostInclVAT)}
	if err := c.PatchSession(ctx, id, map[string]any{"status": "COMPLETED", "end_date_time": now, "kwh": json.Number(p.KWh),
		"charging_periods": []any{period}, "total_cost": cost, "last_updated": now}); err != nil {
		return err
	}
	cdrCost := cost
	if p.FinalCostDelta != "" {
		d := ocpi.NewNumber(p.CostExclVAT).Add(ocpi.NewNumber(p.FinalCostDelta))
		cdrCost = map[string]any{"excl_vat": json.Number(d.String()), "incl_vat": json.Number(ocpi.NewNumber(p.CostInclVAT).Add(ocpi.NewNumber(p.FinalCostDelta)).String())}
	}
	hours := now.Sub(start.Time).Hours()
	cdr := map[string]any{
		"country_code": c.opts.CountryCode, "party_id": c.opts.PartyID, "id": "CDR-" + id,
		"start_date_time": start, "end_date_time": now, "session_id": id, "cdr_token": s["cdr_token"],
		"auth_method": s["auth_method"], "cdr_location": c.cdrLocation(s), "currency": p.Currency,
		"charging_periods": []any{map[string]any{"start_date_time": start, "dimensions": []any{
			map[string]any{"type": "ENERGY", "volume": json.Number(p.KWh)}, map[string]any{"type": "TIME", "volume": fmt.Sprintf("%.4f", hours)}}}},
		"total_cost": cdrCost, "total_energy": json.Number(p.KWh), "total_time": fmt.Sprintf("%.4f", hours),
		"last_updated": now,
	}
	if ref, _ := s["authorization_reference"].(string); ref != "" {
		cdr["authorization_reference"] = ref
	}
	if len(p.Tariffs) > 0 {
		ts := make([]any, len(p.Tariffs))
		for i, t := range p.Tariffs {
			ts[i] = t
		}
		cdr["tariffs"] = ts
	}
	_, err := c.PostCDR(ctx, cdr)
	return err
}

// cdrLocation builds a CDR's location from the CPO's own copy of the
// session's location.
func (c *CPO) cdrLocation(s map[string]any) map[string]any {
	locID, _ := s["location_id"].(string)
	evse, _ := s["evse_uid"].(string)
	conn, _ := s["connector_id"].(string)
	out := map[string]any{"id": locID, "address": "Main Street 1", "city": "Bengaluru", "country": "IND",
		"coordinates": map[string]any{"latitude": "12.97160", "longitude": "77.59460"}, "evse_uid": evse, "evse_id": evse,
		"connector_id": conn, "connector_standard": "IEC_62196_T2", "connector_format": "SOCKET", "connector_power_type": "AC_3_PHASE"}
	loc := c.locations.Get(c.opts.CountryCode, c.opts.PartyID, locID)
	if loc == nil {
		return out
	}
	for _, k := range []string{"name", "address", "city", "postal_code", "state", "country", "coordinates"} {
		if v, ok := loc[k]; ok {
			out[k] = v
		}
	}
	if addr, _ := out["address"].(string); len(addr) > 45 {
		out["address"] = addr[:45]
	}
	evses, _ := loc["evses"].([]any)
	if e := simwire.FindObj(evses, "uid", evse); e != nil {
		if id, _ := e["evse_id"].(string); id != "" {
			out["evse_id"] = id
		}
		conns, _ := e["connectors"].([]any)
		if k := simwire.FindObj(conns, "id", conn); k != nil {
			out["connector_standard"], out["connector_format"], out["connector_power_type"] = k["standard"], k["format"], k["power_type"]
		}
	}
	return out
}

// PostCDR posts a CDR to the hub and returns the hub's answer (its
// Location header names the stored CDR).
func (c *CPO) PostCDR(ctx context.Context, cdr map[string]any) (*ocpiclient.Response, error) {
	resp, err := c.hubPush(ctx, "cdrs", http.MethodPost, cdr)
	if err == nil {
		c.st.mu.Lock()
		c.st.cdrs = append(c.st.cdrs, simwire.Clone(cdr))
		c.st.mu.Unlock()
	}
	return resp, err
}

// handleSessions is the CPO's sessions sender: the list of its sessions,
// and PUT .../{id}/charging_preferences.
func (c *CPO) handleSessions(w http.ResponseWriter, r *http.Request) {
	seg := simwire.Segments(r.URL.Path, "/cpo/sessions")
	if r.Method == http.MethodPut && len(seg) == 2 && seg[1] == "charging_preferences" {
		if c.Session(seg[0]) == nil {
			c.Reply(w, http.StatusNotFound, 2001, nil)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		c.OK(w, "ACCEPTED")
		return
	}
	c.st.mu.Lock()
	list := simwire.Clones(c.st.sessions)
	c.st.mu.Unlock()
	c.OKList(w, list)
}

// handleCDRs is the CPO's CDRs sender.
func (c *CPO) handleCDRs(w http.ResponseWriter, r *http.Request) {
	c.st.mu.Lock()
	list := make([]any, 0, len(c.st.cdrs))
	for _, d := range c.st.cdrs {
		list = append(list, d)
	}
	c.st.mu.Unlock()
	c.OKList(w, list)
}
