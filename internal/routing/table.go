package routing

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// DefaultTableTTL is how long a Table answers from what it read: the bound
// on how late another replica's registration change is seen.
const DefaultTableTTL = time.Second

// Table is a cached routing table: who receives a broadcast, decided in
// memory from the CONNECTED platforms, their roles and the RECEIVER
// interfaces they offer, read at most once per TTL (and again at once after
// Invalidate). Delivery resolves receivers with it when it expands a change
// into per-receiver work, so a change costs no registry read or endpoints
// decoding per receiver.
//
// Staleness is bounded and safe: in this process a registration change
// invalidates the table when it commits (the hub calls Invalidate from the
// registry's hooks); a change made by another replica is seen within the
// TTL. A platform that went OFFLINE, was suspended or unregistered meanwhile
// is checked again when its push is sent (the push is closed, or marked for
// a resync), and a platform that gains a receiver gets its initial load.
type Table struct {
	db  *store.DB
	ttl time.Duration

	mu      sync.Mutex
	loaded  time.Time
	version uint64 // bumped by Invalidate: a load begun before it is not kept
	plats   []tablePlatform
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

// NewTable returns a Table reading db; ttl <= 0 means DefaultTableTTL.
func NewTable(db *store.DB, ttl time.Duration) *Table {
	if ttl <= 0 {
		ttl = DefaultTableTTL
	}
	return &Table{db: db, ttl: ttl}
}

// Invalidate drops what the table read: the next question reads again.
func (t *Table) Invalidate() {
	t.mu.Lock()
	t.version++
	t.plats = nil
	t.loaded = time.Time{}
	t.mu.Unlock()
}

// Receivers answers Router.Receivers from the table: the same platforms,
// in platform order, with the same OCPI-to.
func (t *Table) Receivers(ctx context.Context, sender int64, audience []party.Role, module string) ([]Receiver, error) {
	plats, err := t.platforms(ctx)
	if err != nil {
		return nil, err
	}
	var out []Receiver
	for _, p := range plats {
		if p.id == sender || !p.receives[module] {
			continue
		}
		for _, r := range p.roles {
			if slices.Contains(audience, party.Role(r.role)) {
				out = append(out, Receiver{PlatformID: p.id, Offline: p.offline, To: Party{CountryCode: r.cc, PartyID: r.pid}})
				break
			}
		}
	}
	return out, nil
}

func (t *Table) platforms(ctx context.Context) ([]tablePlatform, error) {
	t.mu.Lock()
	if t.plats != nil && time.Since(t.loaded) < t.ttl {
		p := t.plats
		t.mu.Unlock()
		return p, nil
	}
	version := t.version
	t.mu.Unlock()
	plats, err := loadTable(ctx, t.db.Read())
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	if t.version == version {
		t.plats, t.loaded = plats, time.Now()
	}
	t.mu.Unlock()
	return plats, nil
}

func loadTable(ctx context.Context, q store.Querier) ([]tablePlatform, error) {
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
		p.receives = map[string]bool{}
		var eps []ocpi.Endpoint
		if json.Unmarshal(raw, &eps) == nil {
			for _, e := range eps {
				if e.Role == ocpi.InterfaceReceiver {
					p.receives[e.Identifier] = true
				}
			}
		}
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
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if plats == nil {
		plats = []tablePlatform{}
	}
	return plats, nil
}
