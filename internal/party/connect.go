package party

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpi/v211"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
	"github.com/ocpihub/ocpihub/internal/store"
)

// ConnectRequest is what the operator gives to connect to a partner: its
// versions URL and token A, a name (default: the partner's business name),
// and, for a partner whose highest version shared with us is 2.1.1 or 2.0,
// its role (CPO or EMSP): legacy credentials do not say it.
type ConnectRequest struct {
	Name        string
	VersionsURL string
	Token       string
	Role        Role
}

// Connect performs the client side of the handshake (we start it): read the
// partner's versions and details with its token A, POST our credentials with
// a fresh token for it, store the token it answers with, and verify it with a
// GET of its versions. name defaults to the partner's business name.
func (s *Service) Connect(ctx context.Context, name, versionsURL, tokenA string) (*Platform, error) {
	return s.ConnectWith(ctx, ConnectRequest{Name: name, VersionsURL: versionsURL, Token: tokenA})
}

// ConnectWith is Connect with every option. The version is the highest both
// sides speak.
//
// The platform exists as PENDING while our POST is in flight, so the partner
// can call our versions and details back with the token we sent. A failed
// connect leaves nothing behind: the PENDING row is deleted and, when the
// partner had already accepted our POST (its answer is unusable, its token
// does not work, it lacks endpoints we need for its roles — 3003 — or one of
// its parties is held by another platform), we send it a credentials DELETE
// so that neither side believes in a half-made connection.
func (s *Service) ConnectWith(ctx context.Context, req ConnectRequest) (*Platform, error) {
	name, versionsURL, tokenA := req.Name, req.VersionsURL, req.Token
	if !ocpi.ValidToken(tokenA) {
		return nil, ocpi.Invalid("token", "must be 1 to 64 printable ASCII characters without spaces")
	}
	if req.Role != "" && req.Role != RoleCPO && req.Role != RoleEMSP {
		return nil, ocpi.Invalid("role", "must be CPO or EMSP (the roles of OCPI 2.1.1 and 2.0)")
	}
	d, err := s.discoverBest(ctx, versionsURL, tokenA, req.Role)
	if err != nil {
		return nil, err
	}
	credURL, ok := (ocpi.VersionDetails{Endpoints: d.endpoints}).Find("credentials", "")
	if !ok {
		return nil, &ocpi.Error{Code: ocpi.ENOENDPOINTS, Message: "the partner's version details list no credentials endpoint"}
	}
	ours := s.NewTokenFunc()
	if name == "" {
		name = versionsURL
	}
	var id int64
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		// Token A is not stored: it is used once, for the POST below.
		id, err = s.insertPlatform(ctx, tx, name, s.cfg.Sandbox, true, d, "", ours)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE platforms SET status = $1 WHERE id = $2", string(StatusPending), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	var theirs ocpi.Credentials
	var answer json.RawMessage
	undo := func(cause error, accepted bool) (*Platform, error) {
		ctx := context.WithoutCancel(ctx)
		if accepted && ocpi.ValidToken(theirs.Token) {
			if _, err := s.client.Call(ctx, ocpiclient.Request{Method: http.MethodDelete, URL: credURL, Token: theirs.Token, Base64: d.base64,
				MaxAttempts: 1, Timeout: 15 * time.Second, PlatformID: id, Partner: name}, nil); err != nil {
				s.logger.WarnContext(ctx, "could not undo a registration at the partner", "versions_url", versionsURL, "error", err)
			}
		}
		if err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			s.forgetAtCommit(tx)
			_, err := tx.Exec(ctx, "DELETE FROM platforms WHERE id = $1 AND status = $2", id, string(StatusPending))
			return err
		}); err != nil {
			s.logger.ErrorContext(ctx, "could not remove a pending platform", "platform_id", id, "error", err)
		}
		return nil, cause
	}

	body, err := s.credentialsBody(ctx, d.version, req.Role, ours, id)
	if err != nil {
		return undo(err, false)
	}
	resp, err := s.client.Call(ctx, ocpiclient.Request{Method: http.MethodPost, URL: credURL, Token: tokenA, Base64: d.base64,
		Body: body, MaxAttempts: 1, Timeout: time.Minute, PlatformID: id, Partner: name}, &answer)
	if emptyAnswer(resp) {
		// The partner registers back by itself (connect_back.go).
		p, werr := s.awaitRegisterBack(ctx, id)
		if werr != nil {
			return undo(werr, false)
		}
		s.logger.InfoContext(ctx, "connected to platform (it registered back)", "name", p.Name, "version", p.Version)
		return p, nil
	}
	if err != nil {
		return undo(&ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "the partner refused our credentials: " + s.describe(ctx, err), Err: err}, false)
	}
	theirs, err = readCredentials(d.version, req.Role, answer)
	if err != nil {
		return undo(fmt.Errorf("the partner answered with invalid credentials: %w", err), true)
	}
	// Verify the new token before relying on it.
	auth := ocpiclient.Auth{Token: theirs.Token, Base64: d.base64}
	if _, err := s.client.Versions(ctx, versionsURL, auth); err != nil {
		return undo(&ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "the token the partner gave us does not work on its versions endpoint: " + s.describe(ctx, err), Err: err}, true)
	}
	if err := s.requireEndpoints(ocpi.VersionDetails{Endpoints: d.endpoints}, rolesOf(theirs), "the partner's"); err != nil {
		return undo(err, true)
	}
	if name == versionsURL && len(theirs.Roles) > 0 {
		name = theirs.Roles[0].BusinessDetails.Name
	}
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := s.checkRoleConflicts(ctx, tx, id, "roles", refsOf(theirs.Roles)); err != nil {
			return err
		}
		s.forgetAtCommit(tx)
		n, err := tx.Exec(ctx, `UPDATE platforms SET status = $1, token_out = $2, name = $3, last_seen_at = $4, updated_at = $4 WHERE id = $5 AND status = $6`,
			string(StatusConnected), s.box.Seal(theirs.Token), name, s.now(), id, string(StatusPending))
		if err != nil {
			return err
		}
		if n != 1 {
			return ocpi.Errorf(ocpi.ECONFLICT, "platform %d changed while connecting (disconnected by the operator?)", id)
		}
		return s.registered(ctx, tx, id, theirs.Roles)
	})
	if err != nil {
		return undo(err, true)
	}
	s.logger.InfoContext(ctx, "connected to platform", "name", name, "version", d.version, "roles", refsString(theirs.Roles), "token_base64", d.base64)
	return s.Find(ctx, id)
}

// discoverBest reads versions with a token, trying Base64 and then raw, and
// picks the highest version both sides speak. A legacy version needs the
// partner's role, to know what its endpoints are.
func (s *Service) discoverBest(ctx context.Context, versionsURL, token string, role Role) (*discovered, error) {
	auth := ocpiclient.Auth{Token: token, Base64: true}
	vs, err := s.client.Versions(ctx, versionsURL, auth)
	if err != nil && isUnauthorized(err) {
		auth.Base64 = false
		vs, err = s.client.Versions(ctx, versionsURL, auth)
	}
	if err != nil {
		return nil, &ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "could not read the partner's versions at " + versionsURL + ": " + s.describe(ctx, err), Err: err}
	}
	v, ok := ocpiclient.Pick(vs, s.connectVersions(), "")
	if !ok {
		var offered []string
		for _, x := range vs {
			offered = append(offered, x.Version)
		}
		return nil, &ocpi.Error{Code: ocpi.EUNSUPPORTEDVER, Message: fmt.Sprintf("the partner offers %s; we connect with %v", orNone(offered), s.connectVersions())}
	}
	if v211.IsLegacy(v.Version) {
		if role == "" {
			return nil, &ocpi.Error{Code: ocpi.EINVALID, Field: "role", Issue: "is required for an OCPI " + v.Version + " partner",
				Message: "the highest version the partner shares with us is " + v.Version + ", whose credentials do not name a role: say whether it is a CPO or an EMSP (role)"}
		}
		// Legacy versions use raw tokens (transport.md §9.1).
		auth.Base64 = false
	}
	d, err := s.client.VersionDetails(ctx, v.URL, auth)
	if err != nil {
		return nil, &ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "could not read the partner's version details: " + s.describe(ctx, err), Err: err}
	}
	if v211.IsLegacy(v.Version) {
		d.Endpoints = LegacyEndpoints(d.Endpoints, role)
	}
	return &discovered{version: v.Version, versionsURL: versionsURL, endpoints: d.Endpoints, base64: auth.Base64}, nil
}

// Rotate replaces the tokens of a connection we hold: a new token for the
// partner to call us with, sent by a credentials PUT; the partner answers with
// a new token for us. Until the partner has answered both our tokens work (it
// may call us back with the new one while handling the PUT).
func (s *Service) Rotate(ctx context.Context, id int64) (*Platform, error) {
	p, err := s.Find(ctx, id)
	if err != nil {
		return nil, err
	}
	if p.Status != StatusConnected {
		return nil, ocpi.Errorf(ocpi.EINVALID, "platform %d is %s; only a connected platform can rotate tokens", id, p.Status)
	}
	credURL, ok := p.Endpoint("credentials", "")
	if !ok {
		return nil, &ocpi.Error{Code: ocpi.ENOENDPOINTS, Message: "the platform lists no credentials endpoint"}
	}
	auth, err := s.Auth(p)
	if err != nil {
		return nil, err
	}
	next := s.NewTokenFunc()
	if err := s.setNextToken(ctx, id, hashToken(next)); err != nil {
		return nil, err
	}
	role := legacyRole(p)
	ours, err := s.credentialsBody(ctx, p.Version, role, next, p.ID)
	if err != nil {
		_ = s.setNextToken(context.WithoutCancel(ctx), id, "")
		return nil, err
	}
	var answer json.RawMessage
	_, err = s.client.Call(ctx, ocpiclient.Request{Method: http.MethodPut, URL: credURL, Token: auth.Token, Base64: auth.Base64,
		Body: ours, MaxAttempts: 1, Timeout: time.Minute, PlatformID: p.ID, Partner: p.Name}, &answer)
	var theirs ocpi.Credentials
	if err == nil {
		theirs, err = readCredentials(p.Version, role, answer)
	}
	if err != nil {
		_ = s.setNextToken(context.WithoutCancel(ctx), id, "")
		return nil, &ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "the partner did not accept the new credentials: " + s.describe(ctx, err), Err: err}
	}
	// The partner has switched to the new tokens: store them whatever else
	// happens, or we lose the connection. Its endpoints and roles are
	// refreshed when they can be (its answer names its versions URL).
	newAuth := ocpiclient.Auth{Token: theirs.Token, Base64: auth.Base64}
	versionsURL := p.VersionsURL
	if theirs.URL != "" {
		versionsURL = theirs.URL
	}
	var endpoints []byte
	if _, d, derr := s.client.Discover(ctx, versionsURL, newAuth, []string{p.Version}, p.Version); derr == nil && len(d.Endpoints) > 0 {
		if v211.IsLegacy(p.Version) {
			d.Endpoints = LegacyEndpoints(d.Endpoints, role)
		}
		endpoints, _ = json.Marshal(d.Endpoints)
	} else if derr != nil {
		s.logger.WarnContext(ctx, "rotated tokens but could not refresh the partner's endpoints", "platform_id", id, "error", derr)
	}
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		before, err := endpointsOf(ctx, tx, id)
		if err != nil {
			return err
		}
		s.forgetAtCommit(tx)
		if _, err := tx.Exec(ctx, `UPDATE platforms SET token_in_hash = $1, token_next_hash = NULL, token_out = $2, updated_at = $3 WHERE id = $4`,
			hashToken(next), s.box.Seal(theirs.Token), s.now(), id); err != nil {
			return err
		}
		if endpoints != nil {
			if _, err := tx.Exec(ctx, "UPDATE platforms SET endpoints = $1, versions_url = $2 WHERE id = $3", string(endpoints), versionsURL, id); err != nil {
				return err
			}
		}
		if err := s.checkRoleConflicts(ctx, tx, id, "roles", refsOf(theirs.Roles)); err != nil {
			s.logger.WarnContext(ctx, "rotated tokens but kept the platform's roles: its new roles conflict", "platform_id", id, "error", err)
			return nil
		}
		return s.rolesChanged(ctx, tx, id, theirs.Roles, p.Connection, before)
	})
	if err != nil {
		return nil, err
	}
	s.logger.InfoContext(ctx, "rotated credentials tokens", "platform_id", id, "name", p.Name)
	return s.Find(ctx, id)
}

func (s *Service) setNextToken(ctx context.Context, id int64, h string) error {
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var v any
		if h != "" {
			v = h
		}
		s.forgetAtCommit(tx)
		_, err := tx.Exec(ctx, "UPDATE platforms SET token_next_hash = $1 WHERE id = $2", v, id)
		return err
	})
}

// Disconnect unregisters a platform: a credentials DELETE to the partner, and
// the platform is marked UNREGISTERED here whatever the partner answered (its
// answer, if not a success, is returned as a warning).
func (s *Service) Disconnect(ctx context.Context, id int64) (warning string, err error) {
	p, err := s.Find(ctx, id)
	if err != nil {
		return "", err
	}
	if p.Status == StatusUnregistered {
		return "", ocpi.Errorf(ocpi.EINVALID, "platform %d is already unregistered", id)
	}
	if credURL, ok := p.Endpoint("credentials", ""); ok {
		if auth, aerr := s.Auth(p); aerr == nil && auth.Token != "" {
			if _, cerr := s.client.Call(ctx, ocpiclient.Request{Method: http.MethodDelete, URL: credURL, Token: auth.Token, Base64: auth.Base64, MaxAttempts: 2,
				PlatformID: p.ID, Partner: p.Name}, nil); cerr != nil {
				warning = "the partner's credentials DELETE failed (" + s.describe(ctx, cerr) + "); the platform is unregistered here anyway"
			}
		}
	}
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error { return s.unregister(ctx, tx, id) })
	return warning, err
}

// Suspend stops a platform: its requests get 401 and nothing is sent to it;
// partners are told its parties are SUSPENDED.
func (s *Service) Suspend(ctx context.Context, id int64) error {
	return s.setStatus(ctx, id, StatusConnected, StatusSuspended, clientinfo.Suspended)
}

// Resume undoes Suspend. Partners are told the platform's parties are
// CONNECTED again (or OFFLINE, when the liveness check last found it
// unreachable).
func (s *Service) Resume(ctx context.Context, id int64) error {
	return s.setStatus(ctx, id, StatusSuspended, StatusConnected, "")
}

// setStatus moves a platform from one status to another and records the
// HubClientInfo status ci of its parties ("" = its connection status).
func (s *Service) setStatus(ctx context.Context, id int64, from, to Status, ci string) error {
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		s.forgetAtCommit(tx)
		n, err := tx.Exec(ctx, "UPDATE platforms SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4", string(to), s.now(), id, string(from))
		if err != nil {
			return err
		}
		if n != 1 {
			p, err := findPlatform(ctx, tx, id)
			if err != nil {
				return err
			}
			return ocpi.Errorf(ocpi.EINVALID, "platform %d is %s, not %s", id, p.Status, from)
		}
		if ci == "" {
			if err := tx.QueryRow(ctx, "SELECT connection FROM platforms WHERE id = $1", id).Scan(&ci); err != nil {
				return err
			}
		}
		roles, err := platformRoles(ctx, tx, id)
		if err == nil {
			roles, err = withRepresented(ctx, tx, id, roles)
		}
		if err != nil {
			return err
		}
		refs := make([]PartyRef, len(roles))
		for i, r := range roles {
			refs[i] = r.PartyRef
		}
		return s.ClientInfoChanged(ctx, tx, id, refs, ci)
	})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
