// Package clientinfo is the hub's HubClientInfo book (hubclientinfo.md): the client_info rows (every party we
// know and its ConnectionStatus), the party.status_changed event of each change, the push of a change to every
// connected platform with the receiver (a River job), and the sender's list. party.Service carries a Book, so
// its ListClientInfo and GetClientInfo are the registry's; the registry tells it of changes through
// ClientInfoChanged inside its own transactions and gives it, at construction, the one thing it needs of the
// platform rows: where and how to reach a platform (Config.Target).
package clientinfo

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party/ident"
	"github.com/ocpihub/ocpihub/internal/store"
)

// ConnectionStatus values of HubClientInfo (hubclientinfo.md §2).
const (
	Connected = "CONNECTED"
	Offline   = "OFFLINE"
	Planned   = "PLANNED"
	Suspended = "SUSPENDED"
)

// ClientInfo is the HubClientInfo object.
type ClientInfo struct {
	PartyID     string        `json:"party_id"`
	CountryCode string        `json:"country_code"`
	Role        string        `json:"role"`
	Status      string        `json:"status"`
	LastUpdated ocpi.DateTime `json:"last_updated"`
}

// Target is what a push needs of the platform it goes to.
type Target struct {
	ID      int64
	Name    string
	Version string
	// Base is the URL of the platform's hubclientinfo receiver.
	Base string
	// Auth opens the token we call the platform with (asked only when
	// there is something to send).
	Auth func() (ocpiclient.Auth, error)
}

// Config is what the book needs from the registry.
type Config struct {
	// Events receives party.status_changed (required).
	Events event.Emitter
	// Target returns where to push to a platform, or false when nothing is
	// to be sent to it now (gone, not CONNECTED, no receiver).
	Target func(ctx context.Context, platformID int64) (Target, bool, error)
	// Parties returns a platform's parties: its own roles and, for a peer
	// hub, the parties behind it (LoadClientInfo leaves them out).
	Parties func(ctx context.Context, q store.Querier, platformID int64) ([]ident.PartyRef, error)
}

// Book keeps the HubClientInfo rows and pushes their changes.
type Book struct {
	db     *store.DB
	jobs   *jobs.Client
	client *ocpiclient.Client
	clock  clock.Clock
	logger *slog.Logger
	cfg    Config
}

// New returns a Book and, when jc is set, registers its push worker.
func New(db *store.DB, jc *jobs.Client, client *ocpiclient.Client, clk clock.Clock, logger *slog.Logger, cfg Config) *Book {
	b := &Book{db: db, jobs: jc, client: client, clock: clk, logger: logger, cfg: cfg}
	if jc != nil {
		jobs.AddWorker(jc, jobs.Func(b.push))
		jobs.AddWorker(jc, jobs.CountedTask[PlannedSweepArgs](b.WithdrawPlanned))
	}
	return b
}

// ClientInfoChanged records the HubClientInfo status of parties and, for each
// one that changed, enqueues a push to every connected platform that has the
// hubclientinfo receiver (except the platform the parties belong to).
func (b *Book) ClientInfoChanged(ctx context.Context, tx *store.Tx, self int64, refs []ident.PartyRef, status string) error {
	now := b.clock.Now().UnixMicro()
	var changed []ident.PartyRef
	for _, r := range refs {
		var prev string
		err := tx.QueryRow(ctx, "SELECT status FROM client_info WHERE role = $1 AND country_code = $2 AND party_id = $3",
			string(r.Role), ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID)).Scan(&prev)
		if err != nil && !errors.Is(err, store.ErrNoRows) {
			return err
		}
		if prev == status {
			continue
		}
		if _, err := tx.Exec(ctx, `INSERT INTO client_info (role, country_code, party_id, status, last_updated) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (role, country_code, party_id) DO UPDATE SET status = excluded.status, last_updated = excluded.last_updated`,
			string(r.Role), ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), status, now); err != nil {
			return err
		}
		ci := ClientInfo{PartyID: ocpi.Key(r.PartyID), CountryCode: ocpi.Key(r.CountryCode), Role: string(r.Role), Status: status, LastUpdated: ocpi.FromMicros(now)}
		if err := b.cfg.Events.Emit(ctx, tx, event.Event{Name: event.PartyStatusChanged, Data: ci, Public: true,
			Parties: []event.Party{{Role: ci.Role, CountryCode: ci.CountryCode, PartyID: ci.PartyID}}}); err != nil {
			return err
		}
		changed = append(changed, r)
	}
	return b.EnqueueClientInfo(ctx, tx, self, changed, 0)
}

// EnqueueClientInfo enqueues a push of the ClientInfo of each party to every
// connected platform that has the hubclientinfo receiver (except self).
// withdrawnAt is set for parties no longer listed (WithdrawPlanned).
func (b *Book) EnqueueClientInfo(ctx context.Context, tx *store.Tx, self int64, changed []ident.PartyRef, withdrawnAt int64) error {
	if len(changed) == 0 || b.jobs == nil {
		return nil
	}
	rows, err := tx.Query(ctx, "SELECT id, endpoints FROM platforms WHERE status = $1 AND connection = $2 AND id <> $3",
		string(ident.StatusConnected), Connected, self)
	if err != nil {
		return err
	}
	var targets []int64
	for rows.Next() {
		var id int64
		var eps []byte
		if err := rows.Scan(&id, &eps); err != nil {
			rows.Close()
			return err
		}
		if hasEndpoint(eps, "hubclientinfo", ocpi.InterfaceReceiver) {
			targets = append(targets, id)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range targets {
		for _, r := range changed {
			args := PushArgs{PlatformID: t, Role: string(r.Role), CountryCode: ocpi.Key(r.CountryCode), PartyID: ocpi.Key(r.PartyID), WithdrawnAt: withdrawnAt}
			if _, err := b.jobs.InsertTx(ctx, tx, args, &river.InsertOpts{Queue: jobs.QueuePush, MaxAttempts: 10}); err != nil {
				return err
			}
		}
	}
	return nil
}

// ListClientInfo is the HubClientInfo sender: every party we know (ours,
// our partners', and those behind peer hubs), paged, as platform forID sees
// it: a peer hub is not told about the parties it lists itself (loop rule).
func (b *Book) ListClientInfo(ctx context.Context, forID int64, p ocpi.PageRequest) ([]ClientInfo, ocpi.Page, error) {
	l := store.List{Table: "client_info", Columns: "pk, last_updated, role, country_code, party_id, status"}
	if forID != 0 {
		l.Where = []string{`NOT EXISTS (SELECT 1 FROM peer_parties pp WHERE pp.platform_id = $1
			AND pp.country_code = client_info.country_code AND pp.party_id = client_info.party_id)`}
		l.Args = []any{forID}
	}
	l = l.WithPage(p)
	var page ocpi.Page
	total, err := l.Count(ctx, b.db.ReadIn(ctx))
	if err != nil {
		return nil, page, err
	}
	page.Total = total
	rows, err := l.Query(ctx, b.db.ReadIn(ctx))
	if err != nil {
		return nil, page, err
	}
	defer rows.Close()
	out := []ClientInfo{}
	var pk, lu int64
	for rows.Next() {
		var ci ClientInfo
		if err := rows.Scan(&pk, &lu, &ci.Role, &ci.CountryCode, &ci.PartyID, &ci.Status); err != nil {
			return nil, page, err
		}
		ci.LastUpdated = ocpi.FromMicros(lu)
		out = append(out, ci)
	}
	if len(out) > 0 {
		page.Last = &ocpi.Cursor{LastUpdated: lu, Key: pk}
	}
	return out, page, rows.Err()
}

// GetClientInfo is our HubClientInfo receiver's GET of one party, for a
// peer hub: the ClientInfo as we hold it. A party the peer hub lists is
// answered as the peer reported it (what it stored with us, not an echo of
// our view); any other party as our own HubClientInfo lists it. Like the
// PUT, only a platform with the HUB role may ask (404 for anyone else), and
// a party we do not know is 404.
func (b *Book) GetClientInfo(ctx context.Context, c *ident.Caller, cc, pid string) (ClientInfo, error) {
	var ci ClientInfo
	if c == nil || c.Kind != ident.CallerPlatform || !c.HasRole(ident.RoleHUB) {
		return ci, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: "not found: only a platform registered with the HUB role reads HubClientInfo objects"}
	}
	cc, pid = ocpi.Key(cc), ocpi.Key(pid)
	q := b.db.ReadIn(ctx)
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

// LoadClientInfo enqueues, inside tx, a push of the ClientInfo of up to limit
// parties (client_info rows after the cursor, in pk order) to one platform:
// the initial load of a new hubclientinfo receiver. The platform's own
// parties are left out, and for a peer hub the parties behind it (the loop
// rule: what a peer hub told us is never told back to it). last is the
// cursor to continue from; done is true when nothing is left after it.
func (b *Book) LoadClientInfo(ctx context.Context, tx *store.Tx, platformID, after int64, limit int) (last int64, sent int, done bool, err error) {
	own, err := b.cfg.Parties(ctx, tx, platformID)
	if err != nil {
		return after, 0, false, err
	}
	rows, err := tx.Query(ctx, "SELECT pk, role, country_code, party_id FROM client_info WHERE pk > $1 ORDER BY pk LIMIT $2", after, limit+1)
	if err != nil {
		return after, 0, false, err
	}
	var todo []PushArgs
	last = after
	n, more := 0, false
	for rows.Next() {
		if n == limit {
			more = true // one more than a batch exists
			break
		}
		var pk int64
		var a PushArgs
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
		if _, err := b.jobs.InsertTx(ctx, tx, a, &river.InsertOpts{Queue: jobs.QueuePush, MaxAttempts: 10}); err != nil {
			return after, 0, false, err
		}
	}
	return last, len(todo), !more, nil
}

// PushArgs is a job: PUT the current ClientInfo of one party to one
// platform. The worker reads the status when it runs, so pushes that pile up
// for an unreachable platform deliver the latest state.
type PushArgs struct {
	PlatformID  int64  `json:"platform_id"`
	Role        string `json:"role"`
	CountryCode string `json:"country_code"`
	PartyID     string `json:"party_id"`
	// WithdrawnAt (Unix µs) is set when the party was withdrawn from the
	// list (a PLANNED party that will not come): if it is still absent
	// when the job runs, the platform gets it as SUSPENDED, last_updated
	// then.
	WithdrawnAt int64 `json:"withdrawn_at,omitempty"`
}

// Kind implements river.JobArgs.
func (PushArgs) Kind() string { return "party_clientinfo_push" }

func (b *Book) push(ctx context.Context, a PushArgs) error {
	t, ok, err := b.cfg.Target(ctx, a.PlatformID)
	if err != nil || !ok {
		return err
	}
	var ci ClientInfo
	var lu int64
	err = b.db.ReadIn(ctx).QueryRow(ctx, "SELECT role, country_code, party_id, status, last_updated FROM client_info WHERE role = $1 AND country_code = $2 AND party_id = $3",
		a.Role, a.CountryCode, a.PartyID).Scan(&ci.Role, &ci.CountryCode, &ci.PartyID, &ci.Status, &lu)
	if errors.Is(err, store.ErrNoRows) {
		if a.WithdrawnAt == 0 {
			return nil
		}
		ci = ClientInfo{Role: a.Role, CountryCode: a.CountryCode, PartyID: a.PartyID, Status: Suspended}
		lu, err = a.WithdrawnAt, nil
	}
	if err != nil {
		return err
	}
	ci.LastUpdated = ocpi.FromMicros(lu)
	ci.Role = string(ident.RoleFor(t.Version, ident.Role(ci.Role)))
	auth, err := t.Auth()
	if err != nil {
		return err
	}
	u := t.Base + "/" + url.PathEscape(ci.CountryCode) + "/" + url.PathEscape(ci.PartyID)
	_, err = b.client.Call(ctx, ocpiclient.Request{Method: http.MethodPut, URL: u, Token: auth.Token, Base64: auth.Base64, Body: ci, MaxAttempts: 1,
		PlatformID: t.ID, Partner: t.Name}, nil)
	return err
}

func hasEndpoint(raw []byte, identifier, role string) bool {
	var d ocpi.VersionDetails
	if err := json.Unmarshal(raw, &d.Endpoints); err != nil {
		return false
	}
	_, ok := d.Find(identifier, role)
	return ok
}
