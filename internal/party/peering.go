package party

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
	"github.com/ocpihub/ocpihub/internal/party/ident"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Hub peering: a partner with the HUB role is another roaming hub. It
// represents the parties its HubClientInfo lists (pushed to our receiver or
// pulled from its sender), and those parties are reachable through it.
//
// Where the spec is silent, the registry decides as follows:
//   - A represented party joins the peer hub's roles (Platform.Roles and the
//     caller's), marked Represented with the status the peer reported: the
//     peer hub may write that party's objects and nobody else's, and
//     routing to the party goes to the peer hub with the party in OCPI-to.
//   - A party reachable directly is reached directly: a peer hub listing
//     a party one of our partners hosts gains nothing for it.
//   - Two peer hubs listing the same party is a conflict: the first hub to
//     list it keeps it, the other does not represent it, and both show the
//     conflict to the operator (admin API and console).
//   - Our own parties and HUB-role entries in a peer's list are ignored
//     (they are us, or hubs, not parties to route to): that keeps loops out.
//   - A SUSPENDED party is no longer represented; OFFLINE and PLANNED ones
//     stay represented but are not sent to (4003 when addressed).
//   - A ClientInfo older than the one stored is ignored (a late copy).

// PeerParty is a party behind a peer hub, as the admin API and the console
// show it.
type PeerParty struct {
	PartyRef
	// Status is the ConnectionStatus the peer hub reported.
	Status      string        `json:"status"`
	LastUpdated ocpi.DateTime `json:"last_updated"`
	// Reachable is true when we route to the party through this peer hub
	// now: it represents the party and both are CONNECTED.
	Reachable bool `json:"reachable"`
	// Direct is true when the party is connected to us directly (and is
	// reached that way).
	Direct bool `json:"direct,omitempty"`
	// ConflictWith lists the other peer hubs (platform ids) listing the
	// same party; Represented tells whether this hub keeps it.
	ConflictWith []int64 `json:"conflict_with,omitempty"`
	Represented  bool    `json:"represented"`
}

// Peer is a peer hub with the parties behind it.
type Peer struct {
	PlatformID int64       `json:"platform_id"`
	Name       string      `json:"name"`
	Status     Status      `json:"status"`
	Connection string      `json:"connection"`
	Hub        PartyRef    `json:"hub"`
	Parties    []PeerParty `json:"parties"`
}

// isPeerHub reports whether a platform's own roles include HUB.
func isPeerHub(roles []HostedParty) bool {
	return slices.ContainsFunc(roles, func(r HostedParty) bool { return r.Role == RoleHUB && !r.Represented })
}

// representedWhere selects the peer_parties rows (alias pp) that their peer
// hub represents: not SUSPENDED, not hosted directly, and listed by no other
// live peer hub first.
const representedWhere = `pp.status <> 'SUSPENDED'
	AND NOT EXISTS (SELECT 1 FROM platform_roles r WHERE r.country_code = pp.country_code AND r.party_id = pp.party_id)
	AND NOT EXISTS (SELECT 1 FROM peer_parties o JOIN platforms op ON op.id = o.platform_id
		WHERE o.country_code = pp.country_code AND o.party_id = pp.party_id AND o.platform_id <> pp.platform_id
		AND op.status <> 'UNREGISTERED' AND o.status <> 'SUSPENDED'
		AND (o.created_at < pp.created_at OR (o.created_at = pp.created_at AND o.platform_id < pp.platform_id)))`

// represented returns the parties a peer hub represents now.
func represented(ctx context.Context, q store.Querier, platformID int64) ([]HostedParty, error) {
	return store.QueryAll(ctx, q, func(row store.Row) (HostedParty, error) {
		var r HostedParty
		var role string
		err := row.Scan(&role, &r.CountryCode, &r.PartyID, &r.PeerStatus)
		r.Role, r.Represented = Role(role), true
		return r, err
	}, `SELECT pp.role, pp.country_code, pp.party_id, pp.status FROM peer_parties pp
		WHERE pp.platform_id = $1 AND `+representedWhere+` ORDER BY pp.role, pp.country_code, pp.party_id`, platformID)
}

// withRepresented appends a peer hub's represented parties to its roles.
func withRepresented(ctx context.Context, q store.Querier, id int64, roles []HostedParty) ([]HostedParty, error) {
	if !isPeerHub(roles) {
		return roles, nil
	}
	more, err := represented(ctx, q, id)
	if err != nil {
		return nil, err
	}
	return append(roles, more...), nil
}

// peerFor returns the peer hub that represents cc/pid in role (any role
// when role is empty), or store.ErrNoRows.
func peerFor(ctx context.Context, q store.Querier, role Role, cc, pid string) (int64, error) {
	query, args := withRole(`SELECT pp.platform_id FROM peer_parties pp JOIN platforms p ON p.id = pp.platform_id
		WHERE pp.country_code = $1 AND pp.party_id = $2 AND p.status <> 'UNREGISTERED' AND `+representedWhere, "pp.role", role, cc, pid)
	var id int64
	err := q.QueryRow(ctx, query+" ORDER BY pp.created_at, pp.platform_id LIMIT 1", args...).Scan(&id)
	return id, err
}

// withRole returns query, whose $1 and $2 are cc and pid, and its
// arguments, with the condition that column is role when role is not empty.
func withRole(query, column string, role Role, cc, pid string) (string, []any) {
	args := []any{ocpi.Key(cc), ocpi.Key(pid)}
	if role != "" {
		query += " AND " + column + " = $3"
		args = append(args, string(role))
	}
	return query, args
}

// IsPeerHub reports whether the platform is another roaming hub (its own
// roles include HUB).
func (p *Platform) IsPeerHub() bool { return isPeerHub(p.Roles) }

// PartyStatus returns the ConnectionStatus a peer hub reported for cc/pid,
// or "" when the platform hosts the party itself (or not at all).
func (p *Platform) PartyStatus(cc, pid string) string {
	for _, r := range p.Roles {
		if r.Represented && r.Matches(cc, pid) {
			return r.PeerStatus
		}
	}
	return ""
}

// PutClientInfo stores what a peer hub's HubClientInfo says of one party
// (its receiver PUT, or one object of a pull). cc/pid are the party of the
// URL (empty for a pulled object). Only a platform with the HUB role may
// list parties (anyone else gets 404, as on another party's URL). It returns whether the object was stored (false: ignored,
// being older than the stored one, ours, or a hub).
func (s *Service) PutClientInfo(ctx context.Context, c *Caller, cc, pid string, raw []byte) (bool, error) {
	if c == nil || c.Kind != CallerPlatform || !c.HasRole(RoleHUB) {
		// Like any client-owned URL of another party's: 404, nothing stored.
		return false, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "not found: only a platform registered with the HUB role lists parties in HubClientInfo"}
	}
	var ci clientinfo.ClientInfo
	if err := ocpi.Decode(raw, &ci); err != nil {
		return false, err
	}
	chk := ocpi.NewCheck("")
	chk.CountryCode("country_code", ci.CountryCode, true)
	chk.PartyID("party_id", ci.PartyID, true)
	chk.Enum("role", ci.Role, Roles, true)
	chk.Enum("status", ci.Status, []string{ClientConnected, ClientOffline, clientinfo.Planned, clientinfo.Suspended}, true)
	chk.DateTime("last_updated", ci.LastUpdated, true)
	if cc != "" && !strings.EqualFold(cc, ci.CountryCode) {
		chk.Fail("country_code", "is %q but the URL names %q", ci.CountryCode, ident.Printable(cc))
	}
	if pid != "" && !strings.EqualFold(pid, ci.PartyID) {
		chk.Fail("party_id", "is %q but the URL names %q", ci.PartyID, ident.Printable(pid))
	}
	if err := chk.Err(); err != nil {
		return false, err
	}
	return s.putPeerParty(ctx, c.PlatformID, ci)
}

func (s *Service) putPeerParty(ctx context.Context, platformID int64, ci clientinfo.ClientInfo) (bool, error) {
	ref := PartyRef{Role: Role(strings.ToUpper(ci.Role)), CountryCode: ocpi.Key(ci.CountryCode), PartyID: ocpi.Key(ci.PartyID)}
	if ref.Role == RoleHUB || s.isOwn(ref.CountryCode, ref.PartyID) {
		return false, nil
	}
	stored := false
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var prev int64
		var prevStatus string
		err := tx.QueryRow(ctx, `SELECT last_updated, status FROM peer_parties WHERE platform_id = $1 AND role = $2 AND country_code = $3 AND party_id = $4`,
			platformID, string(ref.Role), ref.CountryCode, ref.PartyID).Scan(&prev, &prevStatus)
		switch {
		case err == nil && prev > ci.LastUpdated.Micros():
			return nil
		case err == nil && prev == ci.LastUpdated.Micros() && prevStatus == ci.Status:
			return nil
		case err != nil && !errors.Is(err, store.ErrNoRows):
			return err
		}
		now := s.now()
		s.forgetAtCommit(tx)
		if _, err := tx.Exec(ctx, `INSERT INTO peer_parties (platform_id, role, country_code, party_id, status, last_updated, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
			ON CONFLICT (platform_id, role, country_code, party_id) DO UPDATE SET status = excluded.status,
				last_updated = excluded.last_updated, updated_at = excluded.updated_at`,
			platformID, string(ref.Role), ref.CountryCode, ref.PartyID, ci.Status, ci.LastUpdated.Micros(), now); err != nil {
			return err
		}
		stored = true
		// Our own HubClientInfo lists the party as this peer hub reports
		// it, when the party is ours to report through this hub.
		var direct int
		err = tx.QueryRow(ctx, "SELECT 1 FROM platform_roles WHERE country_code = $1 AND party_id = $2 LIMIT 1", ref.CountryCode, ref.PartyID).Scan(&direct)
		if err == nil {
			return nil
		}
		if !errors.Is(err, store.ErrNoRows) {
			return err
		}
		winner, err := peerFor(ctx, tx, ref.Role, ref.CountryCode, ref.PartyID)
		switch {
		case err == nil && winner != platformID:
			return nil // another peer hub keeps the party (a conflict)
		case errors.Is(err, store.ErrNoRows) && ci.Status != clientinfo.Suspended:
			return nil
		case err != nil && !errors.Is(err, store.ErrNoRows):
			return err
		}
		return s.ClientInfoChanged(ctx, tx, platformID, []PartyRef{ref}, ci.Status)
	})
	return stored, err
}

func (s *Service) isOwn(cc, pid string) bool {
	for _, r := range s.cfg.Own {
		if strings.EqualFold(r.CountryCode, cc) && strings.EqualFold(r.PartyID, pid) {
			return true
		}
	}
	return false
}

// SyncPeer pulls a peer hub's HubClientInfo sender and stores what it lists.
// It returns how many objects were stored (changes only).
func (s *Service) SyncPeer(ctx context.Context, platformID int64) (int, error) {
	p, err := s.Find(ctx, platformID)
	if err != nil {
		return 0, err
	}
	if !isPeerHub(p.Roles) || p.Status != StatusConnected {
		return 0, nil
	}
	base, ok := p.Endpoint("hubclientinfo", ocpi.InterfaceSender)
	if !ok {
		return 0, nil
	}
	auth, err := s.Auth(p)
	if err != nil {
		return 0, err
	}
	u, err := url.Parse(base)
	if err != nil {
		return 0, ocpi.Errorf(ocpi.ECLIENTAPI, "platform %s has a malformed hubclientinfo URL", p.Name)
	}
	q := u.Query()
	q.Set("limit", "100")
	u.RawQuery = q.Encode()
	n := 0
	err = s.client.GetAll(ctx, ocpiclient.Request{URL: u.String(), Token: auth.Token, Base64: auth.Base64, Timeout: 30 * time.Second,
		PlatformID: p.ID, Partner: p.Name, Module: "hubclientinfo"}, 0,
		func(items []json.RawMessage) error {
			for _, it := range items {
				var ci clientinfo.ClientInfo
				if err := json.Unmarshal(it, &ci); err != nil {
					s.logger.WarnContext(ctx, "peer hub listed an unreadable ClientInfo", "platform_id", platformID, "error", err)
					continue
				}
				stored, err := s.PutClientInfo(ctx, &Caller{Kind: CallerPlatform, PlatformID: platformID, Roles: []PartyRef{{Role: RoleHUB}}}, "", "", it)
				var oe *ocpi.Error
				if errors.As(err, &oe) {
					s.logger.WarnContext(ctx, "peer hub listed an invalid ClientInfo", "platform_id", platformID, "field", oe.Field, "error", oe.Message)
					continue
				}
				if err != nil {
					return err
				}
				if stored {
					n++
				}
			}
			return nil
		})
	return n, err
}

// Peers lists every peer hub (HUB-role partner, not unregistered) with the
// parties it lists.
func (s *Service) Peers(ctx context.Context) ([]Peer, error) {
	ps, err := s.List(ctx, Filter{Status: []Status{StatusPending, StatusConnected, StatusSuspended}})
	if err != nil {
		return nil, err
	}
	q := s.db.Read()
	out := []Peer{}
	for i := len(ps) - 1; i >= 0; i-- {
		p := ps[i]
		if !isPeerHub(p.Roles) {
			continue
		}
		peer := Peer{PlatformID: p.ID, Name: p.Name, Status: p.Status, Connection: p.Connection, Parties: []PeerParty{}}
		for _, r := range p.Roles {
			if r.Role == RoleHUB && !r.Represented {
				peer.Hub = r.PartyRef
			}
		}
		rows, err := q.Query(ctx, `SELECT pp.role, pp.country_code, pp.party_id, pp.status, pp.last_updated,
			EXISTS (SELECT 1 FROM platform_roles r WHERE r.country_code = pp.country_code AND r.party_id = pp.party_id),
			EXISTS (SELECT 1 FROM peer_parties pp2 WHERE pp2.platform_id = pp.platform_id AND pp2.role = pp.role
				AND pp2.country_code = pp.country_code AND pp2.party_id = pp.party_id AND `+strings.ReplaceAll(representedWhere, "pp.", "pp2.")+`)
			FROM peer_parties pp WHERE pp.platform_id = $1 ORDER BY pp.country_code, pp.party_id, pp.role`, p.ID)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var pp PeerParty
			var role string
			var lu int64
			if err := rows.Scan(&role, &pp.CountryCode, &pp.PartyID, &pp.Status, &lu, &pp.Direct, &pp.Represented); err != nil {
				rows.Close()
				return nil, err
			}
			pp.Role, pp.LastUpdated = Role(role), ocpi.FromMicros(lu)
			pp.Reachable = pp.Represented && pp.Status == ClientConnected && p.Status == StatusConnected && p.Connection == ClientConnected
			peer.Parties = append(peer.Parties, pp)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		for i := range peer.Parties {
			pp := &peer.Parties[i]
			others, err := q.Query(ctx, `SELECT DISTINCT o.platform_id FROM peer_parties o JOIN platforms op ON op.id = o.platform_id
				WHERE o.country_code = $1 AND o.party_id = $2 AND o.platform_id <> $3 AND op.status <> 'UNREGISTERED' ORDER BY o.platform_id`,
				pp.CountryCode, pp.PartyID, p.ID)
			if err != nil {
				return nil, err
			}
			for others.Next() {
				var id int64
				if err := others.Scan(&id); err != nil {
					others.Close()
					return nil, err
				}
				pp.ConflictWith = append(pp.ConflictWith, id)
			}
			others.Close()
			if err := others.Err(); err != nil {
				return nil, err
			}
		}
		out = append(out, peer)
	}
	return out, nil
}

// peerRegistered schedules the pull of a new peer hub's HubClientInfo,
// inside the transaction of its registration (nothing for other roles).
func (s *Service) peerRegistered(ctx context.Context, tx *store.Tx, id int64, roles []ocpi.CredentialsRole) error {
	if s.jobs == nil || !slices.ContainsFunc(roles, func(r ocpi.CredentialsRole) bool { return Role(r.Role) == RoleHUB }) {
		return nil
	}
	_, err := s.jobs.InsertTx(ctx, tx, PeerSyncArgs{PlatformID: id}, &river.InsertOpts{Queue: jobs.QueuePush, MaxAttempts: 10})
	return err
}

// peerReconnected pulls the HubClientInfo of a peer hub that answers again
// (what changed while it was OFFLINE): a ReconnectFuncs entry.
func (s *Service) peerReconnected(ctx context.Context, id int64) {
	p, err := s.Find(ctx, id)
	if err != nil || !isPeerHub(p.Roles) {
		return
	}
	if _, err := s.jobs.Insert(ctx, PeerSyncArgs{PlatformID: id}, &river.InsertOpts{Queue: jobs.QueuePush, MaxAttempts: 10}); err != nil {
		s.logger.WarnContext(ctx, "could not schedule the pull of a peer hub's parties", "platform_id", id, "error", err)
	}
}

// PeerSyncArgs is the job that pulls a peer hub's HubClientInfo.
type PeerSyncArgs struct {
	PlatformID int64 `json:"platform_id"`
}

// Kind implements river.JobArgs.
func (PeerSyncArgs) Kind() string { return "party_peer_sync" }

// peerSync works a PeerSyncArgs job.
func (s *Service) peerSync(ctx context.Context, a PeerSyncArgs) error {
	n, err := s.SyncPeer(ctx, a.PlatformID)
	if n > 0 {
		s.logger.InfoContext(ctx, "peer hub parties pulled", "platform_id", a.PlatformID, "changed", n)
	}
	if err != nil {
		return fmt.Errorf("pull the peer hub's HubClientInfo: %w", err)
	}
	return nil
}
