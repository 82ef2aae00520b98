package location_test

import (
	"errors"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/location"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// TestLocate: a location found by id alone, with whether it holds the EVSE
// and connector named, in one read; an id two CPOs use is refused naming
// location_id; Check and HasEVSEs answer for a location of a named CPO.
func TestLocate(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		c := h.Cast(t)
		ctx := hubtest.Ctx(t, 60*time.Second)
		stamp := hubtest.Stamp(1)
		if err := c.CPO.PutLocation(ctx, "LOC1", locationJSON("IN", "CP1", "LOC1", "12.97160", "77.59460", stamp, "E1:AVAILABLE", "E2:AVAILABLE")); err != nil {
			t.Fatal(err)
		}
		if err := c.CPO.PutLocation(ctx, "SHARED", locationJSON("IN", "CP1", "SHARED", "12.97160", "77.59460", stamp, "E1:AVAILABLE")); err != nil {
			t.Fatal(err)
		}
		if err := c.CPO2.PutLocation(ctx, "SHARED", locationJSON("IN", "CP2", "SHARED", "12.97160", "77.59460", stamp, "E1:AVAILABLE")); err != nil {
			t.Fatal(err)
		}
		l := h.Locations
		for _, tc := range []struct {
			loc, evse, conn string
			holds           bool
		}{
			{"LOC1", "", "", true},
			{"LOC1", "E2", "", true},
			{"LOC1", "e2", "1", true}, // CiString
			{"LOC1", "E3", "", false},
			{"LOC1", "E1", "2", false},
			{"loc1", "E1", "1", true},
		} {
			cctx, n := store.CountStmts(ctx)
			cc, pid, holds, err := l.Locate(cctx, tc.loc, tc.evse, tc.conn)
			if err != nil || cc != "IN" || pid != "CP1" || holds != tc.holds || n.N() != 1 {
				t.Errorf("Locate(%s, %q, %q) = %s/%s holds %v, %v after %d statements; want IN/CP1 holds %v after 1",
					tc.loc, tc.evse, tc.conn, cc, pid, holds, err, n.N(), tc.holds)
			}
		}
		if _, _, _, err := l.Locate(ctx, "NOPE", "E1", ""); ocpi.ErrorCode(err) != ocpi.EUNKNOWNLOCATION {
			t.Errorf("unknown location: %v", err)
		}
		_, _, _, err := l.Locate(ctx, "SHARED", "E1", "")
		var oe *ocpi.Error
		if !errors.As(err, &oe) || oe.Code != ocpi.EINVALID || oe.Field != "location_id" {
			t.Errorf("a location id two CPOs use: %v", err)
		}

		ref := location.Ref{CountryCode: "IN", PartyID: "CP1", LocationID: "LOC1"}
		for _, tc := range []struct {
			evse, conn string
			ok         bool
		}{{"", "", true}, {"E1", "", true}, {"E1", "1", true}, {"E9", "", false}, {"E2", "9", false}} {
			r := ref
			r.EVSEUID, r.ConnectorID = tc.evse, tc.conn
			err := l.Check(ctx, r)
			if (err == nil) != tc.ok || (err != nil && ocpi.ErrorCode(err) != ocpi.EUNKNOWNLOCATION) {
				t.Errorf("Check(%q, %q) = %v, want found %v", tc.evse, tc.conn, err, tc.ok)
			}
		}
		if err := l.Check(ctx, location.Ref{CountryCode: "IN", PartyID: "CP2", LocationID: "LOC1"}); ocpi.ErrorCode(err) != ocpi.EUNKNOWNLOCATION {
			t.Errorf("another CPO's location id: %v", err)
		}
		if i, err := l.HasEVSEs(ctx, ref, []string{"e1", "E2"}); i != -1 || err != nil {
			t.Errorf("HasEVSEs of both: %d, %v", i, err)
		}
		if i, err := l.HasEVSEs(ctx, ref, []string{"E1", "E7", "E8"}); i != 1 || err != nil {
			t.Errorf("HasEVSEs with E7 unknown: %d, %v", i, err)
		}
		if _, err := l.HasEVSEs(ctx, location.Ref{CountryCode: "IN", PartyID: "CP1", LocationID: "NOPE"}, nil); ocpi.ErrorCode(err) != ocpi.EUNKNOWNLOCATION {
			t.Errorf("HasEVSEs of an unknown location: %v", err)
		}
	}, hubtest.Configure(false, hubtest.FastPush))
}
