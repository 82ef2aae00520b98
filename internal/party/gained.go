package party

import (
	"context"
	"encoding/json"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
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

// LoadClientInfo enqueues, inside tx, a push of the ClientInfo of up to limit
// parties (client_info rows after the cursor, in pk order) to one platform:
// the initial load of a new hubclientinfo receiver. The platform's own
// parties are left out, and for a peer hub the parties behind it (the loop
// rule: what a peer hub told us is never told back to it). last is the
// cursor to continue from; done is true when nothing is left after it.
func (s *Service) LoadClientInfo(ctx context.Context, tx *store.Tx, platformID, after int64, limit int) (last int64, sent int, done bool, err error) {
	own, err := platformRoles(ctx, tx, platformID)
	if err == nil {
		own, err = withRepresented(ctx, tx, platformID, own)
	}
	if err != nil {
		return after, 0, false, err
	}
	rows, err := tx.Query(ctx, "SELECT pk, role, country_code, party_id FROM client_info WHERE pk > $1 ORDER BY pk LIMIT $2", after, limit+1)
	if err != nil {
		return after, 0, false, err
	}
	var todo []ClientInfoPushArgs
	last = after
	n, more := 0, false
	for rows.Next() {
		if n == limit {
			more = true // one more than a batch exists
			break
		}
		var pk int64
		var a ClientInfoPushArgs
		if err := rows.Scan(&pk, &a.Role, &a.CountryCode, &a.PartyID); err != nil {
			rows.Close()
			return after, 0, false, err
		}
		last, n = pk, n+1
		isOwn := false
		for _, r := range own {
			if string(r.Role) == a.Role && r.Matches(a.CountryCode, a.PartyID) {
				isOwn = true
			}
		}
		if !isOwn {
			a.PlatformID = platformID
			todo = append(todo, a)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return after, 0, false, err
	}
	for _, a := range todo {
		if _, err := s.jobs.InsertTx(ctx, tx, a, &river.InsertOpts{Queue: jobs.QueuePush, MaxAttempts: 10}); err != nil {
			return after, 0, false, err
		}
	}
	return last, len(todo), !more, nil
}

// HostsAny returns, for a platform, a test of whether cc/pid is one of its
// parties (its own roles and the parties behind it, for a peer hub).
func (s *Service) HostsAny(ctx context.Context, q store.Querier, platformID int64) (func(cc, pid string) bool, error) {
	roles, err := platformRoles(ctx, q, platformID)
	if err == nil {
		roles, err = withRepresented(ctx, q, platformID, roles)
	}
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
