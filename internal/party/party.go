// Package party is the registry of connected OCPI platforms: their roles, the
// credentials token pair, the version we speak with each, their endpoints, and
// the registration handshake in both directions (credentials.md).
//
// A platform is one credentials connection; it hosts one or more parties
// (role + country_code + party_id). Tokens partners call us with are stored as
// SHA-256 hashes only; tokens we call them with are encrypted with AES-GCM
// when a secret key is configured.
//
// Where the spec is silent, the registry decides as follows:
//   - A failed registration stores nothing and leaves token A usable until it
//     expires (the partner fixes its side and retries); token A dies only with
//     a successful POST.
//   - A country code and party id belong to one platform at a time, whatever
//     the role, and never to a partner when they are one of ours. Invitations
//     may be bound to parties; those are announced as PLANNED.
//   - Our credentials list the HUB role and our own EMSP role
//     (credentials.md §8).
//   - Suspension is the operator's: the platform's tokens get 401 everywhere,
//     nothing is sent to it, its parties are SUSPENDED in HubClientInfo until
//     it is resumed. Unregistering (either side) releases its parties; coming
//     back takes a new token A and makes a new platform (the old one stays as
//     UNREGISTERED history).
//   - HubClientInfo lists every party, the caller's own included; pushes go to
//     CONNECTED platforms with the receiver on every change, never to the
//     party's own platform; a new partner pulls the list.
package party

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
	"github.com/ocpihub/ocpihub/internal/party/health"
	"github.com/ocpihub/ocpihub/internal/sealbox"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Config is what the registry needs to know about ocpihub itself.
type Config struct {
	// PublicURL is the base URL partners reach us at.
	PublicURL *url.URL
	// Versions are the OCPI versions we speak, newest first.
	Versions []string
	// ConnectVersions are the versions the hub picks from when it starts a
	// handshake itself (default Versions).
	ConnectVersions []string
	// VersionRoles reserves a version to some roles: a partner registering
	// on it with another role gets 3002 (a version without an entry is open
	// to every role).
	VersionRoles map[string][]Role
	// Own are ocpihub's own parties (the HUB role and the EMSP role) as we
	// present them in our credentials.
	Own []ocpi.CredentialsRole
	// SecretKey encrypts the tokens we hold for partners ("" = stored plain).
	SecretKey string
	// AdminToken is the operator's token; when empty, one is generated at
	// first start and only its hash is kept.
	AdminToken string
	// AdminTokenHash, when set, is the SHA-256 (hex) of the admin token of
	// another instance whose token this one accepts too (the sandbox takes
	// production's, so one admin token serves both).
	AdminTokenHash string
	// Sandbox marks the sandbox instance.
	Sandbox bool
	// InvitationTTL is how long a token A lives by default (72h).
	InvitationTTL time.Duration
	// RegisterBackWait bounds how long Connect waits for a partner that
	// answered our credentials POST with an empty 2xx to register back
	// (default DefaultRegisterBackWait).
	RegisterBackWait time.Duration
	// Required lists the modules a partner must offer, per role, beyond
	// credentials (registration fails with 3003 otherwise).
	Required map[Role][]RequiredEndpoint
	// Events receives party.status_changed whenever a party's HubClientInfo
	// status changes, in the transaction of the change (default: discarded).
	Events event.Emitter
	// HealthFailures and HealthLag judge a receiver DEGRADED (party/health;
	// defaults DefaultHealthFailures and DefaultHealthLag).
	HealthFailures int
	HealthLag      time.Duration
}

// RequiredEndpoint is a module and interface role a partner must offer.
type RequiredEndpoint struct {
	Identifier string
	Role       string
}

// DefaultRequired is the default registration requirement: an eMSP must
// offer tokens SENDER. A CPO without locations SENDER is registered as
// push-only (lenient.go).
var DefaultRequired = map[Role][]RequiredEndpoint{
	RoleEMSP: {{"tokens", ocpi.InterfaceSender}},
}

// Service manages platforms.
type Service struct {
	db     *store.DB
	jobs   *jobs.Client
	client *ocpiclient.Client
	clock  clock.Clock
	logger *slog.Logger
	cfg    Config
	box    *sealbox.Box
	// adminHash is the SHA-256 of the admin token.
	adminHash string
	// NewTokenFunc makes credentials tokens; tests may replace it.
	NewTokenFunc func() string
	// touched throttles last_seen_at writes: at most one per platform per
	// minute.
	touched *touchCache
	// callers remembers the platforms' tokens for a second (callers.go).
	callers *callerCache
	// hosts remembers FindByParty's connected platforms (callers.go).
	hosts *hostCache
	// roles remembers the parties of a role, for Hosts (callers.go).
	roles *roleCache
	// ReconnectFuncs run when a platform that was OFFLINE answers again (the
	// directory resyncs it). Set them while wiring, before Start.
	ReconnectFuncs []func(ctx context.Context, platformID int64)
	// ConnectedFuncs run inside the transaction that connects a platform or
	// changes its endpoints (the hub plans the initial load of the
	// receivers it gained). Set them while wiring, before Start.
	ConnectedFuncs []ConnectedFunc
	// Tracker is the receivers' delivery health (party/health): its
	// RecordDelivery, Health and HealthOf are the registry's.
	*health.Tracker
	// Book is the HubClientInfo book (party/clientinfo): its
	// ListClientInfo, GetClientInfo and ClientInfoChanged are the
	// registry's.
	*clientinfo.Book
}

// New returns a Service. Call Init once the database is migrated.
func New(db *store.DB, jc *jobs.Client, client *ocpiclient.Client, clk clock.Clock, logger *slog.Logger, cfg Config) (*Service, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if len(cfg.Versions) == 0 {
		cfg.Versions = []string{"2.2.1"}
	}
	if cfg.InvitationTTL == 0 {
		cfg.InvitationTTL = 72 * time.Hour
	}
	if cfg.Required == nil {
		cfg.Required = DefaultRequired
	}
	if cfg.Events == nil {
		cfg.Events = event.Discard{}
	}
	box, err := sealbox.New(cfg.SecretKey)
	if err != nil {
		return nil, err
	}
	s := &Service{db: db, jobs: jc, client: client, clock: clk, logger: logger, cfg: cfg, box: box,
		NewTokenFunc: newToken, touched: newTouchCache(), callers: newCallerCache(), hosts: newHostCache(),
		roles: newRoleCache()}
	// Another replica's change forgets them here too (store.Listen).
	db.OnNotify(notifyParties, s.forgetCallers)
	s.Tracker = health.New(db, clk, logger, health.Config{Failures: cfg.HealthFailures, Lag: cfg.HealthLag, Events: cfg.Events, Describe: describe})
	s.Book = clientinfo.New(db, jc, client, clk, logger, clientinfo.Config{Events: cfg.Events, Target: s.clientInfoTarget, Parties: partiesOf})
	if jc != nil {
		jobs.AddWorker(jc, jobs.Task[LivenessArgs](s.CheckLiveness))
		jobs.AddWorker(jc, jobs.Func(s.peerSync))
		s.ReconnectFuncs = append(s.ReconnectFuncs, s.peerReconnected)
	}
	return s, nil
}

// Platform is a connected (or once connected) OCPI platform.
type Platform struct {
	ID            int64           `json:"id"`
	Name          string          `json:"name"`
	Status        Status          `json:"status"`
	Connection    string          `json:"connection"`
	Version       string          `json:"version"`
	VersionsURL   string          `json:"versions_url"`
	Endpoints     []ocpi.Endpoint `json:"endpoints"`
	Roles         []HostedParty   `json:"roles"`
	TokenBase64   bool            `json:"token_base64"`
	Sandbox       bool            `json:"sandbox"`
	InitiatedByUs bool            `json:"initiated_by_us"`
	LastSeenAt    *ocpi.DateTime  `json:"last_seen_at,omitempty"`
	LastError     string          `json:"last_error,omitempty"`
	// PushOnly marks a CPO platform without a locations SENDER: the hub
	// never pulls from it (lenient.go).
	PushOnly bool `json:"push_only,omitempty"`
	// Warnings are what the partner registered that the hub tolerates but
	// the spec requires (lenient.go).
	Warnings  []string      `json:"warnings,omitempty"`
	CreatedAt ocpi.DateTime `json:"created_at"`
	UpdatedAt ocpi.DateTime `json:"updated_at"`
	// Health is the receiver's health from push outcomes (health.go), set
	// by AttachHealth for the admin API and the console; absent until
	// something was pushed to the platform.
	Health *health.Health `json:"health,omitempty"`

	tokenOut string // sealed
}

// HostedParty is a hosted party with its business details, as the admin API shows
// it.
type HostedParty struct {
	PartyRef
	BusinessDetails ocpi.BusinessDetails `json:"business_details"`
	// Represented marks a party behind a peer hub (peering.go), with the
	// ConnectionStatus the peer hub reported.
	Represented bool   `json:"represented,omitempty"`
	PeerStatus  string `json:"peer_status,omitempty"`
}

// Endpoint returns the URL of a module's interface, if the platform offers it.
func (p *Platform) Endpoint(identifier, role string) (string, bool) {
	return ocpi.VersionDetails{Endpoints: p.Endpoints}.Find(identifier, role)
}

// Refs returns the platform's parties.
func (p *Platform) Refs() []PartyRef {
	out := make([]PartyRef, len(p.Roles))
	for i, r := range p.Roles {
		out[i] = r.PartyRef
	}
	return out
}

const platformColumns = `id, name, status, connection, version, versions_url, endpoints, token_out, token_base64,
	sandbox, initiated_by_us, last_seen_at, last_error, created_at, updated_at`

// platformWithRoles selects platformColumns of platforms p with the
// parties of each (one row per party, NULLs for a platform without any),
// for a platform and its parties in one round trip.
var platformWithRoles = func() string {
	cols := strings.Split(platformColumns, ",")
	for i, c := range cols {
		cols[i] = "p." + strings.TrimSpace(c)
	}
	return "SELECT " + strings.Join(cols, ", ") + `, r.role, r.country_code, r.party_id, r.business_details
		FROM platforms p LEFT JOIN platform_roles r ON r.platform_id = p.id`
}()

func scanPlatform(row store.Row) (*Platform, error) { return scanPlatformAnd(row) }

// scanPlatformAnd scans platformColumns and then extra.
func scanPlatformAnd(row store.Row, extra ...any) (*Platform, error) {
	var p Platform
	var endpoints []byte
	var lastSeen, created, updated int64
	var status string
	err := row.Scan(append([]any{&p.ID, &p.Name, &status, &p.Connection, &p.Version, &p.VersionsURL, &endpoints, &p.tokenOut,
		&p.TokenBase64, &p.Sandbox, &p.InitiatedByUs, &lastSeen, &p.LastError, &created, &updated}, extra...)...)
	if err != nil {
		return nil, err
	}
	p.Status = Status(status)
	if p.Endpoints, err = decodeEndpoints(endpoints); err != nil {
		return nil, fmt.Errorf("platform %d endpoints: %w", p.ID, err)
	}
	if lastSeen > 0 {
		ls := ocpi.FromMicros(lastSeen)
		p.LastSeenAt = &ls
	}
	p.CreatedAt, p.UpdatedAt = ocpi.FromMicros(created), ocpi.FromMicros(updated)
	return &p, nil
}

// decodedEndpoints keeps endpoints documents decoded, by their exact text:
// every forwarded request reads its platform's row, and decoding the
// document was a third of that read. Keyed by the text, an entry is never
// stale; the map is emptied when it holds more documents than a hub has
// partners.
var decodedEndpoints = struct {
	sync.Mutex
	m map[string][]ocpi.Endpoint
}{m: map[string][]ocpi.Endpoint{}}

// maxDecodedEndpoints bounds decodedEndpoints.
const maxDecodedEndpoints = 4096

// decodeEndpoints decodes a platform's endpoints column. The slice is
// shared by every platform read with the same text: read it, never write
// into it (its capacity is its length, so an append copies).
func decodeEndpoints(raw []byte) ([]ocpi.Endpoint, error) {
	decodedEndpoints.Lock()
	eps, ok := decodedEndpoints.m[string(raw)]
	decodedEndpoints.Unlock()
	if ok {
		return eps, nil
	}
	if err := json.Unmarshal(raw, &eps); err != nil {
		return nil, err
	}
	eps = slices.Clip(eps)
	decodedEndpoints.Lock()
	if len(decodedEndpoints.m) >= maxDecodedEndpoints {
		clear(decodedEndpoints.m)
	}
	decodedEndpoints.m[string(raw)] = eps
	decodedEndpoints.Unlock()
	return eps, nil
}

// Find returns a platform by id, with its roles.
func (s *Service) Find(ctx context.Context, id int64) (*Platform, error) {
	return findPlatform(ctx, s.db.ReadIn(ctx), id)
}

// findPlatform reads a platform and the parties it hosts in one query (and,
// for a peer hub, those it represents in a second).
func findPlatform(ctx context.Context, q store.Querier, id int64) (*Platform, error) {
	p, err := readPlatform(ctx, q, platformWithRoles+" WHERE p.id = $1 ORDER BY r.role, r.country_code, r.party_id", id)
	if errors.Is(err, store.ErrNoRows) {
		return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: fmt.Sprintf("platform %d not found", id)}
	}
	return p, err
}

// readPlatform reads the rows of one platform selected with
// platformWithRoles, in role order: the platform and its parties.
// store.ErrNoRows when there are none.
func readPlatform(ctx context.Context, q store.Querier, query string, args ...any) (*Platform, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var p *Platform
	for rows.Next() {
		var role, cc, pid *string
		var bd []byte
		cur, err := scanPlatformAnd(rows, &role, &cc, &pid, &bd)
		if err != nil {
			rows.Close()
			return nil, err
		}
		if p == nil {
			p = cur
		}
		if role == nil {
			continue // a platform that hosts no party yet
		}
		var r HostedParty
		r.Role, r.CountryCode, r.PartyID = Role(*role), *cc, *pid
		if err := json.Unmarshal(bd, &r.BusinessDetails); err != nil {
			rows.Close()
			return nil, err
		}
		p.Roles = append(p.Roles, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if p == nil {
		return nil, store.ErrNoRows
	}
	if p.Roles, err = withRepresented(ctx, q, p.ID, p.Roles); err != nil {
		return nil, err
	}
	p.annotate()
	return p, nil
}

// loadRoles reads the parties p hosts and, for a peer hub, those it
// represents.
func (p *Platform) loadRoles(ctx context.Context, q store.Querier) error {
	var err error
	if p.Roles, err = platformRoles(ctx, q, p.ID); err != nil {
		return err
	}
	if p.Roles, err = withRepresented(ctx, q, p.ID, p.Roles); err != nil {
		return err
	}
	p.annotate()
	return nil
}

func platformRoles(ctx context.Context, q store.Querier, id int64) ([]HostedParty, error) {
	return store.QueryAll(ctx, q, func(row store.Row) (HostedParty, error) {
		var r HostedParty
		var role string
		var bd []byte
		if err := row.Scan(&role, &r.CountryCode, &r.PartyID, &bd); err != nil {
			return r, err
		}
		r.Role = Role(role)
		return r, json.Unmarshal(bd, &r.BusinessDetails)
	}, "SELECT role, country_code, party_id, business_details FROM platform_roles WHERE platform_id = $1 ORDER BY role, country_code, party_id", id)
}

// Filter selects platforms in List.
type Filter struct {
	Status []Status
}

// List returns platforms, newest first.
func (s *Service) List(ctx context.Context, f Filter) ([]*Platform, error) {
	q := s.db.ReadIn(ctx)
	query := "SELECT " + platformColumns + " FROM platforms"
	var args []any
	if len(f.Status) > 0 {
		ph := make([]string, len(f.Status))
		for i, st := range f.Status {
			args = append(args, string(st))
			ph[i] = fmt.Sprintf("$%d", i+1)
		}
		query += " WHERE status IN (" + strings.Join(ph, ", ") + ")"
	}
	out, err := store.QueryAll(ctx, q, scanPlatform, query+" ORDER BY id DESC", args...)
	if err != nil {
		return nil, err
	}
	for _, p := range out {
		if err := p.loadRoles(ctx, q); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// FindByParty returns the connected platform hosting cc/pid in role (any
// role when role is empty): the party's own platform, else the peer hub
// that represents it.
//
// A CONNECTED platform found is remembered for rememberTTL, as callers are
// (callers.go), and answered from memory inside a transaction too: a
// session's transaction routes its change to its token's eMSP, and on
// PostgreSQL that read was a round trip of its own while the session's row
// was locked. A transaction that changes platforms (forgetAtCommit) reads
// the rows, through its own change, and remembers nothing of them.
func (s *Service) FindByParty(ctx context.Context, role Role, cc, pid string) (*Platform, error) {
	cache := true
	if tx := store.HeldTx(ctx); tx != nil && tx.WillNotify(notifyParties) {
		cache = false
	}
	key := string(role) + "/" + cc + "/" + pid
	now := s.clock.Now()
	if cache {
		if p, ok := s.hosts.get(key, now); ok {
			return p, nil
		}
	}
	gen := s.hosts.generation()
	p, err := s.findByParty(ctx, role, cc, pid)
	if err == nil && cache && p.Status == StatusConnected {
		s.hosts.put(key, p, gen, now)
	}
	return p, err
}

// findByParty is FindByParty's read.
func (s *Service) findByParty(ctx context.Context, role Role, cc, pid string) (*Platform, error) {
	q := s.db.ReadIn(ctx)
	// The platform row with the lookup of its id: one round trip.
	query, args := withRole("SELECT platform_id FROM platform_roles WHERE country_code = $1 AND party_id = $2", "role", role, cc, pid)
	p, err := readPlatform(ctx, q, platformWithRoles+" WHERE p.id = ("+query+" LIMIT 1) ORDER BY r.role, r.country_code, r.party_id", args...)
	if err == nil {
		return p, nil
	}
	if !errors.Is(err, store.ErrNoRows) {
		return nil, err
	}
	// A party behind a peer hub is reached through it (peering.go).
	id, err := peerFor(ctx, q, role, cc, pid)
	if err != nil {
		if errors.Is(err, store.ErrNoRows) {
			return nil, &ocpi.Error{Code: ocpi.ENOTFOUND, Message: fmt.Sprintf("no platform hosts %s/%s", cc, pid)}
		}
		return nil, err
	}
	return findPlatform(ctx, q, id)
}

// Hosts reports whether a platform hosts cc/pid in role (its own party, not
// one behind a peer hub).
//
// It answers from the role's parties, all read at once (one indexed read)
// and remembered for rememberTTL as callers are (callers.go), inside a
// transaction too: every session and CDR asks it, in the transaction that
// stores them, whether its token's owner is a PTP (payment.linkChange), and
// on PostgreSQL that read was a round trip of its own while the transaction
// held its locks. A transaction that changes platforms forgets at its commit
// (forgetAtCommit), so inside it the rows are read (store.Tx.WillNotify);
// so they are for a role with more than rememberMax parties.
//
// Decision: the payment link may miss, for up to rememberTTL, a PTP that
// another process (the CLI on SQLite, a replica whose notification did not
// arrive) registered. A payment needs the PTP registered before its token is
// used, and a session or CDR of that token comes minutes after.
func (s *Service) Hosts(ctx context.Context, role Role, cc, pid string) (bool, error) {
	if tx := store.HeldTx(ctx); tx != nil && tx.WillNotify(notifyParties) {
		return s.hostsRow(ctx, role, cc, pid)
	}
	now := s.clock.Now()
	set, ok := s.roles.get(string(role), now)
	if !ok {
		gen := s.roles.generation()
		read, err := s.readRole(ctx, role)
		if err != nil {
			return false, err
		}
		s.roles.put(string(role), &read, gen, now)
		set = &read
	}
	if set.parties == nil {
		return s.hostsRow(ctx, role, cc, pid)
	}
	_, ok = set.parties[partyKey(cc, pid)]
	return ok, nil
}

// readRole reads the parties of role (Hosts).
func (s *Service) readRole(ctx context.Context, role Role) (roleSet, error) {
	keys, err := store.QueryAll(ctx, s.db.ReadIn(ctx), func(r store.Row) (string, error) {
		var cc, pid string
		err := r.Scan(&cc, &pid)
		return partyKey(cc, pid), err
	}, "SELECT country_code, party_id FROM platform_roles WHERE role = $1 ORDER BY country_code, party_id LIMIT $2",
		string(role), rememberMax+1)
	if err != nil || len(keys) > rememberMax {
		return roleSet{}, err
	}
	set := roleSet{parties: make(map[string]struct{}, len(keys))}
	for _, k := range keys {
		set.parties[k] = struct{}{}
	}
	return set, nil
}

// hostsRow is Hosts read from the database: a single indexed read.
func (s *Service) hostsRow(ctx context.Context, role Role, cc, pid string) (bool, error) {
	var one int
	err := s.db.ReadIn(ctx).QueryRow(ctx, "SELECT 1 FROM platform_roles WHERE role = $1 AND country_code = $2 AND party_id = $3",
		string(role), ocpi.Key(cc), ocpi.Key(pid)).Scan(&one)
	if errors.Is(err, store.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// Auth returns the token and encoding we call the platform with.
func (s *Service) Auth(p *Platform) (ocpiclient.Auth, error) {
	tok, err := s.box.Open(p.tokenOut)
	if err != nil {
		return ocpiclient.Auth{}, fmt.Errorf("platform %d token: %w", p.ID, err)
	}
	return ocpiclient.Auth{Token: tok, Base64: p.TokenBase64}, nil
}

// Versions returns the versions we speak.
func (s *Service) Versions() []string { return s.cfg.Versions }

// VersionsURL returns our versions URL.
func (s *Service) VersionsURL() string {
	u := *s.cfg.PublicURL
	u.Path = strings.TrimRight(u.Path, "/") + "/ocpi/versions"
	return u.String()
}

// Own returns ocpihub's own parties.
func (s *Service) Own() []ocpi.CredentialsRole { return s.cfg.Own }

// OwnParty returns our own party in role.
func (s *Service) OwnParty(role Role) (PartyRef, bool) {
	for _, r := range s.cfg.Own {
		if Role(r.Role) == role {
			return PartyRef{Role: role, CountryCode: r.CountryCode, PartyID: r.PartyID}, true
		}
	}
	return PartyRef{}, false
}

func (s *Service) now() int64 { return s.clock.Now().UnixMicro() }
