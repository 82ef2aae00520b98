package token

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// fakeDirectory holds locations by "cc/pid/id", each with its EVSE uids.
// With oneRead it is an EVSEDirectory whose check is a read queued with the
// token's (the location's row is not read: a read of nothing stands for it).
type fakeDirectory struct {
	locations map[string][]string
	reads     int // CheckLocation and CheckEVSEsWith calls
}

func (d *fakeDirectory) CheckLocation(_ context.Context, cc, pid, locationID, evseUID, _ string) error {
	d.reads++
	evses, ok := d.locations[cc+"/"+pid+"/"+locationID]
	if !ok || (evseUID != "" && !containsFold(evses, evseUID)) {
		return &ocpi.Error{Code: ocpi.EUNKNOWNLOCATION, Message: "unknown"}
	}
	return nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

type fakeEVSEDirectory struct{ *fakeDirectory }

func (d fakeEVSEDirectory) CheckEVSEsWith(rs *store.Reads, cc, pid, locationID string, uids []string) func() (int, error) {
	d.reads++
	rs.QueryRow(func(row store.Row) error { var n int; return row.Scan(&n) }, "SELECT 1")
	return func() (int, error) {
		evses, ok := d.locations[cc+"/"+pid+"/"+locationID]
		if !ok {
			return -1, &ocpi.Error{Code: ocpi.EUNKNOWNLOCATION, Message: "unknown"}
		}
		for i, uid := range uids {
			if !containsFold(evses, uid) {
				return i, nil
			}
		}
		return -1, nil
	}
}

// TestAuthorizeLocationCheck: the location an authorization names is
// checked under the caller's CPO parties, read with the token when the
// caller has one (the common case) and party after party when it has
// several, with a directory that checks EVSEs in the location's read or
// one at a time; an unknown location or EVSE is named in the 2003, and
// nothing is recorded for it.
func TestAuthorizeLocationCheck(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.NewFake(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC))
		parties, err := party.New(db, nil, nil, clk, nil, party.Config{Own: []ocpi.CredentialsRole{
			{Role: string(party.RoleEMSP), CountryCode: "IN", PartyID: "OHE"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.Write(ctx, `INSERT INTO tokens (country_code, party_id, uid, type, valid, whitelist, last_updated, body)
			VALUES ('IN', 'OHE', 'APP-1', 'APP_USER', TRUE, 'NEVER', 1, $1)`,
			`{"country_code":"IN","party_id":"OHE","uid":"APP-1","type":"APP_USER","contract_id":"APP-1","issuer":"ocpihub","valid":true,"whitelist":"NEVER","last_updated":"2026-03-01T10:00:00Z"}`); err != nil {
			t.Fatal(err)
		}
		dir := &fakeDirectory{locations: map[string][]string{"IN/CP2/LOC2": {"E1", "E2"}}}
		cpo := func(pid string) party.PartyRef {
			return party.PartyRef{Role: party.RoleCPO, CountryCode: "IN", PartyID: pid}
		}
		one := []party.PartyRef{cpo("CP2")}
		two := []party.PartyRef{{Role: party.RoleEMSP, CountryCode: "IN", PartyID: "EM9"}, cpo("CP1"), cpo("CP2")}
		none := []party.PartyRef{{Role: party.RoleEMSP, CountryCode: "IN", PartyID: "EM9"}}
		for _, oneRead := range []bool{true, false} {
			var d Directory = dir
			if oneRead {
				d = fakeEVSEDirectory{dir}
			}
			s := New(db, nil, parties, d, nil, clk, nil, Config{})
			for _, c := range []struct {
				name    string
				parties []party.PartyRef
				loc     *ocpi.LocationReferences
				field   string // "" when allowed
				message string
			}{
				{"one party, its location", one, &ocpi.LocationReferences{LocationID: "LOC2", EVSEUIDs: []string{"e2"}}, "", ""},
				{"one party, an unknown EVSE", one, &ocpi.LocationReferences{LocationID: "LOC2", EVSEUIDs: []string{"E1", "E7"}}, "evse_uids[1]", ""},
				{"one party, an unknown location", one, &ocpi.LocationReferences{LocationID: "LOC9"}, "location_id", "not in the hub's directory"},
				{"the second of two parties", two, &ocpi.LocationReferences{LocationID: "LOC2", EVSEUIDs: []string{"E1"}}, "", ""},
				{"the second of two parties, an unknown EVSE", two, &ocpi.LocationReferences{LocationID: "LOC2", EVSEUIDs: []string{"E1", "E2", "E8"}}, "evse_uids[2]", ""},
				{"two parties, an unknown location", two, &ocpi.LocationReferences{LocationID: "LOC9"}, "location_id", "not in the hub's directory"},
				{"no CPO party", none, &ocpi.LocationReferences{LocationID: "LOC2"}, "location_id", "no CPO party"},
				{"an invalid reference", one, &ocpi.LocationReferences{LocationID: strings.Repeat("L", 37)}, "location_id", ""},
			} {
				name := c.name
				if !oneRead {
					name += " (an EVSE at a time)"
				}
				before := storetest.Count(t, db, "SELECT COUNT(*) FROM token_authorizations")
				cp := c.parties[len(c.parties)-1]
				a, err := s.Authorize(ctx, AuthorizeRequest{CPO: ocpiclient.Party{CountryCode: cp.CountryCode, PartyID: cp.PartyID},
					CPOParties: c.parties, UID: "APP-1", Type: "APP_USER", Location: c.loc})
				after := storetest.Count(t, db, "SELECT COUNT(*) FROM token_authorizations")
				if c.field == "" {
					if err != nil || a.Answer == nil || a.Answer.Allowed != ocpi.AllowedAllowed {
						t.Errorf("%s: %+v, %v; want ALLOWED", name, a, err)
					}
					if after != before+1 {
						t.Errorf("%s: %d authorizations recorded, want 1", name, after-before)
					}
					continue
				}
				var oe *ocpi.Error
				if !errors.As(err, &oe) || oe.Field != c.field || !strings.Contains(oe.Message, c.message) {
					t.Errorf("%s: %v; want an error naming %s", name, err, c.field)
				}
				if after != before {
					t.Errorf("%s: a refused authorization was recorded", name)
				}
			}
		}
		if v := db.Violations(); v != 0 {
			t.Errorf("%d pooled reads while holding a transaction", v)
		}
	})
}
