package routing

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Table is the routing table delivery resolves broadcast receivers with:
// who receives a broadcast, decided in memory from the CONNECTED platforms,
// their roles and the RECEIVER interfaces they offer. Delivery takes one
// snapshot (Routes) per batch of changes it expands, so a change costs no
// registry read and no endpoints decoding per receiver.
//
// A snapshot is never stale: taking it reads the platforms' small rows and
// roles (two indexed reads of tables with one row per partner), and only
// the endpoints documents are cached, decoded, by their exact text. So a
// registration change — in this process or another replica, through any
// path of the registry — is seen by the next batch, with no invalidation to
// forget; what the cache saves is the JSON decoding that cost 11 % of a
// PATCH when every request did it for every platform.
type Table struct {
	db *store.DB

	mu       sync.Mutex
	receives map[int64]decoded
}

// decoded is a platform's endpoints document and the modules it receives.
type decoded struct {
	raw      string
	receives map[string]bool
}

type tablePlatform struct {
	id       int64
	offline  bool
	receives map[string]bool
	roles    []tableRole // by role, country code, party id
}

type tableRole struct {
	role, cc, pid string
}

// NewTable returns a Table reading db.
func NewTable(db *store.DB) *Table {
	return &Table{db: db, receives: map[int64]decoded{}}
}

// Routes is a snapshot of a Table: answer from it inside a transaction
// (it reads nothing).
type Routes struct{ plats []tablePlatform }

// Routes reads a snapshot of the table. Call it outside any transaction
// (it reads through the pool).
func (t *Table) Routes(ctx context.Context) (Routes, error) {
	plats, err := t.load(ctx, t.db.Read())
	return Routes{plats: plats}, err
}

// Receivers answers Router.Receivers from the snapshot: the same
// platforms, in platform order, with the same OCPI-to.
func (r Routes) Receivers(sender int64, audience []party.Role, module string) []Receiver {
	var out []Receiver
	for _, p := range r.plats {
		if p.id == sender || !p.receives[module] {
			continue
		}
		for _, ro := range p.roles {
			if slices.Contains(audience, party.Role(ro.role)) {
				out = append(out, Receiver{PlatformID: p.id, Offline: p.offline, To: Party{CountryCode: ro.cc, PartyID: ro.pid}})
				break
			}
		}
	}
	return out
}

// modules returns the RECEIVER modules of an endpoints document, decoded
// once per text.
func (t *Table) modules(id int64, raw []byte) map[string]bool {
	t.mu.Lock()
	d, ok := t.receives[id]
	t.mu.Unlock()
	if ok && d.raw == string(raw) {
		return d.receives
	}
	d = decoded{raw: string(raw), receives: map[string]bool{}}
	var eps []ocpi.Endpoint
	if json.Unmarshal(raw, &eps) == nil {
		for _, e := range eps {
			if e.Role == ocpi.InterfaceReceiver {
				d.receives[e.Identifier] = true
			}
		}
	}
	t.mu.Lock()
	t.receives[id] = d
	t.mu.Unlock()
	return d.receives
}

func (t *Table) load(ctx context.Context, q store.Querier) ([]tablePlatform, error) {
	rows, err := q.Query(ctx, "SELECT id, connection, endpoints FROM platforms WHERE status = $1 ORDER BY id", string(party.StatusConnected))
	if err != nil {
		return nil, err
	}
	var plats []tablePlatform
	byID := map[int64]int{}
	for rows.Next() {
		var p tablePlatform
		var conn string
		var raw []byte
		if err := rows.Scan(&p.id, &conn, &raw); err != nil {
			rows.Close()
			return nil, err
		}
		p.offline = conn == party.ClientOffline
		p.receives = t.modules(p.id, raw)
		byID[p.id] = len(plats)
		plats = append(plats, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows, err = q.Query(ctx, "SELECT platform_id, role, country_code, party_id FROM platform_roles ORDER BY platform_id, role, country_code, party_id")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var r tableRole
		if err := rows.Scan(&id, &r.role, &r.cc, &r.pid); err != nil {
			return nil, err
		}
		if i, ok := byID[id]; ok {
			plats[i].roles = append(plats[i].roles, r)
		}
	}
	return plats, rows.Err()
}
