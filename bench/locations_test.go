package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Location scenarios (see README.md):
//
//   - evse-status-patch: the CPO PATCHes EVSE statuses round-robin over 100
//     locations while 10 eMSPs receive the broadcast: each PATCH stores the
//     location and records its change, which is expanded into 10 pushes and
//     delivered while the PATCHes run; evse-status-patch-ingest is the same
//     with delivery paused while it is measured (the request path alone),
//     its changes expanded and delivered after.
//   - location-put-ingest: the same status changes sent as many CPOs send
//     them, the whole location PUT with one EVSE's status changed (delivery
//     paused, as evse-status-patch-ingest); evse-put-ingest sends them as
//     the whole EVSE's PUT.
//   - directory-deep: an eMSP follows the directory's Link 90 000 locations
//     deep into a 100 000-location directory (keyset cursor);
//     directory-deep-offset asks for the same page by offset alone.
func init() {
	scenarios = append(scenarios,
		scenario{name: "evse-status-patch", seed: seedStatusPatch, target: statusPatchTarget, seedLast: true, verify: verifyPushed},
		scenario{name: "evse-status-patch-ingest", target: statusPatchTarget, verify: verifyPushed, paused: true},
		scenario{name: "location-put-ingest", target: locationPutTarget, verify: verifyPushed, paused: true},
		scenario{name: "evse-put-ingest", target: evsePutTarget, verify: verifyPushed, paused: true},
		scenario{name: "directory-deep", seed: seedDirectory, target: func(h *benchHub) Target {
			return h.get(h.deepPage, h.cpoToken)
		}},
		scenario{name: "directory-deep-offset", target: func(h *benchHub) Target {
			return h.get("/ocpi/2.2.1/emsp/locations?offset=90000&limit=100", h.cpoToken)
		}},
	)
}

const (
	patchLocations = 100
	directorySize  = 100_000
	broadcastTo    = 10
)

func benchLocation(pid, id string, lu time.Time, lat int) []byte {
	b, _ := json.Marshal(map[string]any{
		"country_code": "NL", "party_id": pid, "id": id, "publish": true, "address": "Bench Road 1", "city": "Pune",
		"country": "IND", "coordinates": map[string]any{"latitude": fmt.Sprintf("18.%05d", lat%100000), "longitude": "73.85670"},
		"time_zone": "Asia/Kolkata", "last_updated": ocpi.NewDateTime(lu).String(),
		"evses": []any{evse("E1", lu), evse("E2", lu)},
	})
	return b
}

func evse(uid string, lu time.Time) map[string]any {
	return map[string]any{"uid": uid, "status": "AVAILABLE", "last_updated": ocpi.NewDateTime(lu).String(),
		"connectors": []any{map[string]any{"id": "1", "standard": "IEC_62196_T2", "format": "SOCKET", "power_type": "AC_3_PHASE",
			"max_voltage": 230, "max_amperage": 32, "tariff_ids": []string{"T1"}, "last_updated": ocpi.NewDateTime(lu).String()}}}
}

// seedStatusPatch registers 10 eMSPs with locations receivers, publishes
// the locations whose EVSEs the scenario patches and waits until every eMSP
// has them (seedDelivery).
func seedStatusPatch(b testing.TB, h *benchHub) { seedDelivery(b, h) }

// statusSeq numbers the status PATCHes across targets (the probe's and every
// run's), so each PATCH is later than every one before it. A counter per
// target started again at 1 in each run: from the second run on every PATCH
// was older than the stored status and the hub answered it without a change
// or a push, which made later runs look ten times faster than the first.
var statusSeq atomic.Int64

// nextStatus is the next status change of the status targets: its number i
// (statusSeq), the status it sets and its last_updated, a millisecond
// later than the one before.
func nextStatus() (i int64, status string, at time.Time) {
	i = statusSeq.Add(1)
	statuses := [...]string{"CHARGING", "AVAILABLE", "BLOCKED", "RESERVED"}
	return i, statuses[i%4], time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Millisecond)
}

// statusPatchTarget PATCHes E1/E2 of the seeded locations round-robin, each
// PATCH with a new status and a later last_updated.
func statusPatchTarget(h *benchHub) Target {
	return h.cpoPatch("PATCH evse status", 0, func() (string, []byte) {
		i, status, at := nextStatus()
		path := fmt.Sprintf("/ocpi/2.2.1/cpo/locations/NL/BCP/P%03d/E%d", i%patchLocations, 1+(i/patchLocations)%2)
		return path, fmt.Appendf(nil, `{"status":%q,"last_updated":%q}`, status, ocpi.NewDateTime(at))
	})
}

// locationPutTarget PUTs the seeded locations whole, round-robin, each
// with one EVSE's status changed and its timestamps later than any PATCH or
// PUT before it (statusSeq): a CPO that sends the whole location on every
// status change.
func locationPutTarget(h *benchHub) Target {
	return h.cpoSend(http.MethodPut, "PUT location", 0, func() (string, []byte) {
		i, status, lu := nextStatus()
		loc := int(i % patchLocations)
		id := fmt.Sprintf("P%03d", loc)
		var doc map[string]any
		_ = json.Unmarshal(benchLocation("BCP", id, lu, loc), &doc)
		doc["evses"].([]any)[(i/patchLocations)%2].(map[string]any)["status"] = status
		body, _ := json.Marshal(doc)
		return "/ocpi/2.2.1/cpo/locations/NL/BCP/" + id, body
	})
}

// evsePutTarget PUTs the seeded locations' EVSEs whole, round-robin, each
// with a new status and timestamps later than any request before it
// (statusSeq): a CPO that sends the EVSE on every status change.
func evsePutTarget(h *benchHub) Target {
	return h.cpoSend(http.MethodPut, "PUT EVSE", 0, func() (string, []byte) {
		i, status, at := nextStatus()
		id := fmt.Sprintf("P%03d", i%patchLocations)
		uid := []string{"E1", "E2"}[(i/patchLocations)%2]
		e := evse(uid, at)
		e["status"] = status
		body, _ := json.Marshal(e)
		return "/ocpi/2.2.1/cpo/locations/NL/BCP/" + id + "/" + uid, body
	})
}

// cpoPatch is a Target for the CPO's PATCHes of a hub path; next gives
// each request's path and body.
func (h *benchHub) cpoPatch(name string, want int, next func() (path string, body []byte)) Target {
	return h.cpoSend(http.MethodPatch, name, want, next)
}

// cpoSend is a Target for the CPO's requests of method, each with the
// path and body next gives.
func (h *benchHub) cpoSend(method, name string, want int, next func() (path string, body []byte)) Target {
	hdr := http.Header{"Authorization": {ocpi.EncodeToken(h.cpoToken, true)}, "Content-Type": {"application/json"}}
	return Target{Name: name, WantStatus: want, NewRequest: func(ctx context.Context) (*http.Request, error) {
		path, body := next()
		req, err := http.NewRequestWithContext(ctx, method, h.PublicURL()+path, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		return req, nil
	}}
}

// verifyPushed fails the run unless each of its n PATCHes was a change
// pushed to every receiver: at least n × broadcastTo pushes were queued
// since it began (the run's warm-up adds a few).
func verifyPushed(b *testing.B, h *benchHub, since time.Time, n int) {
	var pushes int
	if err := h.DB.Read().QueryRow(context.Background(), "SELECT COUNT(*) FROM hub_push WHERE module = 'locations' AND created_at >= $1",
		since.UnixMicro()).Scan(&pushes); err != nil {
		b.Fatal(err)
	}
	if pushes < n*broadcastTo {
		b.Fatalf("%d requests queued %d pushes, want at least %d: requests that change nothing were measured", n, pushes, n*broadcastTo)
	}
}

// seedDirectory fills the directory to 100 000 locations straight into the
// tables (through the service it would take minutes) and finds the Link URL
// of the page at offset 90 000.
func seedDirectory(b testing.TB, h *benchHub) {
	ctx := context.Background()
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	const batch = 500
	for start := 0; start < directorySize; start += batch {
		err := h.DB.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			var sb strings.Builder
			sb.WriteString("INSERT INTO locations (country_code, party_id, id, publish, lat_e7, lon_e7, evses_active, last_updated, body) VALUES ")
			args := make([]any, 0, batch*5)
			for i := start; i < start+batch; i++ {
				id := fmt.Sprintf("D%06d", i)
				lu := base.Add(time.Duration(i) * time.Second)
				if i > start {
					sb.WriteString(", ")
				}
				n := len(args)
				fmt.Fprintf(&sb, "('NL', 'DIR', $%d, TRUE, $%d, 738567000, 2, $%d, $%d)", n+1, n+2, n+3, n+4)
				args = append(args, id, int64(180000000+i%100000*100), lu.UnixMicro(), string(benchLocation("DIR", id, lu, i)))
			}
			_, err := tx.Exec(ctx, sb.String(), args...)
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if h.DB.Engine() == store.Postgres {
		if _, err := h.DB.Read().Exec(ctx, "ANALYZE locations"); err != nil {
			b.Fatal(err)
		}
	}
	// Walk to the page before the deep one and keep its Link, as a client
	// paging through the directory would hold it.
	h.deepPage = h.linkAt(b, "offset=89900&limit=100")
}

// do sends an authenticated request as the CPO and returns the HTTP status.
func (h *benchHub) do(ctx context.Context, method, path string, body []byte) (int, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.PublicURL()+path, bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", ocpi.EncodeToken(h.cpoToken, true))
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// addEMSP starts an eMSP simulator (country DE) and registers it with the
// hub; it is closed when the benchmark ends.
func addEMSP(b testing.TB, h *benchHub, name, partyID string) *sim.EMSP {
	b.Helper()
	return hubtest.AddTo(b, h.App, sim.StartEMSP, name, "DE", partyID)
}

// addReceivers registers the broadcastTo eMSPs every location change is
// pushed to.
func addReceivers(b testing.TB, h *benchHub) []*sim.EMSP {
	b.Helper()
	emsps := make([]*sim.EMSP, broadcastTo)
	for i := range emsps {
		emsps[i] = addEMSP(b, h, fmt.Sprintf("Bench eMSP %d", i), fmt.Sprintf("E%02d", i))
	}
	return emsps
}
