package location_test

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/ocpihub/ocpihub/internal/hubtest"
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
	})
}
