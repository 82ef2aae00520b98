package party

import (
	"context"
	"errors"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party/ident"
	"github.com/ocpihub/ocpihub/internal/store"
)

// GetClientInfo is our HubClientInfo receiver's GET of one party, for a
// peer hub: the ClientInfo as we hold it. A party the peer hub lists is
// answered as the peer reported it (what it stored with us, not an echo of
// our view); any other party as our own HubClientInfo lists it. Like the
// PUT, only a platform with the HUB role may ask (404 for anyone else), and
// a party we do not know is 404.
func (s *Service) GetClientInfo(ctx context.Context, c *Caller, cc, pid string) (ClientInfo, error) {
	var ci ClientInfo
	if c == nil || c.Kind != CallerPlatform || !c.HasRole(RoleHUB) {
		return ci, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "not found: only a platform registered with the HUB role reads HubClientInfo objects"}
	}
	cc, pid = ocpi.Key(cc), ocpi.Key(pid)
	q := s.db.ReadIn(ctx)
	var lu int64
	err := q.QueryRow(ctx, `SELECT role, country_code, party_id, status, last_updated FROM peer_parties
		WHERE platform_id = $1 AND country_code = $2 AND party_id = $3 ORDER BY role LIMIT 1`, c.PlatformID, cc, pid).
		Scan(&ci.Role, &ci.CountryCode, &ci.PartyID, &ci.Status, &lu)
	if errors.Is(err, store.ErrNoRows) {
		err = q.QueryRow(ctx, `SELECT role, country_code, party_id, status, last_updated FROM client_info
			WHERE country_code = $1 AND party_id = $2 ORDER BY role LIMIT 1`, cc, pid).
			Scan(&ci.Role, &ci.CountryCode, &ci.PartyID, &ci.Status, &lu)
	}
	if errors.Is(err, store.ErrNoRows) {
		return ci, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "no party " + ident.Printable(strings.ToUpper(cc)) + "/" + ident.Printable(strings.ToUpper(pid)) + " is known to this hub"}
	}
	if err != nil {
		return ci, err
	}
	ci.LastUpdated = ocpi.FromMicros(lu)
	return ci, nil
}
