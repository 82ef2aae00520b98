package payment

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"

	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// assignment is a CPO's change of what a terminal serves.
type assignment struct {
	LocationIDs *[]string     `json:"location_ids"`
	EVSEUIDs    *[]string     `json:"evse_uids"`
	LastUpdated ocpi.DateTime `json:"last_updated"`
}

// assign applies a CPO's PUT or PATCH to a terminal: only location_ids and
// evse_uids change (any other field must equal the stored one), each must
// be the CPO's in the directory, and the change is relayed to the PTP.
func (s *Service) assign(ctx context.Context, a Actor, id string, raw []byte) error {
	var in assignment
	if err := ocpi.Decode(raw, &in); err != nil {
		return err
	}
	patch, err := ocpi.ParseObject(raw)
	if err != nil {
		return err
	}
	c := ocpi.NewCheck("")
	if in.LocationIDs != nil {
		c.IDList("location_ids", *in.LocationIDs, 36)
	}
	if in.EVSEUIDs != nil {
		c.IDList("evse_uids", *in.EVSEUIDs, 36)
	}
	if err := c.Err(); err != nil {
		return err
	}
	cpos := a.parties(party.RoleCPO)
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		cur, found, err := lockTerminal(ctx, tx, id)
		if err != nil {
			return err
		}
		// Another CPO's terminal is as unknown as a missing one.
		if !found || !(cur.cpo.IsZero() || a.owns(party.RoleCPO, cur.cpo)) {
			return errUnknownTerminal(id)
		}
		if err := onlyAssignment(cur.doc, patch); err != nil {
			return err
		}
		locations, evses := stringList(cur.doc["location_ids"]), stringList(cur.doc["evse_uids"])
		if in.LocationIDs != nil {
			locations = *in.LocationIDs
		}
		if in.EVSEUIDs != nil {
			evses = *in.EVSEUIDs
		}
		customer := cur.cpo
		if customer.IsZero() {
			if customer, err = s.claimant(ctx, cpos, locations, evses); err != nil {
				return err
			}
		}
		targets, err := s.checkTargets(ctx, customer, locations, evses, "your")
		if err != nil {
			return err
		}
		doc := cloneObject(cur.doc)
		doc["location_ids"] = anyList(locations)
		doc["evse_uids"] = anyList(evses)
		lu := in.LastUpdated
		if lu.IsZero() {
			lu = ocpi.FromMicros(s.now())
		}
		doc["last_updated"] = lu.String()
		t, body, err := canonicalTerminal(doc, true)
		if err != nil {
			return err
		}
		if err := checkTerminalFresh(cur, t); err != nil {
			return err
		}
		if sameJSON(cur.body, body) && samePart(cur.cpo, customer) {
			return nil
		}
		if _, err := s.saveTerminal(ctx, tx, cur, cur.ptpPlatform, cur.ptp, customer, t, body, targets); err != nil {
			return err
		}
		return s.relayAssignment(ctx, tx, a.CorrelationID, cur, customer, t)
	})
}

// onlyAssignment refuses a CPO's body that changes anything but the
// assignment: every other field it carries must equal the stored value (a
// CPO may PUT back the terminal it read with new lists).
func onlyAssignment(stored, patch ocpi.Object) error {
	for _, k := range slices.Sorted(maps.Keys(patch)) {
		if slices.Contains(ocpi.TerminalAssignmentFields, k) || k == "last_updated" {
			continue
		}
		v := patch[k]
		if k == "terminal_id" {
			if s, ok := v.(string); ok && ocpi.EqualCI(s, stringOf(stored[k])) {
				continue
			}
			return ocpi.Invalid(k, "must equal the terminal_id in the URL")
		}
		a, _ := ocpi.MarshalObject(v)
		b, _ := ocpi.MarshalObject(stored[k])
		if _, present := stored[k]; !present || string(a) != string(b) {
			return ocpi.Invalid(k, "a CPO may change only location_ids and evse_uids of a terminal; "+k+" is set by the terminal's PTP")
		}
	}
	return nil
}

// claimant is the CPO party that claims an unclaimed terminal by assigning
// it: the one of the caller's CPO parties that publishes its first location
// (or, without locations, its first EVSE).
func (s *Service) claimant(ctx context.Context, cpos []Party, locations, evses []string) (Party, error) {
	switch {
	case len(locations) > 0:
		for _, p := range cpos {
			err := s.dir.CheckLocation(ctx, p.CountryCode, p.PartyID, locations[0], "", "")
			if err == nil {
				return p, nil
			}
			if ocpi.ErrorCode(err) != ocpi.EUNKNOWNLOCATION {
				return Party{}, err
			}
		}
		return Party{}, s.foreignLocation(ctx, "location_ids[0]", locations[0], "your")
	case len(evses) > 0:
		for _, p := range cpos {
			locs, err := s.dir.EVSELocations(ctx, p.CountryCode, p.PartyID, evses[0])
			if err != nil {
				return Party{}, err
			}
			if len(locs) > 0 {
				return p, nil
			}
		}
		return Party{}, ocpi.Invalid("evse_uids[0]", "\""+printable(evses[0])+"\" is not an EVSE of your locations in the hub's directory")
	}
	// Nothing assigned: the terminal stays unclaimed.
	return Party{}, nil
}

// relayAssignment queues the new assignment for the terminal's PTP: a PATCH
// of location_ids and evse_uids on its payments SENDER (payments.md §6.1
// step 3), ordered behind earlier relays of the terminal.
func (s *Service) relayAssignment(ctx context.Context, tx *store.Tx, correlationID string, cur *storedTerminal, customer Party, t *ocpi.Terminal) error {
	if s.hub == nil {
		return nil
	}
	p, err := s.platformWith(ctx, party.RolePTP, cur.ptp, Module, ocpi.InterfaceSender)
	if err != nil || p == nil {
		return err
	}
	body, err := assignmentBody(t)
	if err != nil {
		return err
	}
	return s.hub.Enqueue(ctx, tx, p.ID, hub.Push{Module: Module, ObjectKey: ptpTerminalKey(t.TerminalID), Method: http.MethodPatch,
		Path: "/terminals/" + url.PathEscape(t.TerminalID), Body: body, To: cur.ptp, From: customer, Interface: ocpi.InterfaceSender,
		CorrelationID: correlationID})
}

// assignmentBody is the PATCH a PTP gets for an assignment.
func assignmentBody(t *ocpi.Terminal) ([]byte, error) {
	return ocpi.MarshalObject(map[string]any{
		"location_ids": anyList(t.LocationIDs),
		"evse_uids":    anyList(t.EVSEUIDs),
		"last_updated": t.LastUpdated.String(),
	})
}

func stringList(v any) []string {
	items, _ := v.([]any)
	out := make([]string, 0, len(items))
	for _, it := range items {
		if s, ok := it.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func anyList(v []string) []any {
	out := make([]any, len(v))
	for i, s := range v {
		out[i] = s
	}
	return out
}

func stringOf(v any) string {
	s, _ := v.(string)
	return s
}
