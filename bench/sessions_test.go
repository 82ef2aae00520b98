package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// Token, command and CDR scenarios (see README.md):
//
//   - authorize-own: the CPO asks for real-time authorization of one of
//     ocpihub's own tokens at a location of the directory (token, location
//     and EVSE lookups, a remembered authorization_reference).
//   - authorize-forwarded: the same for an eMSP's NEVER token: forwarded to
//     the eMSP simulator on loopback and its answer passed back.
//   - command-relay: an eMSP's START_SESSION through the hub to the CPO
//     simulator (directory checks, the command stored, forwarded with the
//     hub's response_url, the CPO's answer recorded and passed back);
//     command-direct is the same request straight to the CPO simulator: the
//     difference is the hub's added latency.
//   - cdr-ingest: the CPO posts a new CDR (validation, canonical form,
//     stored, cdr.created, queued for the eMSP).
//   - cdr-ingest-session: the same for the CDR of a completed session the
//     hub holds, as CDRs arrive: its cost compared with the session's,
//     both with two hours of five-minute charging periods.
//   - session-patch: the CPO PATCHes one of 100 active sessions with its
//     next charging period, kWh and last_updated, as a charger's meter
//     values arrive every minute or so (the period appended, the session
//     stored and queued for the eMSP): at national scale the most frequent
//     write after EVSE statuses.
func init() {
	// cdr-ingest runs first and command-relay last: the commands'
	// timeouts (30 s later, then their TIMEOUT relays) would otherwise load
	// the database during the scenarios that follow.
	scenarios = append(scenarios,
		scenario{name: "cdr-ingest", seed: seedSessions, target: cdrTarget},
		scenario{name: "cdr-ingest-session", seed: seedCDRSessions, target: cdrSessionTarget, verify: verifyCDRSessions},
		scenario{name: "session-patch", seed: seedSessionPatch, target: sessionPatchTarget, verify: verifySessionPatches},
		scenario{name: "authorize-own", target: func(h *benchHub) Target {
			return h.post("authorize own token", "/ocpi/2.2.1/cpo/tokens/APP-B/authorize?type=APP_USER", h.cpoToken, authorizeBody, 200)
		}},
		scenario{name: "authorize-forwarded", target: func(h *benchHub) Target {
			return h.post("authorize forwarded", "/ocpi/2.2.1/cpo/tokens/NEVER-B/authorize", h.cpoToken, authorizeBody, 200)
		}},
		scenario{name: "command-direct", target: func(h *benchHub) Target {
			return h.postURL("START_SESSION to the CPO", h.cpoCommands, h.hubToCPO, h.startBody, 200)
		}},
		scenario{name: "command-relay", target: func(h *benchHub) Target {
			return h.post("START_SESSION via hub", "/ocpi/2.2.1/emsp/commands/START_SESSION", h.emspToken, h.startBody, 200)
		}},
	)
}

var authorizeBody = func() []byte { return []byte(`{"location_id":"BLOC","evse_uids":["E1"]}`) }

// seedSessions publishes the location BLOC, issues ocpihub's own token
// APP-B, registers an eMSP with its NEVER token NEVER-B, and checks that
// every scenario's request is answered with OCPI 1000.
func seedSessions(b testing.TB, h *benchHub) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if status, err := h.do(ctx, http.MethodPut, "/ocpi/2.2.1/cpo/locations/NL/BCP/BLOC",
		benchLocation("BCP", "BLOC", time.Now(), 1)); err != nil || status != http.StatusCreated {
		b.Fatalf("seed location: HTTP %d %v", status, err)
	}
	if _, err := h.Tokens.Issue(ctx, ocpi.Token{UID: "APP-B", Type: "APP_USER"}); err != nil {
		b.Fatal(err)
	}
	e := addEMSP(b, h, "Bench eMSP", "BEM")
	tok := e.NewToken("NEVER-B", "RFID", "NEVER")
	if _, err := e.PutToken(ctx, tok); err != nil {
		b.Fatal(err)
	}
	h.emspToken = e.Token()
	start, _ := json.Marshal(map[string]any{"response_url": e.URL() + "/ocpi/2.2.1/emsp/commands/START_SESSION/bench",
		"token": tok, "location_id": "BLOC", "evse_uid": "E1", "connector_id": "1"})
	h.startBody = func() []byte { return start }

	// The CPO accepts commands and reports nothing (the scenario measures
	// the synchronous relay; results and sessions would load the machine in
	// the background).
	h.cpo.OnCommand(func(string, map[string]any) sim.CommandBehavior { return sim.CommandBehavior{NoResult: true} })
	p, err := h.Parties.FindByParty(ctx, party.RoleCPO, "NL", "BCP")
	if err != nil {
		b.Fatal(err)
	}
	auth, err := h.Parties.Auth(p)
	if err != nil {
		b.Fatal(err)
	}
	h.hubToCPO = auth.Token
	h.cpoCommands, _ = p.Endpoint("commands", ocpi.InterfaceReceiver)
	h.cpoCommands += "/START_SESSION"

	for _, s := range scenarios {
		if !strings.HasPrefix(s.name, "authorize") && !strings.HasPrefix(s.name, "command") && s.name != "cdr-ingest" {
			continue
		}
		if err := probe(ctx, h, s.target(h)); err != nil {
			b.Fatalf("%s: %v", s.name, err)
		}
	}
}

// probe sends one request of a target and requires OCPI success.
func probe(ctx context.Context, h *benchHub, t Target) error {
	req, err := t.NewRequest(ctx)
	if err != nil {
		return err
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	env, err := ocpi.DecodeEnvelope(body)
	if err != nil || env.StatusCode != 1000 {
		return fmt.Errorf("HTTP %d %s", resp.StatusCode, body)
	}
	return nil
}

// post is a Target for an authenticated POST of a hub path.
func (h *benchHub) post(name, path, token string, body func() []byte, want int) Target {
	return h.postURL(name, h.PublicURL()+path, token, body, want)
}

func (h *benchHub) postURL(name, url, token string, body func() []byte, want int) Target {
	hdr := http.Header{"Authorization": {ocpi.EncodeToken(token, true)}, "Content-Type": {"application/json"}}
	return Target{Name: name, WantStatus: want, NewRequest: func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(string(body())))
		if err != nil {
			return nil, err
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		return req, nil
	}}
}

// cdrSeq numbers the bench CDRs across targets (the probe's and the run's).
var cdrSeq atomic.Int64

// cdrTarget posts a new CDR per request, for the bench eMSP's token, of a
// session the hub does not hold.
func cdrTarget(h *benchHub) Target {
	n := &cdrSeq
	start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	return h.post("POST cdr", "/ocpi/2.2.1/cpo/cdrs", h.cpoToken, func() []byte {
		i := n.Add(1)
		b, _ := json.Marshal(map[string]any{
			"country_code": "NL", "party_id": "BCP", "id": fmt.Sprintf("BCDR-%d", i), "session_id": fmt.Sprintf("BS-%d", i),
			"start_date_time": start, "end_date_time": start.Add(time.Hour), "auth_method": "COMMAND",
			"cdr_token": map[string]any{"country_code": "DE", "party_id": "BEM", "uid": "NEVER-B", "type": "RFID", "contract_id": "C-NEVER-B"},
			"cdr_location": map[string]any{"id": "BLOC", "address": "Bench Road 1", "city": "Pune", "country": "IND",
				"coordinates": map[string]any{"latitude": "18.00001", "longitude": "73.85670"}, "evse_uid": "E1", "evse_id": "IN*BCP*E1",
				"connector_id": "1", "connector_standard": "IEC_62196_T2", "connector_format": "SOCKET", "connector_power_type": "AC_3_PHASE"},
			"currency": "INR", "charging_periods": []any{cdrPeriod(start, 12.5, 1)},
			"total_cost": map[string]any{"excl_vat": 231.25, "incl_vat": 272.88}, "total_energy": 12.5, "total_time": 1,
			"last_updated": start.Add(time.Hour),
		})
		return b
	}, http.StatusCreated)
}

// cdrSessions is how many completed sessions cdr-ingest-session's CDRs
// name in turn; cdrSessionPeriods how many charging periods each session
// and CDR holds: two hours of meter values every five minutes.
const (
	cdrSessions       = 100
	cdrSessionPeriods = 24
)

// cdrSessionPeriodList is the periods of a cdr-ingest-session session and
// its CDR: 24 of five minutes, 12.48 kWh in all.
func cdrSessionPeriodList() []any {
	var ps []any
	for p := range cdrSessionPeriods {
		ps = append(ps, cdrPeriod(sessionStart.Add(time.Duration(p)*5*time.Minute), 0.52, 0.083))
	}
	return ps
}

// seedCDRSessions stores the completed sessions cdr-ingest-session's CDRs
// belong to, each with its periods and the total_cost its CDR repeats.
func seedCDRSessions(b testing.TB, h *benchHub) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	periods := cdrSessionPeriodList()
	for i := range cdrSessions {
		body, _ := json.Marshal(map[string]any{
			"country_code": "NL", "party_id": "BCP", "id": fmt.Sprintf("BCS-%d", i), "start_date_time": sessionStart,
			"end_date_time": sessionStart.Add(2 * time.Hour), "kwh": 12.48, "auth_method": "WHITELIST", "location_id": "BLOC",
			"evse_uid": "E1", "connector_id": "1", "currency": "INR", "status": "COMPLETED", "charging_periods": periods,
			"cdr_token":  map[string]any{"country_code": "DE", "party_id": "BEM", "uid": "NEVER-B", "type": "RFID", "contract_id": "C-NEVER-B"},
			"total_cost": map[string]any{"excl_vat": 230.88, "incl_vat": 272.44}, "last_updated": sessionStart.Add(2 * time.Hour),
		})
		if status, err := h.do(ctx, http.MethodPut, fmt.Sprintf("/ocpi/2.2.1/cpo/sessions/NL/BCP/BCS-%d", i), body); err != nil || status != http.StatusCreated {
			b.Fatalf("seed session %d: HTTP %d %v", i, status, err)
		}
	}
	if err := probe(ctx, h, cdrSessionTarget(h)); err != nil {
		b.Fatalf("cdr-ingest-session: %v", err)
	}
}

// cdrSessionTarget posts a new CDR per request, of one of the sessions
// seedCDRSessions stored in turn, with the session's periods and cost.
func cdrSessionTarget(h *benchHub) Target {
	n := &cdrSeq
	periods := cdrSessionPeriodList()
	return h.post("POST cdr of a held session", "/ocpi/2.2.1/cpo/cdrs", h.cpoToken, func() []byte {
		i := n.Add(1)
		return cdrBody(fmt.Sprintf("BSCDR-%d", i), fmt.Sprintf("BCS-%d", i%cdrSessions), periods)
	}, http.StatusCreated)
}

// verifyCDRSessions checks that the run's CDRs (and the probe's) were
// stored knowing their session, its cost compared and matching.
func verifyCDRSessions(b *testing.B, h *benchHub, _ time.Time, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var all, matched int
	if err := h.DB.Read().QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN session_known AND cost_check = 'match' THEN 1 ELSE 0 END), 0)
		FROM cdrs WHERE id LIKE 'BSCDR-%'`).Scan(&all, &matched); err != nil {
		b.Fatal(err)
	}
	if all < n+1 || matched != all {
		b.Fatalf("%d CDRs of held sessions stored (%d sent), %d of them matched with their session's cost", all, n+1, matched)
	}
}

// cdrBody is a CDR of the bench eMSP's token at BLOC/E1 with periods,
// two hours long and costing what its session cost (seedCDRSessions).
func cdrBody(id, sessionID string, periods []any) []byte {
	b, _ := json.Marshal(map[string]any{
		"country_code": "NL", "party_id": "BCP", "id": id, "session_id": sessionID,
		"start_date_time": sessionStart, "end_date_time": sessionStart.Add(2 * time.Hour), "auth_method": "WHITELIST",
		"cdr_token": map[string]any{"country_code": "DE", "party_id": "BEM", "uid": "NEVER-B", "type": "RFID", "contract_id": "C-NEVER-B"},
		"cdr_location": map[string]any{"id": "BLOC", "address": "Bench Road 1", "city": "Pune", "country": "IND",
			"coordinates": map[string]any{"latitude": "18.00001", "longitude": "73.85670"}, "evse_uid": "E1", "evse_id": "IN*BCP*E1",
			"connector_id": "1", "connector_standard": "IEC_62196_T2", "connector_format": "SOCKET", "connector_power_type": "AC_3_PHASE"},
		"currency": "INR", "charging_periods": periods,
		"total_cost": map[string]any{"excl_vat": 230.88, "incl_vat": 272.44}, "total_energy": 12.48, "total_time": 2,
		"last_updated": sessionStart.Add(2 * time.Hour),
	})
	return b
}

// cdrPeriod is a charging period of kwh and hours.
func cdrPeriod(at time.Time, kwh, hours float64) map[string]any {
	return map[string]any{"start_date_time": at, "dimensions": []any{
		map[string]any{"type": "ENERGY", "volume": kwh}, map[string]any{"type": "TIME", "volume": hours}}}
}

// benchSessions is how many active sessions session-patch spreads its
// PATCHes over.
const benchSessions = 100

// sessionPatchSeq numbers the session PATCHes sent (the probe's and the
// runs'): each sets a later last_updated and appends one charging period.
var sessionPatchSeq atomic.Int64

var sessionStart = time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)

// seedSessionPatch stores benchSessions active sessions of the bench eMSP's
// token at BLOC (seedSessions, which runs before it), each with one
// charging period.
func seedSessionPatch(b testing.TB, h *benchHub) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for i := range benchSessions {
		body, _ := json.Marshal(map[string]any{
			"country_code": "NL", "party_id": "BCP", "id": fmt.Sprintf("BPS-%d", i), "start_date_time": sessionStart,
			"kwh": 0, "auth_method": "WHITELIST", "location_id": "BLOC", "evse_uid": "E1", "connector_id": "1",
			"cdr_token": map[string]any{"country_code": "DE", "party_id": "BEM", "uid": "NEVER-B", "type": "RFID", "contract_id": "C-NEVER-B"},
			"currency":  "INR", "status": "ACTIVE", "charging_periods": []any{sessionPeriod(sessionStart, 0)},
			"last_updated": sessionStart,
		})
		if status, err := h.do(ctx, http.MethodPut, fmt.Sprintf("/ocpi/2.2.1/cpo/sessions/NL/BCP/BPS-%d", i), body); err != nil || status != http.StatusCreated {
			b.Fatalf("seed session %d: HTTP %d %v", i, status, err)
		}
	}
	if err := probe(ctx, h, sessionPatchTarget(h)); err != nil {
		b.Fatalf("session-patch: %v", err)
	}
}

func sessionPeriod(at time.Time, kwh float64) map[string]any {
	return map[string]any{"start_date_time": at, "dimensions": []any{map[string]any{"type": "ENERGY", "volume": kwh}}}
}

// sessionPatchTarget PATCHes the sessions in turn, each with a later
// last_updated than any before it.
func sessionPatchTarget(h *benchHub) Target {
	return h.cpoPatch("PATCH session", http.StatusOK, func() (string, []byte) {
		i := sessionPatchSeq.Add(1)
		at := sessionStart.Add(time.Duration(i) * time.Millisecond)
		body, _ := json.Marshal(map[string]any{"kwh": float64(i%500) / 10, "charging_periods": []any{sessionPeriod(at, 0.1)},
			"last_updated": at})
		return fmt.Sprintf("/ocpi/2.2.1/cpo/sessions/NL/BCP/BPS-%d", i%benchSessions), body
	})
}

// verifySessionPatches checks that every PATCH sent appended its period:
// the sessions hold one period each from the seed and one a PATCH.
func verifySessionPatches(b *testing.B, h *benchHub, _ time.Time, _ int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := h.DB.Read().Query(ctx, "SELECT body FROM sessions WHERE id LIKE 'BPS-%'")
	if err != nil {
		b.Fatal(err)
	}
	defer rows.Close()
	periods := 0
	for rows.Next() {
		var body []byte
		if err := rows.Scan(&body); err != nil {
			b.Fatal(err)
		}
		var s struct {
			ChargingPeriods []json.RawMessage `json:"charging_periods"`
		}
		if err := json.Unmarshal(body, &s); err != nil {
			b.Fatal(err)
		}
		periods += len(s.ChargingPeriods)
	}
	if want := benchSessions + int(sessionPatchSeq.Load()); periods != want {
		b.Fatalf("the sessions hold %d charging periods, want %d: a PATCH was lost or did nothing", periods, want)
	}
}
