package party

import (
	"context"
	"encoding/json"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// ConnectedFunc runs inside the transaction that connects a platform (a
// registration either way) or changes its endpoints (a credentials update or
// rotation). before are the endpoints the platform had until then (nil for a
// new platform), so the function can tell which receivers it gained.
type ConnectedFunc func(ctx context.Context, tx *store.Tx, platformID int64, before []ocpi.Endpoint) error

// connected runs the ConnectedFuncs in tx.
func (s *Service) connected(ctx context.Context, tx *store.Tx, id int64, before []ocpi.Endpoint) error {
	for _, fn := range s.ConnectedFuncs {
		if err := fn(ctx, tx, id, before); err != nil {
			return err
		}
	}
	return nil
}

// endpointsOf reads a platform's endpoints in tx (before a change).
func endpointsOf(ctx context.Context, tx *store.Tx, id int64) ([]ocpi.Endpoint, error) {
	var raw []byte
	if err := tx.QueryRow(ctx, "SELECT endpoints FROM platforms WHERE id = $1", id).Scan(&raw); err != nil {
		return nil, err
	}
	var eps []ocpi.Endpoint
	_ = json.Unmarshal(raw, &eps)
	if eps == nil {
		eps = []ocpi.Endpoint{}
	}
	return eps, nil
}

// HostsAny returns, for a platform, a test of whether cc/pid is one of its
// parties (its own roles and the parties behind it, for a peer hub).
func (s *Service) HostsAny(ctx context.Context, q store.Querier, platformID int64) (func(cc, pid string) bool, error) {
	roles, err := partiesOf(ctx, q, platformID)
	if err != nil {
		return nil, err
	}
	return func(cc, pid string) bool {
		for _, r := range roles {
			if r.Matches(cc, pid) {
				return true
			}
		}
		return false
	}, nil
}

// partiesOf is the HubClientInfo book's Config.Parties: a platform's own
// roles and, for a peer hub, the parties behind it.
func partiesOf(ctx context.Context, q store.Querier, platformID int64) ([]PartyRef, error) {
	roles, err := platformRoles(ctx, q, platformID)
	if err == nil {
		roles, err = withRepresented(ctx, q, platformID, roles)
	}
	if err != nil {
		return nil, err
	}
	refs := make([]PartyRef, len(roles))
	for i, r := range roles {
		refs[i] = r.PartyRef
	}
	return refs, nil
}
