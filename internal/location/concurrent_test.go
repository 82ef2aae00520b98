package location_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
)

// TestConcurrentLocationPuts: whole-location PUTs of one location sent at
// once, first while the hub does not hold it (the inserts race) and then
// while it does, each with its own last_updated and statuses. Every one is
// answered 1000; the location stored is the latest one, its EVSE rows (what
// the directory filters on) say what its document says, and the eMSPs end
// with the latest statuses.
func TestConcurrentLocationPuts(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		b.putT1(t)
		statuses := []string{"AVAILABLE", "CHARGING", "BLOCKED", "RESERVED", "OUTOFORDER", "INOPERATIVE", "PLANNED", "UNKNOWN"}
		round := func(from int) {
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					st := statuses[(from+i)%len(statuses)]
					resp, err := b.CPO.Push(b.ctx, "locations", http.MethodPut,
						locationJSON("NL", "CP1", "LOC9", "12.97160", "77.59460", hubtest.Stamp(from+i), "E1:"+st, "E2:"+statuses[(from+i+1)%len(statuses)]), nil, "LOC9")
					if err != nil && resp == nil {
						t.Error(err)
						return
					}
					if resp.HTTPStatus != http.StatusOK && resp.HTTPStatus != http.StatusCreated || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
						t.Errorf("PUT %d: HTTP %d %s", from+i, resp.HTTPStatus, resp.Body)
					}
				})
			}
			wg.Wait()
			last := from + 7
			want := []string{"E1:" + statuses[last%len(statuses)], "E2:" + statuses[(last+1)%len(statuses)]}
			resp, data := hubGet(t, b.CPO.Platform, "locations", "RECEIVER", "/NL/CP1/LOC9", nil)
			hubtest.MustStatus(t, resp, nil, http.StatusOK, 1000)
			if data["last_updated"] != hubtest.Stamp(last) {
				t.Errorf("stored last_updated %v, want %s", data["last_updated"], hubtest.Stamp(last))
			}
			var doc []string
			for _, e := range data["evses"].([]any) {
				m := e.(map[string]any)
				doc = append(doc, fmt.Sprint(m["uid"], ":", m["status"]))
			}
			sort.Strings(doc)
			if strings.Join(doc, ",") != strings.Join(want, ",") {
				t.Errorf("stored EVSEs %v, want %v", doc, want)
			}
			rows, err := b.h.DB.Read().Query(b.ctx, `SELECT e.uid, e.status FROM evses e JOIN locations l ON l.pk = e.location_pk
				WHERE l.country_code = 'NL' AND l.party_id = 'CP1' AND l.id = 'LOC9' ORDER BY e.uid`)
			if err != nil {
				t.Fatal(err)
			}
			var indexed []string
			for rows.Next() {
				var uid, status string
				if err := rows.Scan(&uid, &status); err != nil {
					t.Fatal(err)
				}
				indexed = append(indexed, uid+":"+status)
			}
			rows.Close()
			if strings.Join(indexed, ",") != strings.Join(want, ",") {
				t.Errorf("EVSE rows %v, want %v", indexed, want)
			}
			waitState(t, b.ctx, b.EMSP.Platform, "the latest statuses at eMSP One", func() bool {
				return b.EMSP.EVSEStatus("NL", "CP1", "LOC9", "E1") == statuses[last%len(statuses)] &&
					b.EMSP.EVSEStatus("NL", "CP1", "LOC9", "E2") == statuses[(last+1)%len(statuses)]
			})
		}
		round(1)  // the location is new: the first inserts race
		round(20) // it is held: the updates queue on its lock

		// EVSE PUTs of E1 at once, each set into the stored bytes in turn
		// under the lock: the latest is stored, in the document and in its
		// row, and reaches the eMSP; E2 stays as the last location PUT left it.
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				resp, err := b.CPO.Push(b.ctx, "locations", http.MethodPut, evseJSON("E1", statuses[i], hubtest.Stamp(40+i)), nil, "LOC9", "E1")
				if err != nil && resp == nil {
					t.Error(err)
					return
				}
				if resp.HTTPStatus != http.StatusOK || resp.Envelope == nil || resp.Envelope.StatusCode != 1000 {
					t.Errorf("EVSE PUT %d: HTTP %d %s", i, resp.HTTPStatus, resp.Body)
				}
			})
		}
		wg.Wait()
		_, e1 := hubGet(t, b.CPO.Platform, "locations", "RECEIVER", "/NL/CP1/LOC9/E1", nil)
		if e1["status"] != statuses[7] || e1["last_updated"] != hubtest.Stamp(47) {
			t.Errorf("E1 after EVSE PUTs at once: %v at %v, want %s at %s", e1["status"], e1["last_updated"], statuses[7], hubtest.Stamp(47))
		}
		var status string
		if err := b.h.DB.Read().QueryRow(b.ctx, `SELECT e.status FROM evses e JOIN locations l ON l.pk = e.location_pk
			WHERE l.id = 'LOC9' AND e.uid = 'E1'`).Scan(&status); err != nil || status != statuses[7] {
			t.Errorf("E1's row says %q (%v), want %s", status, err, statuses[7])
		}
		e2 := statuses[(27+1)%len(statuses)]
		waitState(t, b.ctx, b.EMSP.Platform, "the latest E1 at eMSP One", func() bool {
			return b.EMSP.EVSEStatus("NL", "CP1", "LOC9", "E1") == statuses[7] && b.EMSP.EVSEStatus("NL", "CP1", "LOC9", "E2") == e2
		})
	})
}

// TestPutOverRowAsPostgreSQLRenderedIt: a location row written before its
// body became text holds JSONB's rendering of the document (white space
// after ':' and ','; on SQLite the test indents it). A whole-location PUT
// reads such a row as it lies: the same location again changes nothing and
// goes to no eMSP, an older one is stale, one that drops an EVSE is refused,
// and a later one is stored and pushed.
func TestPutOverRowAsPostgreSQLRenderedIt(t *testing.T) {
	each(t, func(t *testing.T, b *bundle) {
		b.putT1(t)
		b.putLocation(t, b.CPO, "CP1", "LOC1", 2, "E1:AVAILABLE", "E2:AVAILABLE")
		waitState(t, b.ctx, b.EMSP.Platform, "the location at eMSP One", func() bool {
			return b.EMSP.EVSEStatus("NL", "CP1", "LOC1", "E2") == "AVAILABLE"
		})
		var body string
		if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT body FROM locations WHERE id = 'LOC1'").Scan(&body); err != nil {
			t.Fatal(err)
		}
		rendered := body
		if b.h.DB.Engine() == store.Postgres {
			if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT CAST(CAST(body AS JSONB) AS TEXT) FROM locations WHERE id = 'LOC1'").Scan(&rendered); err != nil {
				t.Fatal(err)
			}
		} else {
			var out bytes.Buffer
			if err := json.Indent(&out, []byte(body), "", " "); err != nil {
				t.Fatal(err)
			}
			rendered = out.String()
		}
		if rendered == body || !strings.Contains(rendered, ": ") {
			t.Fatalf("the rendering is the body: %s", rendered)
		}
		if _, err := b.h.DB.Write(b.ctx, "UPDATE locations SET body = $1 WHERE id = 'LOC1'", rendered); err != nil {
			t.Fatal(err)
		}

		put := func(at int, evses ...string) (*ocpiclient.Response, error) {
			return b.CPO.Push(b.ctx, "locations", http.MethodPut,
				locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(at), evses...), nil, "LOC1")
		}
		resp, err := put(2, "E1:AVAILABLE", "E2:AVAILABLE")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		resp, err = put(1, "E1:BLOCKED", "E2:BLOCKED")
		hubtest.MustStale(t, "older location PUT over the rendered row", resp, err)
		resp, err = put(3, "E1:BLOCKED")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 2001)
		if f := resp.Envelope.StatusMessage; !strings.Contains(f, "E2") {
			t.Errorf("the refusal of a PUT without E2 says %q", f)
		}
		var now string
		if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT body FROM locations WHERE id = 'LOC1'").Scan(&now); err != nil {
			t.Fatal(err)
		}
		if now != rendered {
			t.Errorf("the row changed:\n%s\nwas\n%s", now, rendered)
		}
		// The later one moves E2's connector to tariff T2: the index rows
		// follow, compared with what the rendered row held.
		later := locationJSON("NL", "CP1", "LOC1", "12.97160", "77.59460", hubtest.Stamp(4), "E1:CHARGING", "E2:AVAILABLE")
		later["evses"].([]any)[1].(map[string]any)["connectors"].([]any)[0].(map[string]any)["tariff_ids"] = []string{"T2"}
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut, later, nil, "LOC1")
		hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		rows, err := store.QueryAll(b.ctx, b.h.DB.Read(), func(r store.Row) (string, error) {
			var kind, a, c string
			err := r.Scan(&kind, &a, &c)
			return kind + " " + a + " " + c, err
		}, `SELECT 'evse', e.uid, e.status FROM evses e JOIN locations l ON l.pk = e.location_pk WHERE l.id = 'LOC1'
			UNION ALL SELECT 'tariff', r.evse_uid, r.tariff_id FROM tariff_refs r JOIN locations l ON l.pk = r.location_pk WHERE l.id = 'LOC1'
			ORDER BY 1, 2, 3`)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Join(rows, "; "), "evse E1 CHARGING; evse E2 AVAILABLE; tariff E1 T1; tariff E2 T2"; got != want {
			t.Errorf("index rows after the later PUT: %s, want %s", got, want)
		}
		for _, e := range []*sim.EMSP{b.EMSP, b.EMSP2} {
			waitState(t, b.ctx, e.Platform, "the later PUT at "+e.Name(), func() bool {
				return e.EVSEStatus("NL", "CP1", "LOC1", "E1") == "CHARGING"
			})
			if n := len(e.Requests(sim.PathHas(http.MethodPut, "/emsp/locations/NL/CP1/LOC1"))); n != 2 {
				t.Errorf("%s got %d PUTs of LOC1, want 2: the first and the later one", e.Name(), n)
			}
		}
		if err := b.h.DB.Read().QueryRow(b.ctx, "SELECT body FROM locations WHERE id = 'LOC1'").Scan(&now); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(now, ": ") || !strings.Contains(now, `"status":"CHARGING"`) {
			t.Errorf("the later PUT stored %s", now)
		}

		// An EVSE's PUT over the row the hub wrote, set in its bytes: sent
		// twice, it is stored and pushed once, raises the location's
		// last_updated and its EVSE row follows; an older one is stale.
		e2 := evseJSON("E2", "BLOCKED", hubtest.Stamp(5))
		e2["connectors"].([]any)[0].(map[string]any)["tariff_ids"] = []string{"T2"}
		for range 2 {
			resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut, e2, nil, "LOC1", "e2")
			hubtest.MustStatus(t, resp, err, http.StatusOK, 1000)
		}
		resp, err = b.CPO.Push(b.ctx, "locations", http.MethodPut, evseJSON("E2", "OUTOFORDER", hubtest.Stamp(3)), nil, "LOC1", "E2")
		hubtest.MustStale(t, "older EVSE PUT", resp, err)
		for _, e := range []*sim.EMSP{b.EMSP, b.EMSP2} {
			waitState(t, b.ctx, e.Platform, "the EVSE PUT at "+e.Name(), func() bool {
				return e.EVSEStatus("NL", "CP1", "LOC1", "E2") == "BLOCKED"
			})
			if n := len(e.Requests(sim.PathHas(http.MethodPut, "/emsp/locations/NL/CP1/LOC1/E2"))); n != 1 {
				t.Errorf("%s got %d PUTs of E2, want 1", e.Name(), n)
			}
		}
		_, loc := hubGet(t, b.CPO.Platform, "locations", "RECEIVER", "/NL/CP1/LOC1", nil)
		if loc["last_updated"] != hubtest.Stamp(5) {
			t.Errorf("the location's last_updated after the EVSE PUT: %v, want %s", loc["last_updated"], hubtest.Stamp(5))
		}
		rows, err = store.QueryAll(b.ctx, b.h.DB.Read(), func(r store.Row) (string, error) {
			var uid, status string
			var lu int64
			err := r.Scan(&uid, &status, &lu)
			return fmt.Sprint(uid, " ", status, " ", time.UnixMicro(lu).UTC().Format(time.RFC3339) == hubtest.Stamp(5)), err
		}, `SELECT e.uid, e.status, e.last_updated FROM evses e JOIN locations l ON l.pk = e.location_pk WHERE l.id = 'LOC1' AND e.uid = 'E2'`)
		if err != nil || len(rows) != 1 || rows[0] != "E2 BLOCKED true" {
			t.Errorf("E2's row after its PUT: %v (%v)", rows, err)
		}
	})
}
