package party

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Registering back. Some platforms (CPO management systems of the 2.2 era)
// answer our credentials POST with an empty 2xx (HTTP 201, no body, or an
// envelope without data) and then complete the registration themselves: they
// POST their own credentials to our credentials endpoint with the token we
// sent them, as if it were a token A. The hub accepts that: the PENDING
// platform of our handshake is completed by its POST (registerBack), and
// ConnectWith waits for it (up to Config.RegisterBackWait, default 30 s)
// instead of failing with "not an OCPI envelope".

// DefaultRegisterBackWait is how long ConnectWith waits for a partner that
// answered our POST with an empty 2xx to register back.
const DefaultRegisterBackWait = 30 * time.Second

// emptyAnswer reports whether a partner's answer to our credentials POST is
// an empty success: HTTP 2xx with no body, or a success envelope without
// data.
func emptyAnswer(resp *ocpiclient.Response) bool {
	if resp == nil || resp.HTTPStatus < 200 || resp.HTTPStatus > 299 {
		return false
	}
	if len(bytes.TrimSpace(resp.Body)) == 0 {
		return true
	}
	if resp.Envelope == nil || !ocpi.IsSuccess(resp.Envelope.StatusCode) {
		return false
	}
	d := bytes.TrimSpace(resp.Envelope.Data)
	return len(d) == 0 || bytes.Equal(d, []byte("null")) || bytes.Equal(d, []byte("{}"))
}

// awaitRegisterBack waits until the PENDING platform id is no longer
// pending. It polls the database, so the partner's POST may land on any
// replica.
func (s *Service) awaitRegisterBack(ctx context.Context, id int64) (*Platform, error) {
	wait := s.cfg.RegisterBackWait
	if wait <= 0 {
		wait = DefaultRegisterBackWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		p, err := s.Find(ctx, id)
		if err == nil && p.Status == StatusConnected {
			return p, nil
		}
		if err == nil && p.Status != StatusPending {
			return nil, ocpi.Errorf(ocpi.ECLIENTAPI, "platform %d became %s while we waited for the partner to register back", id, p.Status)
		}
		select {
		case <-ctx.Done():
			return nil, &ocpi.Error{Code: ocpi.ECLIENTAPI, Message: "the partner accepted our credentials with an empty answer but did not register back (POST its credentials to ours) within " + wait.String(), Err: ctx.Err()}
		case <-tick.C:
		}
	}
}

// registerBack is the credentials POST of a partner completing a handshake
// we started, with the token we sent it (its platform is PENDING): like
// Register, on the platform that exists already.
func (s *Service) registerBack(ctx context.Context, caller *Caller, version string, in ocpi.Credentials) (*ocpi.Credentials, error) {
	if err := checkCredentials(in); err != nil {
		return nil, err
	}
	d, err := s.admit(ctx, s.db.Read(), caller.PlatformID, version, in, caller.TokenBase64)
	if err != nil {
		return nil, err
	}
	tokenC := s.NewTokenFunc()
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		p, err := findPlatform(ctx, tx, caller.PlatformID)
		if err != nil {
			return err
		}
		name := p.Name
		if name == p.VersionsURL && len(in.Roles) > 0 && in.Roles[0].BusinessDetails.Name != "" {
			name = in.Roles[0].BusinessDetails.Name
		}
		if err := s.checkRoleConflicts(ctx, tx, caller.PlatformID, "roles", refsOf(in.Roles)); err != nil {
			return err
		}
		endpoints, _ := json.Marshal(d.endpoints)
		now := s.now()
		s.forgetAtCommit(tx)
		n, err := tx.Exec(ctx, `UPDATE platforms SET status = $1, connection = $2, token_in_hash = $3, token_out = $4, token_base64 = $5,
			version = $6, versions_url = $7, endpoints = $8, name = $9, last_seen_at = $10, updated_at = $10 WHERE id = $11 AND status = $12`,
			string(StatusConnected), ClientConnected, hashToken(tokenC), s.box.Seal(in.Token), d.base64, d.version, d.versionsURL,
			string(endpoints), name, now, caller.PlatformID, string(StatusPending))
		if err != nil {
			return err
		}
		if n != 1 {
			return unauthorized("the handshake this token belonged to is over")
		}
		if err := s.replaceRoles(ctx, tx, caller.PlatformID, in.Roles); err != nil {
			return err
		}
		if err := s.ClientInfoChanged(ctx, tx, caller.PlatformID, refsOf(in.Roles), ClientConnected); err != nil {
			return err
		}
		return s.connected(ctx, tx, caller.PlatformID, nil)
	})
	if err != nil {
		return nil, err
	}
	s.logger.InfoContext(ctx, "platform registered back", "platform_id", caller.PlatformID, "version", d.version, "roles", refsString(in.Roles), "token_base64", d.base64)
	c, err := s.CredentialsFor(ctx, d.version, tokenC, caller.PlatformID)
	return &c, err
}
