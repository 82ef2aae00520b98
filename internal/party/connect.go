package party

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Connect performs the client side of the handshake (we start it): read the
// partner's versions and details with its token A, POST our credentials with
// a fresh token for it, store the token it answers with, and verify it with a
// GET of its versions. name defaults to the partner's business name.
//
// The platform exists as PENDING while our POST is in flight, so the partner
// can call our versions and details back with the token we sent.
func (s *Service) Connect(ctx context.Context, name, versionsURL, tokenA string) (*Platform, error) {
	if !ocpi.ValidToken(tokenA) {
		return nil, ocpi.Invalid("token", "must be 1 to 64 printable ASCII characters without spaces")
	}
	d, err := s.discoverBest(ctx, versionsURL, tokenA)
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
		id, err = s.insertPlatform(ctx, tx, name, s.cfg.Sandbox, true, d, tokenA, ours)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE platforms SET status = $1 WHERE id = $2", string(StatusPending), id)
		return err
	})
	if err != nil {
		return nil, err
	}
	fail := func(cause error) (*Platform, error) {
		_ = s.db.InTx(context.WithoutCancel(ctx), func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE platforms SET status = $1, token_in_hash = NULL, token_out = '', last_error = $2, updated_at = $3 WHERE id = $4`,
				string(StatusUnregistered), truncate(cause.Error(), 500), s.now(), id)
			return err
		})
		return nil, cause
	}

	var theirs ocpi.Credentials
	_, err = s.client.Call(ctx, ocpiclient.Request{Method: http.MethodPost, URL: credURL, Token: tokenA, Base64: d.base64,
		Body: s.OurCredentials(ours), MaxAttempts: 1, Timeout: time.Minute}, &theirs)
	if err != nil {
		return fail(&ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "the partner refused our credentials: " + describe(err), Err: err})
	}
	if err := theirs.Check(acceptedRoles()); err != nil {
		return fail(fmt.Errorf("the partner answered with invalid credentials: %w", err))
	}
	// Verify the new token before relying on it.
	auth := ocpiclient.Auth{Token: theirs.Token, Base64: d.base64}
	if _, err := s.client.Versions(ctx, versionsURL, auth); err != nil {
		return fail(&ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "the token the partner gave us does not work on its versions endpoint: " + describe(err), Err: err})
	}
	if name == versionsURL && len(theirs.Roles) > 0 {
		name = theirs.Roles[0].BusinessDetails.Name
	}
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err := checkRoleConflicts(ctx, tx, id, theirs.Roles); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE platforms SET status = $1, token_out = $2, name = $3, updated_at = $4 WHERE id = $5`,
			string(StatusConnected), s.box.seal(theirs.Token), name, s.now(), id); err != nil {
			return err
		}
		if err := s.replaceRoles(ctx, tx, id, theirs.Roles); err != nil {
			return err
		}
		return s.clientInfoChanged(ctx, tx, id, refsOf(theirs.Roles), ClientConnected)
	})
	if err != nil {
		return fail(err)
	}
	s.logger.InfoContext(ctx, "connected to platform", "name", name, "version", d.version, "roles", refsString(theirs.Roles))
	return s.Find(ctx, id)
}

// discoverBest reads versions with a token, trying Base64 and then raw, and
// picks the highest version both sides speak.
func (s *Service) discoverBest(ctx context.Context, versionsURL, token string) (*discovered, error) {
	auth := ocpiclient.Auth{Token: token, Base64: true}
	vs, err := s.client.Versions(ctx, versionsURL, auth)
	if err != nil && isUnauthorized(err) {
		auth.Base64 = false
		vs, err = s.client.Versions(ctx, versionsURL, auth)
	}
	if err != nil {
		return nil, &ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "could not read the partner's versions at " + versionsURL + ": " + describe(err), Err: err}
	}
	v, ok := ocpiclient.Pick(vs, s.cfg.Versions, "")
	if !ok {
		var offered []string
		for _, x := range vs {
			offered = append(offered, x.Version)
		}
		return nil, &ocpi.Error{Code: ocpi.EUNSUPPORTEDVER, Message: fmt.Sprintf("the partner offers %s; we speak %v", orNone(offered), s.cfg.Versions)}
	}
	if v.Version == "2.1.1" || v.Version == "2.0" {
		// Legacy versions use raw tokens (transport.md §9.1).
		auth.Base64 = false
	}
	d, err := s.client.VersionDetails(ctx, v.URL, auth)
	if err != nil {
		return nil, &ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "could not read the partner's version details: " + describe(err), Err: err}
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
	var theirs ocpi.Credentials
	_, err = s.client.Call(ctx, ocpiclient.Request{Method: http.MethodPut, URL: credURL, Token: auth.Token, Base64: auth.Base64,
		Body: s.OurCredentials(next), MaxAttempts: 1, Timeout: time.Minute}, &theirs)
	if err == nil {
		err = theirs.Check(acceptedRoles())
	}
	if err != nil {
		_ = s.setNextToken(context.WithoutCancel(ctx), id, "")
		return nil, &ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "the partner did not accept the new credentials: " + describe(err), Err: err}
	}
	newAuth := ocpiclient.Auth{Token: theirs.Token, Base64: auth.Base64}
	details, derr := s.client.VersionDetails(ctx, s.versionURL(ctx, p, newAuth), newAuth)
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE platforms SET token_in_hash = $1, token_next_hash = NULL, token_out = $2, updated_at = $3 WHERE id = $4`,
			hashToken(next), s.box.seal(theirs.Token), s.now(), id); err != nil {
			return err
		}
		if derr == nil && len(details.Endpoints) > 0 {
			b, _ := json.Marshal(details.Endpoints)
			if _, err := tx.Exec(ctx, "UPDATE platforms SET endpoints = $1 WHERE id = $2", string(b), id); err != nil {
				return err
			}
		}
		if err := checkRoleConflicts(ctx, tx, id, theirs.Roles); err != nil {
			return err
		}
		return s.replaceRoles(ctx, tx, id, theirs.Roles)
	})
	if err != nil {
		return nil, err
	}
	return s.Find(ctx, id)
}

// versionURL finds the details URL of the version we speak with p.
func (s *Service) versionURL(ctx context.Context, p *Platform, auth ocpiclient.Auth) string {
	vs, err := s.client.Versions(ctx, p.VersionsURL, auth)
	if err == nil {
		if v, ok := ocpiclient.Pick(vs, []string{p.Version}, p.Version); ok {
			return v.URL
		}
	}
	return p.VersionsURL
}

func (s *Service) setNextToken(ctx context.Context, id int64, h string) error {
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var v any
		if h != "" {
			v = h
		}
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
			if _, cerr := s.client.Call(ctx, ocpiclient.Request{Method: http.MethodDelete, URL: credURL, Token: auth.Token, Base64: auth.Base64, MaxAttempts: 2}, nil); cerr != nil {
				warning = "the partner's credentials DELETE failed (" + describe(cerr) + "); the platform is unregistered here anyway"
			}
		}
	}
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error { return s.unregister(ctx, tx, id) })
	return warning, err
}

// Suspend stops a platform: its requests get 401 and nothing is sent to it;
// partners are told its parties are SUSPENDED.
func (s *Service) Suspend(ctx context.Context, id int64) error {
	return s.setStatus(ctx, id, StatusConnected, StatusSuspended, ClientSuspended)
}

// Resume undoes Suspend.
func (s *Service) Resume(ctx context.Context, id int64) error {
	return s.setStatus(ctx, id, StatusSuspended, StatusConnected, ClientConnected)
}

func (s *Service) setStatus(ctx context.Context, id int64, from, to Status, ci string) error {
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
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
		roles, err := platformRoles(ctx, tx, id)
		if err != nil {
			return err
		}
		refs := make([]PartyRef, len(roles))
		for i, r := range roles {
			refs[i] = r.PartyRef
		}
		return s.clientInfoChanged(ctx, tx, id, refs, ci)
	})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
