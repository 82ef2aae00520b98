package party

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// adminSetting is the settings key of the generated admin token's hash.
const adminSetting = "admin_token_sha256"

// Init prepares the admin token. With a configured token it uses that;
// otherwise it loads the hash generated at first start, or generates a token
// now and returns it so the caller prints it once (it is never shown again).
func (s *Service) Init(ctx context.Context) (generated string, err error) {
	if s.cfg.AdminToken != "" {
		s.adminHash = hashToken(s.cfg.AdminToken)
		return "", nil
	}
	if s.cfg.AdminTokenHash != "" {
		s.adminHash = s.cfg.AdminTokenHash
		return "", nil
	}
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var h string
		err := tx.QueryRow(ctx, "SELECT value FROM settings WHERE key = $1", adminSetting).Scan(&h)
		if err == nil {
			s.adminHash = h
			return nil
		}
		if !errors.Is(err, store.ErrNoRows) {
			return err
		}
		generated = s.NewTokenFunc()
		s.adminHash = hashToken(generated)
		_, err = tx.Exec(ctx, "INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)", adminSetting, s.adminHash, s.now())
		return err
	})
	return generated, err
}

// AdminTokenHash returns the SHA-256 (hex) of the admin token, once Init has
// run.
func (s *Service) AdminTokenHash() string { return s.adminHash }

// SealStored prepares the tokens we hold for partners at start. With a secret
// key it checks that the key opens the tokens already sealed (a wrong key
// would silently break every outgoing call, so it fails the start instead)
// and seals those stored in clear, e.g. before the key was configured.
// Without a key it fails when sealed tokens exist.
func (s *Service) SealStored(ctx context.Context) (sealed int, err error) {
	sealed, err = s.box.SealColumn(ctx, s.db, "platforms", "id", "token_out", "platform")
	if err == nil && sealed > 0 {
		// The clear tokens just overwritten must not survive on disk.
		if err := s.db.Scrub(ctx, "platforms"); err != nil {
			s.logger.WarnContext(ctx, "could not scrub the tokens replaced by their sealed form", "error", err)
		}
	}
	return sealed, err
}

// ResetAdminToken replaces the generated admin token and returns the new one.
func (s *Service) ResetAdminToken(ctx context.Context) (string, error) {
	tok := s.NewTokenFunc()
	h := hashToken(tok)
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ($1, $2, $3)
			ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, adminSetting, h, s.now())
		return err
	})
	if err != nil {
		return "", err
	}
	s.adminHash = h
	return tok, nil
}

func unauthorized(msg string) error {
	return &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: msg}
}

// Authenticate resolves the tokens of an Authorization header (most likely
// first, as ocpi.TokenCandidates returns them: the Base64-decoded form, then
// the raw header value last) to a caller: the admin, a platform, or a
// registering party holding a token A. Unknown, used or expired tokens, and
// suspended or unregistered platforms, are EUNAUTHORIZED.
func (s *Service) Authenticate(ctx context.Context, tokens []string) (*Caller, error) {
	var firstErr error
	for i, tok := range tokens {
		decoded := i < len(tokens)-1
		h := hashToken(tok)
		if s.adminHash != "" && equalHash(h, s.adminHash) {
			return &Caller{Kind: CallerAdmin, Name: "admin"}, nil
		}
		c, err := s.platformCaller(ctx, h)
		if err == nil {
			c.Token, c.TokenBase64 = tok, decoded
			return c, nil
		}
		if !errors.Is(err, store.ErrNoRows) {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		c, err = s.invitationCaller(ctx, h)
		if err == nil {
			c.Token, c.TokenBase64 = tok, decoded
			return c, nil
		}
		if !errors.Is(err, store.ErrNoRows) && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, unauthorized("unknown token")
}

func (s *Service) platformCaller(ctx context.Context, h string) (*Caller, error) {
	// Inside a transaction the caller is read through it: it may have
	// changed the platform.
	cache := store.HeldTx(ctx) == nil
	now := s.clock.Now()
	if cache {
		if c, ok := s.callers.get(h, now); ok {
			s.touch(ctx, c.PlatformID)
			return c, nil
		}
	}
	gen := s.callers.generation()
	rows, err := s.db.ReadIn(ctx).Query(ctx, `SELECT p.id, p.name, p.status, p.version, p.sandbox, r.role, r.country_code, r.party_id
		FROM platforms p LEFT JOIN platform_roles r ON r.platform_id = p.id
		WHERE p.token_in_hash = $1 OR p.token_next_hash = $1`, h)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var c *Caller
	for rows.Next() {
		var id int64
		var name, status, version string
		var sandbox bool
		var role, cc, pid *string
		if err := rows.Scan(&id, &name, &status, &version, &sandbox, &role, &cc, &pid); err != nil {
			return nil, err
		}
		if c == nil {
			c = &Caller{Kind: CallerPlatform, PlatformID: id, Name: name, Status: Status(status), Version: version, Sandbox: sandbox}
		}
		if role != nil {
			c.Roles = append(c.Roles, PartyRef{Role: Role(*role), CountryCode: *cc, PartyID: *pid})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if c == nil {
		return nil, store.ErrNoRows
	}
	if c.HasRole(RoleHUB) {
		// A peer hub writes for the parties it represents (peering.go).
		more, err := represented(ctx, s.db.Read(), c.PlatformID)
		if err != nil {
			return nil, err
		}
		for _, r := range more {
			c.Roles = append(c.Roles, r.PartyRef)
		}
	}
	switch c.Status {
	case StatusSuspended:
		return nil, unauthorized("the platform is suspended; contact the hub operator")
	case StatusUnregistered:
		return nil, unauthorized("the platform is unregistered")
	}
	if cache && c.Status == StatusConnected {
		// A PENDING platform is between two steps of its registration:
		// remembered, it would be refused for a second after another
		// process (the CLI, another replica) connected it.
		s.callers.put(h, c, gen, now)
	}
	s.touch(ctx, c.PlatformID)
	return c, nil
}

// forgetCallers drops the remembered callers, hosting platforms and
// parties of each role: a write that changes what a caller or a platform is
// (its status, tokens, version, name, roles, endpoints, connection, a peer
// hub's represented parties) runs forgetAtCommit.
func (s *Service) forgetCallers() {
	s.callers.forget()
	s.hosts.forget()
	s.roles.forget()
}

// notifyParties is the topic of a change to a platform (store.OnNotify).
const notifyParties = "parties"

// forgetAtCommit makes this process forget the remembered callers and
// hosting platforms once tx has committed, and the other replicas when
// they hear of it (PostgreSQL: store.Tx.NotifyAtCommit).
func (s *Service) forgetAtCommit(tx *store.Tx) {
	tx.AfterCommit(s.forgetCallers)
	tx.NotifyAtCommit(notifyParties)
}

// touch records that a platform was heard from (for the liveness check), at
// most once a minute per platform.
func (s *Service) touch(ctx context.Context, id int64) {
	now := s.clock.Now()
	if !s.touched.due(id, now) {
		return
	}
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE platforms SET last_seen_at = $1 WHERE id = $2 AND last_seen_at < $1", now.UnixMicro(), id)
		return err
	})
	if err != nil {
		s.logger.WarnContext(ctx, "could not record platform activity", "platform_id", id, "error", err)
	}
}

func (s *Service) invitationCaller(ctx context.Context, h string) (*Caller, error) {
	var id, expires int64
	var used *int64
	var name string
	var sandbox bool
	var parties []byte
	err := s.db.ReadIn(ctx).QueryRow(ctx, "SELECT id, name, sandbox, expires_at, used_at, parties FROM invitations WHERE token_hash = $1", h).
		Scan(&id, &name, &sandbox, &expires, &used, &parties)
	if err != nil {
		return nil, err
	}
	if used != nil {
		return nil, unauthorized("this registration token (token A) has been used; ask the hub operator for a new one")
	}
	if s.now() >= expires {
		return nil, unauthorized(fmt.Sprintf("this registration token (token A) expired at %s", ocpi.FromMicros(expires)))
	}
	c := &Caller{Kind: CallerRegistering, Name: name, InvitationID: id, Sandbox: sandbox}
	if len(parties) > 0 {
		if err := json.Unmarshal(parties, &c.Invited); err != nil {
			return nil, fmt.Errorf("invitation %d parties: %w", id, err)
		}
	}
	return c, nil
}
