package routing

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// CPOAudience are the roles a CPO's broadcast reaches (transport.md §11),
// and peer hubs, for the parties behind them.
var CPOAudience = []party.Role{party.RoleEMSP, party.RoleNSP, party.RoleOTHER, party.RoleHUB}

// EMSPAudience are the roles an eMSP's broadcast (tokens) reaches: the CPOs
// and peer hubs.
var EMSPAudience = []party.Role{party.RoleCPO, party.RoleHUB}

// Receiver is a platform a broadcast goes to.
type Receiver struct {
	PlatformID int64
	// Offline is true when the liveness job marked the platform OFFLINE:
	// it gets nothing now, the object is resynced when it is back.
	Offline bool
	// To is the platform's first party in the audience (by role, then
	// party): the push's OCPI-to when the push names none.
	To Party
}

// Receivers lists, in platform order, the platforms a broadcast of module
// from platform sender (0: the hub itself) goes to: CONNECTED, not the
// sender (the loop rule: an object is not sent back where it came from),
// hosting a party in one of the audience roles and offering the module's
// RECEIVER interface. q is the caller's transaction, so that the set is
// the one of the commit that writes the change.
func (r *Router) Receivers(ctx context.Context, q store.Querier, sender int64, audience []party.Role, module string) ([]Receiver, error) {
	args := make([]any, 0, len(audience)+2)
	args = append(args, string(party.StatusConnected), sender)
	ph := ""
	for i, role := range audience {
		if i > 0 {
			ph += ", "
		}
		args = append(args, string(role))
		ph += fmt.Sprintf("$%d", len(args))
	}
	rows, err := q.Query(ctx, `SELECT p.id, p.connection, p.endpoints,
		(SELECT r.country_code || '/' || r.party_id FROM platform_roles r WHERE r.platform_id = p.id AND r.role IN (`+ph+`)
			ORDER BY r.role, r.country_code, r.party_id LIMIT 1) AS party
		FROM platforms p
		WHERE p.status = $1 AND p.id <> $2
		AND EXISTS (SELECT 1 FROM platform_roles r WHERE r.platform_id = p.id AND r.role IN (`+ph+`))
		ORDER BY p.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("broadcast receivers: %w", err)
	}
	defer rows.Close()
	var out []Receiver
	for rows.Next() {
		var id int64
		var conn, addr string
		var raw []byte
		if err := rows.Scan(&id, &conn, &raw, &addr); err != nil {
			return nil, err
		}
		var eps []ocpi.Endpoint
		if json.Unmarshal(raw, &eps) != nil {
			continue
		}
		if _, ok := (ocpi.VersionDetails{Endpoints: eps}).Find(module, ocpi.InterfaceReceiver); !ok {
			continue
		}
		cc, pid, _ := strings.Cut(addr, "/")
		out = append(out, Receiver{PlatformID: id, Offline: conn == party.ClientOffline, To: Party{CountryCode: cc, PartyID: pid}})
	}
	return out, rows.Err()
}
