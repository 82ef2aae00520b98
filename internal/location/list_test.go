package location_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestDirectoryPagesUnderWrites: the directory's pages by offset (found
// through the position index) and its totals equal the plain OFFSET query's
// pages and COUNT(*), for the whole directory, one CPO and date windows,
// while status PATCHes move locations to the end and new locations arrive
// between the pages.
func TestDirectoryPagesUnderWrites(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := location.New(db, nil, nil, clock.Real{}, nil)
		location.SetPositionSpan(s, 3)
		rnd := rand.New(rand.NewPCG(7, 9))
		at, n := 0, 0
		put := func() {
			pid := []string{"CP1", "CP2"}[n%2]
			id := fmt.Sprintf("L%03d", n)
			raw, _ := json.Marshal(locationJSON("NL", pid, id, "12.97160", "77.59460", hubtest.Stamp(at), "E1:AVAILABLE", "E2:AVAILABLE"))
			if _, err := s.Put(ctx, location.Change{}, location.Ref{CountryCode: "NL", PartyID: pid, LocationID: id}, raw); err != nil {
				t.Fatal(err)
			}
			at++
			n++
		}
		for range 40 {
			put()
		}
		statuses := []string{"CHARGING", "AVAILABLE", "BLOCKED"}
		for round := range 60 {
			for range 6 {
				p := ocpi.PageRequest{Offset: rnd.IntN(n + 2), Limit: 1 + rnd.IntN(6)}
				if rnd.IntN(3) == 0 {
					p.DateFrom = ocpi.NewDateTime(time.Date(2026, 3, 1, 10, 0, rnd.IntN(at+2), 0, time.UTC))
				}
				if rnd.IntN(3) == 0 {
					p.DateTo = ocpi.NewDateTime(time.Date(2026, 3, 1, 10, 0, rnd.IntN(at+2), 0, time.UTC))
				}
				var f location.Filter
				if rnd.IntN(3) == 0 {
					f = location.Filter{CountryCode: "NL", PartyID: "CP2"}
				}
				got, gotPage, err := s.List(ctx, f, p)
				if err != nil {
					t.Fatal(err)
				}
				l := store.List{Table: "locations", Columns: "pk, last_updated, body"}.WithPage(p)
				if f.CountryCode != "" {
					l.Where, l.Args = []string{"country_code = $1", "party_id = $2"}, []any{"NL", "CP2"}
				}
				want, wantPage, err := store.Documents(ctx, db.Read(), l)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(ids(t, want), ids(t, got)); diff != "" || gotPage.Total != wantPage.Total {
					t.Fatalf("round %d, %+v %+v: total %d, want %d; page (-OFFSET +index):\n%s", round, p, f, gotPage.Total, wantPage.Total, diff)
				}
			}
			for range 1 + rnd.IntN(3) {
				if rnd.IntN(4) == 0 {
					put()
					continue
				}
				i := rnd.IntN(n)
				ref := location.Ref{CountryCode: "NL", PartyID: []string{"CP1", "CP2"}[i%2], LocationID: fmt.Sprintf("L%03d", i), EVSEUID: "E1"}
				patch := fmt.Sprintf(`{"status":%q,"last_updated":%q}`, statuses[rnd.IntN(3)], hubtest.Stamp(at))
				if _, err := s.Patch(ctx, location.Change{}, ref, []byte(patch)); err != nil {
					t.Fatal(err)
				}
				at++
			}
		}
	})
}

func ids(t *testing.T, items []json.RawMessage) []string {
	t.Helper()
	out := make([]string, len(items))
	for i, it := range items {
		var l struct{ ID string }
		if err := json.Unmarshal(it, &l); err != nil {
			t.Fatal(err)
		}
		out[i] = l.ID
	}
	return out
}
