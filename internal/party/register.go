package party

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Invitation is a one-time registration token (token A) and where to use it.
type Invitation struct {
	ID          int64         `json:"id"`
	Name        string        `json:"name"`
	Token       string        `json:"token"`
	VersionsURL string        `json:"versions_url"`
	ExpiresAt   ocpi.DateTime `json:"expires_at"`
	Sandbox     bool          `json:"sandbox,omitempty"`
	// Parties are the parties the token was issued for (empty: any party not
	// registered yet).
	Parties []PartyRef `json:"parties,omitempty"`
}

// Invite creates a token A for a partner to register with. Only its hash is
// stored; the token is in the returned value and nowhere else.
//
// When parties are given, the invitation is bound to them: the partner may
// register only those parties, and until it does they are announced to
// connected platforms as PLANNED in HubClientInfo (hubclientinfo.md §2:
// "no connection yet") — until the invitation closes without them
// (WithdrawPlanned). Without parties the partner may register any party
// that no platform holds (the operator checks the result with party show).
func (s *Service) Invite(ctx context.Context, name string, ttl time.Duration, sandbox bool, parties ...PartyRef) (*Invitation, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, ocpi.Invalid("name", "is required")
	}
	if len(name) > 100 {
		return nil, ocpi.Invalid("name", "is longer than 100 characters")
	}
	if ttl <= 0 {
		ttl = s.cfg.InvitationTTL
	}
	planned, err := checkParties(parties)
	if err != nil {
		return nil, err
	}
	tok := s.NewTokenFunc()
	now := s.clock.Now()
	inv := &Invitation{Name: name, Token: tok, VersionsURL: s.VersionsURL(), ExpiresAt: ocpi.NewDateTime(now.Add(ttl)), Sandbox: sandbox, Parties: planned}
	var partiesJSON any
	if len(planned) > 0 {
		b, _ := json.Marshal(planned)
		partiesJSON = string(b)
	}
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := s.checkRoleConflicts(ctx, tx, 0, "parties", planned); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `INSERT INTO invitations (name, token_hash, sandbox, created_at, expires_at, parties)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, name, hashToken(tok), sandbox, now.UnixMicro(), now.Add(ttl).UnixMicro(), partiesJSON).Scan(&inv.ID); err != nil {
			return err
		}
		if err := s.ClientInfoChanged(ctx, tx, 0, planned, clientinfo.Planned); err != nil {
			return err
		}
		// A party already PLANNED is touched (re-inserted if a concurrent
		// withdrawal just removed it): WithdrawPlanned removes a row only as
		// it read it, so this invitation keeps its parties planned.
		for _, r := range planned {
			if _, err := tx.Exec(ctx, `INSERT INTO client_info (role, country_code, party_id, status, last_updated) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (role, country_code, party_id) DO UPDATE SET last_updated = excluded.last_updated WHERE client_info.status = excluded.status`,
				string(r.Role), r.CountryCode, r.PartyID, clientinfo.Planned, now.UnixMicro()); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return inv, nil
}

// checkParties validates the parties of an invitation and returns them with
// country code and party id in upper case.
func checkParties(parties []PartyRef) ([]PartyRef, error) {
	chk := ocpi.NewCheck("")
	out := make([]PartyRef, 0, len(parties))
	for i, p := range parties {
		sub := chk.Index("parties", i)
		sub.Enum("role", string(p.Role), Roles, true)
		sub.CountryCode("country_code", p.CountryCode, true)
		sub.PartyID("party_id", p.PartyID, true)
		chk.Merge(sub)
		ref := PartyRef{Role: p.Role, CountryCode: ocpi.Key(p.CountryCode), PartyID: ocpi.Key(p.PartyID)}
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	return out, chk.Err()
}

// acceptedRoles are the Role values we accept in a partner's credentials.
func acceptedRoles() []string { return Roles }

// OurCredentials returns the credentials object we present: our versions URL,
// our own parties, and token (the token the partner calls us with).
//
// 2.2.1 says a hub lists only its HUB role; ocpihub is also an eMSP of its
// own, and lists that role too (credentials.md §8: the smaller deviation).
func (s *Service) OurCredentials(token string) ocpi.Credentials {
	return ocpi.Credentials{Token: token, URL: s.VersionsURL(), Roles: s.cfg.Own}
}

// discovered is what we learn from a partner's versions and details.
type discovered struct {
	version     string
	versionsURL string
	endpoints   []ocpi.Endpoint
	base64      bool
}

// discover fetches a partner's versions and details with its token, for the
// version the partner chose, and checks the endpoints we need from its roles.
// Failures are the registration errors of credentials.md §3: 3001 when its API
// cannot be used, 3002 when it does not offer the version, 3003 when
// endpoints are missing.
//
// The token goes in the encoding the partner itself used to call us
// (base64First); when the partner answers 401/403 the other encoding is tried
// once, and the one that worked is what we call the partner with from then
// on (transport.md §9.1: per-peer encoding).
func (s *Service) discover(ctx context.Context, versionsURL, token, version string, roles []Role, base64First bool) (*discovered, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if !slices.Contains(s.cfg.Versions, version) {
		return nil, &ocpi.Error{Code: ocpi.EUNSUPPORTEDVER, Message: fmt.Sprintf("OCPI %s is not a version this hub speaks; it speaks %s (see GET /ocpi/versions)",
			version, strings.Join(s.cfg.Versions, ", "))}
	}
	if v211.IsLegacy(version) {
		// Legacy versions send the token raw (transport.md §9.1).
		base64First = false
	}
	auth := ocpiclient.Auth{Token: token, Base64: base64First}
	vs, err := s.client.Versions(ctx, versionsURL, auth)
	if err != nil && isUnauthorized(err) {
		auth.Base64 = !auth.Base64
		vs, err = s.client.Versions(ctx, versionsURL, auth)
	}
	if err != nil {
		return nil, &ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "could not read your versions at " + versionsURL + " with the token you sent: " + s.describe(ctx, err), Err: err}
	}
	v, ok := ocpiclient.Pick(vs, []string{version}, version)
	if !ok {
		var offered []string
		for _, x := range vs {
			offered = append(offered, x.Version)
		}
		return nil, &ocpi.Error{Code: ocpi.EUNSUPPORTEDVER, Message: fmt.Sprintf(
			"you registered through our %s credentials endpoint but your versions list offers %s; we speak %s",
			version, orNone(offered), strings.Join(s.cfg.Versions, ", "))}
	}
	d, err := s.client.VersionDetails(ctx, v.URL, auth)
	if err != nil {
		return nil, &ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "could not read your version details at " + v.URL + ": " + s.describe(ctx, err), Err: err}
	}
	if v211.IsLegacy(v.Version) && len(roles) == 1 {
		d.Endpoints = LegacyEndpoints(d.Endpoints, roles[0])
	}
	if err := s.requireEndpoints(d, roles, "your"); err != nil {
		return nil, err
	}
	return &discovered{version: v.Version, versionsURL: versionsURL, endpoints: d.Endpoints, base64: auth.Base64}, nil
}

// requireEndpoints is ENOENDPOINTS (3003) when d lacks endpoints we need from
// a platform with roles.
func (s *Service) requireEndpoints(d ocpi.VersionDetails, roles []Role, whose string) error {
	if missing := s.missingEndpoints(d, roles); len(missing) > 0 {
		return &ocpi.Error{Code: ocpi.ENOENDPOINTS, Message: whose + " version details lack endpoints we need: " + strings.Join(missing, ", ")}
	}
	return nil
}

func (s *Service) missingEndpoints(d ocpi.VersionDetails, roles []Role) []string {
	var missing []string
	if _, ok := d.Find("credentials", ""); !ok {
		missing = append(missing, "credentials")
	}
	for _, r := range roles {
		for _, req := range s.cfg.Required[r] {
			if _, ok := d.Find(req.Identifier, req.Role); !ok {
				m := req.Identifier + " " + req.Role + " (needed for role " + string(r) + ")"
				if !slices.Contains(missing, m) {
					missing = append(missing, m)
				}
			}
		}
	}
	return missing
}

func isUnauthorized(err error) bool {
	var e *ocpiclient.Error
	return errors.As(err, &e) && (e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden)
}

// Messages for calls to a partner's URL that got no usable answer.
const (
	unreachableMessage = "could not reach the partner's OCPI API there (no OCPI answer; the hub's operator log has the detail)"
	refusedMessage     = "the address is not one this hub may call (loopback, private and other internal addresses are refused)"
)

// describe is what a partner, or the operator in the admin API, is told of
// a failed call to a partner's URL; the detail goes to the operator's log.
// Whatever got no OCPI answer — a closed port, a timeout, a service that
// does not speak OCPI, an HTTP error without an envelope — reads the same,
// so the hub cannot be used to tell a closed port from a live service. An
// address the outbound guard refused says so: that tells only the hub's
// policy, and the guard refuses before connecting. An OCPI answer keeps its
// status, which is what the partner has to fix.
func (s *Service) describe(ctx context.Context, err error) string {
	s.logger.WarnContext(ctx, "call to a partner's URL failed", "error", err)
	if netguard.IsRefused(err) {
		return refusedMessage
	}
	var e *ocpiclient.Error
	if !errors.As(err, &e) || e.Response == nil || e.Response.Envelope == nil {
		return unreachableMessage
	}
	switch e.Kind {
	case ocpiclient.KindHTTP:
		return fmt.Sprintf("HTTP %d, status_code %d", e.Status, e.Response.Envelope.StatusCode)
	case ocpiclient.KindProtocol:
		if e.Err != nil {
			return e.Err.Error()
		}
	}
	return unreachableMessage
}

func orNone(v []string) string {
	if len(v) == 0 {
		return "no version"
	}
	return strings.Join(v, ", ")
}

func rolesOf(c ocpi.Credentials) []Role {
	out := make([]Role, 0, len(c.Roles))
	for _, r := range c.Roles {
		if !slices.Contains(out, Role(r.Role)) {
			out = append(out, Role(r.Role))
		}
	}
	return out
}

// Register is a partner's credentials POST with its token A (we are the
// server of the handshake). It calls the partner back with token B, stores
// the platform, and answers with our credentials and a new token C. Token A
// dies in the same transaction; of two concurrent POSTs with one token A, one
// registers and the other gets 401.
//
// A registration that fails (bad credentials, 3001, 3002, 3003, a party held
// by another platform) stores nothing and leaves token A usable until it
// expires, so the partner can fix its side and POST again: the spec kills
// token A only once the handshake succeeded (credentials.md §3 step 6).
func (s *Service) Register(ctx context.Context, caller *Caller, version string, in ocpi.Credentials) (*ocpi.Credentials, error) {
	switch caller.Kind {
	case CallerPlatform:
		if caller.Status == StatusPending {
			// A partner registering back during a handshake we started
			// (connect_back.go).
			return s.registerBack(ctx, caller, version, in)
		}
		return nil, &ocpi.Error{Code: ocpi.EMETHOD, Message: "already registered: use PUT to update the credentials or DELETE to unregister"}
	case CallerRegistering:
	default:
		return nil, &ocpi.Error{Code: ocpi.EMETHOD, Message: "only a partner holding a registration token (token A) can register"}
	}
	if err := checkCredentials(in); err != nil {
		return nil, err
	}
	if err := checkInvited(caller.Invited, in.Roles); err != nil {
		return nil, err
	}
	d, err := s.admit(ctx, s.db.ReadIn(ctx), 0, version, in, caller.TokenBase64)
	if err != nil {
		return nil, err
	}
	tokenC := s.NewTokenFunc()
	now := s.now()
	var id int64
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		n, err := tx.Exec(ctx, "UPDATE invitations SET used_at = $1 WHERE id = $2 AND used_at IS NULL AND expires_at > $1", now, caller.InvitationID)
		if err != nil {
			return err
		}
		if n != 1 {
			return unauthorized("this registration token (token A) has just been used or has expired")
		}
		if err := s.checkRoleConflicts(ctx, tx, 0, "roles", refsOf(in.Roles)); err != nil {
			return err
		}
		id, err = s.insertPlatform(ctx, tx, caller.Name, caller.Sandbox, false, d, in.Token, tokenC)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "UPDATE invitations SET platform_id = $1 WHERE id = $2", id, caller.InvitationID); err != nil {
			return err
		}
		return s.registered(ctx, tx, id, in.Roles)
	})
	if err != nil {
		return nil, err
	}
	s.logger.InfoContext(ctx, "platform registered", "name", caller.Name, "version", d.version, "roles", refsString(in.Roles), "token_base64", d.base64)
	c, err := s.CredentialsFor(ctx, d.version, tokenC, id)
	return &c, err
}

// checkInvited fails when an invitation bound to parties is used to register
// another party.
func checkInvited(invited []PartyRef, roles []ocpi.CredentialsRole) error {
	if len(invited) == 0 {
		return nil
	}
	for i, r := range roles {
		if !slices.ContainsFunc(invited, func(p PartyRef) bool { return p.Role == Role(r.Role) && p.Matches(r.CountryCode, r.PartyID) }) {
			return ocpi.Invalid(fmt.Sprintf("roles[%d]", i), fmt.Sprintf("%s %s/%s is not a party this registration token was issued for", r.Role, r.CountryCode, r.PartyID))
		}
	}
	return nil
}

// admit checks the roles of the credentials in a partner sent in version
// (allowed in that version, not another platform's: self is the partner's
// platform, 0 for a new one) and reads its versions and endpoints: what a
// registration or an update does before its transaction. The role check
// fails fast, before the partner is called; the transaction checks again.
func (s *Service) admit(ctx context.Context, q store.Querier, self int64, version string, in ocpi.Credentials, base64First bool) (*discovered, error) {
	if err := s.checkVersionRoles(version, in.Roles); err != nil {
		return nil, err
	}
	if err := checkLegacyRole(version, rolesOf(in)); err != nil {
		return nil, err
	}
	if err := s.checkRoleConflicts(ctx, q, self, "roles", refsOf(in.Roles)); err != nil {
		return nil, err
	}
	return s.discover(ctx, in.URL, in.Token, version, rolesOf(in), base64First)
}

// Update is a registered partner's credentials PUT: new token B, and maybe a
// new versions URL or version. Its versions and details are read again, a new
// token C is issued, and the old B and C stop working in the same transaction
// (a request with the old C that is already past authentication finishes;
// every later one gets 401). A failed update changes nothing: the old tokens
// keep working.
func (s *Service) Update(ctx context.Context, caller *Caller, version string, in ocpi.Credentials) (*ocpi.Credentials, error) {
	if caller.Kind != CallerPlatform {
		return nil, &ocpi.Error{Code: ocpi.EMETHOD, Message: "not registered: use POST with a registration token to register"}
	}
	if err := checkCredentials(in); err != nil {
		return nil, err
	}
	d, err := s.admit(ctx, s.db.ReadIn(ctx), caller.PlatformID, version, in, caller.TokenBase64)
	if err != nil {
		return nil, err
	}
	tokenC := s.NewTokenFunc()
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := s.checkRoleConflicts(ctx, tx, caller.PlatformID, "roles", refsOf(in.Roles)); err != nil {
			return err
		}
		before, err := endpointsOf(ctx, tx, caller.PlatformID)
		if err != nil {
			return err
		}
		endpoints, _ := json.Marshal(d.endpoints)
		// The partner just answered our discovery: it is reachable, whatever
		// the liveness check thought.
		now := s.now()
		s.forgetAtCommit(tx)
		n, err := tx.Exec(ctx, `UPDATE platforms SET token_in_hash = $1, token_next_hash = NULL, token_out = $2, token_base64 = $3,
			version = $4, versions_url = $5, endpoints = $6, status = $7, connection = $8, last_seen_at = $9, last_error = '', updated_at = $9
			WHERE id = $10 AND status = $7`,
			hashToken(tokenC), s.box.Seal(in.Token), d.base64, d.version, d.versionsURL, string(endpoints),
			string(StatusConnected), ClientConnected, now, caller.PlatformID)
		if err != nil {
			return err
		}
		if n != 1 {
			return &ocpi.Error{Code: ocpi.EMETHOD, Message: "not registered"}
		}
		return s.rolesChanged(ctx, tx, caller.PlatformID, in.Roles, ClientConnected, before)
	})
	if err != nil {
		return nil, err
	}
	if d.version != caller.Version {
		s.logger.InfoContext(ctx, "platform switched OCPI version", "platform_id", caller.PlatformID, "from", caller.Version, "to", d.version)
	}
	s.logger.InfoContext(ctx, "platform credentials updated", "platform_id", caller.PlatformID, "version", d.version)
	c, err := s.CredentialsFor(ctx, d.version, tokenC, caller.PlatformID)
	return &c, err
}

// Unregister is a partner's credentials DELETE: the platform is marked
// UNREGISTERED, its tokens stop working, and its parties are released.
func (s *Service) Unregister(ctx context.Context, caller *Caller) error {
	if caller.Kind != CallerPlatform {
		return &ocpi.Error{Code: ocpi.EMETHOD, Message: "not registered"}
	}
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		return s.unregister(ctx, tx, caller.PlatformID)
	})
}

func (s *Service) unregister(ctx context.Context, tx *store.Tx, id int64) error {
	s.forgetAtCommit(tx)
	roles, err := platformRoles(ctx, tx, id)
	if err == nil {
		roles, err = withRepresented(ctx, tx, id, roles)
	}
	if err != nil {
		return err
	}
	n, err := tx.Exec(ctx, `UPDATE platforms SET status = $1, token_in_hash = NULL, token_next_hash = NULL, token_out = '', updated_at = $2
		WHERE id = $3 AND status <> $1`, string(StatusUnregistered), s.now(), id)
	if err != nil {
		return err
	}
	if n != 1 {
		return &ocpi.Error{Code: ocpi.EMETHOD, Message: "not registered"}
	}
	refs := make([]PartyRef, len(roles))
	for i, r := range roles {
		refs[i] = r.PartyRef
	}
	if err := s.ClientInfoChanged(ctx, tx, id, refs, clientinfo.Suspended); err != nil {
		return err
	}
	_, err = tx.Exec(ctx, "DELETE FROM platform_roles WHERE platform_id = $1", id)
	return err
}

func (s *Service) insertPlatform(ctx context.Context, tx *store.Tx, name string, sandbox, byUs bool, d *discovered, tokenOut, tokenIn string) (int64, error) {
	s.forgetAtCommit(tx)
	endpoints, _ := json.Marshal(d.endpoints)
	now := s.now()
	var id int64
	err := tx.QueryRow(ctx, `INSERT INTO platforms (name, status, connection, version, versions_url, endpoints, token_in_hash, token_out,
		token_base64, sandbox, initiated_by_us, last_seen_at, created_at, updated_at)
		VALUES ($1, $2, 'CONNECTED', $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $11) RETURNING id`,
		name, string(StatusConnected), d.version, d.versionsURL, string(endpoints), hashToken(tokenIn), s.box.Seal(tokenOut),
		d.base64, sandbox, byUs, now).Scan(&id)
	return id, err
}

// checkRoleConflicts fails when a party is ours or is held by another
// platform. A country code and party id belong to one platform at a time,
// whatever the role: OCPI-to/from headers address parties without a role
// (transport.md §9.3), so two platforms sharing one would make routing and
// isolation ambiguous.
func (s *Service) checkRoleConflicts(ctx context.Context, q store.Querier, self int64, field string, refs []PartyRef) error {
	for i, r := range refs {
		for _, own := range s.cfg.Own {
			if r.Matches(own.CountryCode, own.PartyID) {
				return ocpi.Invalid(fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("%s/%s is the hub's own party", r.CountryCode, r.PartyID))
			}
		}
		var owner int64
		var name string
		err := q.QueryRow(ctx, `SELECT p.id, p.name FROM platform_roles r JOIN platforms p ON p.id = r.platform_id
			WHERE r.country_code = $1 AND r.party_id = $2 AND r.platform_id <> $3 LIMIT 1`,
			ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), self).Scan(&owner, &name)
		if errors.Is(err, store.ErrNoRows) {
			continue
		}
		if err != nil {
			return err
		}
		return ocpi.Invalid(fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("%s/%s is already registered by another platform", r.CountryCode, r.PartyID))
	}
	return nil
}

// registered records the parties of a platform newly registered either way
// (it registered with us, or we with it), inside the registration's tx: its
// roles, a peer hub's first sync, their HubClientInfo and ConnectedFuncs.
func (s *Service) registered(ctx context.Context, tx *store.Tx, id int64, roles []ocpi.CredentialsRole) error {
	if err := s.replaceRoles(ctx, tx, id, roles); err != nil {
		return err
	}
	if err := s.peerRegistered(ctx, tx, id, roles); err != nil {
		return err
	}
	if err := s.ClientInfoChanged(ctx, tx, id, refsOf(roles), ClientConnected); err != nil {
		return err
	}
	return s.connected(ctx, tx, id, nil)
}

// rolesChanged replaces the parties of a platform already registered,
// inside tx: the parties it no longer has are SUSPENDED in HubClientInfo,
// the ones it has take connection, and the ConnectedFuncs run with its
// endpoints before the change.
func (s *Service) rolesChanged(ctx context.Context, tx *store.Tx, id int64, roles []ocpi.CredentialsRole, connection string, before []ocpi.Endpoint) error {
	old, err := platformRoles(ctx, tx, id)
	if err != nil {
		return err
	}
	if err := s.replaceRoles(ctx, tx, id, roles); err != nil {
		return err
	}
	if gone := removedRefs(old, roles); len(gone) > 0 {
		if err := s.ClientInfoChanged(ctx, tx, id, gone, clientinfo.Suspended); err != nil {
			return err
		}
	}
	if err := s.ClientInfoChanged(ctx, tx, id, refsOf(roles), connection); err != nil {
		return err
	}
	return s.connected(ctx, tx, id, before)
}

// replaceRoles stores a platform's parties (country code and party id in upper
// case: they are CiStrings).
func (s *Service) replaceRoles(ctx context.Context, tx *store.Tx, id int64, roles []ocpi.CredentialsRole) error {
	s.forgetAtCommit(tx)
	if _, err := tx.Exec(ctx, "DELETE FROM platform_roles WHERE platform_id = $1", id); err != nil {
		return err
	}
	for _, r := range roles {
		bd, _ := json.Marshal(r.BusinessDetails)
		if _, err := tx.Exec(ctx, `INSERT INTO platform_roles (platform_id, role, country_code, party_id, business_details, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, id, r.Role, ocpi.Key(r.CountryCode), ocpi.Key(r.PartyID), string(bd), s.now()); err != nil {
			if store.IsUniqueViolation(err) {
				return ocpi.Invalid("roles", fmt.Sprintf("%s %s/%s is already registered by another platform", r.Role, r.CountryCode, r.PartyID))
			}
			return err
		}
	}
	return nil
}

func refsOf(roles []ocpi.CredentialsRole) []PartyRef {
	out := make([]PartyRef, len(roles))
	for i, r := range roles {
		out[i] = PartyRef{Role: Role(r.Role), CountryCode: ocpi.Key(r.CountryCode), PartyID: ocpi.Key(r.PartyID)}
	}
	return out
}

func removedRefs(old []HostedParty, now []ocpi.CredentialsRole) []PartyRef {
	var out []PartyRef
	for _, o := range old {
		if !slices.ContainsFunc(now, func(r ocpi.CredentialsRole) bool {
			return Role(r.Role) == o.Role && o.Matches(r.CountryCode, r.PartyID)
		}) {
			out = append(out, o.PartyRef)
		}
	}
	return out
}

func refsString(roles []ocpi.CredentialsRole) string {
	parts := make([]string, len(roles))
	for i, r := range roles {
		parts[i] = r.Role + " " + strings.ToUpper(r.CountryCode+"/"+r.PartyID)
	}
	return strings.Join(parts, ", ")
}
