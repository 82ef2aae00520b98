package party

import (
	"context"
	"net/http"
	"time"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party/clientinfo"
	"github.com/ocpihub/ocpihub/internal/store"
)

// HubClientInfo (package clientinfo): the registry carries a
// *clientinfo.Book, so ListClientInfo, GetClientInfo, ClientInfoChanged and
// EnqueueClientInfo are its methods.

// ConnectionStatus values of HubClientInfo (hubclientinfo.md §2) that the
// hub's delivery and directory still name through party.
const (
	ClientConnected = clientinfo.Connected
	ClientOffline   = clientinfo.Offline
)

// LivenessSilence is how long a platform may be silent before the liveness
// job checks it (transport.md §11: "start with 5 minutes").
const LivenessSilence = 5 * time.Minute

// clientInfoTarget is the book's Config.Target: a push goes only to a
// CONNECTED platform that has the receiver (hubclientinfo.md: OFFLINE
// means do not send and do not queue).
func (s *Service) clientInfoTarget(ctx context.Context, id int64) (clientinfo.Target, bool, error) {
	p, err := s.Find(ctx, id)
	if err != nil {
		if ocpi.IsNotFound(err) {
			return clientinfo.Target{}, false, nil
		}
		return clientinfo.Target{}, false, err
	}
	if p.Status != StatusConnected || p.Connection != ClientConnected {
		return clientinfo.Target{}, false, nil
	}
	base, ok := p.Endpoint("hubclientinfo", ocpi.InterfaceReceiver)
	if !ok {
		return clientinfo.Target{}, false, nil
	}
	return clientinfo.Target{ID: p.ID, Name: p.Name, Version: p.Version, Base: base,
		Auth: func() (ocpiclient.Auth, error) { return s.Auth(p) }}, true, nil
}

// SeedOwn records ocpihub's own parties as CONNECTED in HubClientInfo.
func (s *Service) SeedOwn(ctx context.Context) error {
	return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		refs := make([]PartyRef, 0, len(s.cfg.Own))
		for _, r := range s.cfg.Own {
			if Role(r.Role) == RoleHUB {
				continue
			}
			refs = append(refs, PartyRef{Role: Role(r.Role), CountryCode: r.CountryCode, PartyID: r.PartyID})
		}
		return s.ClientInfoChanged(ctx, tx, 0, refs, ClientConnected)
	})
}

// LivenessArgs is the periodic liveness check of transport.md §11.
type LivenessArgs struct{}

// Kind implements river.JobArgs.
func (LivenessArgs) Kind() string { return "party_liveness" }

// ScheduleLiveness runs the liveness check every minute (on the leader only).
func (s *Service) ScheduleLiveness() {
	s.jobs.Every(time.Minute, LivenessArgs{}, "party_liveness")
}

// CheckLiveness GETs the versions of every connected platform silent for
// more than LivenessSilence (and of those already OFFLINE), and moves it
// between CONNECTED and OFFLINE by the result; partners learn of it through
// HubClientInfo, and ReconnectFuncs run when one comes back.
func (s *Service) CheckLiveness(ctx context.Context) error {
	horizon := s.clock.Now().Add(-LivenessSilence).UnixMicro()
	ids, err := store.QueryAll(ctx, s.db.ReadIn(ctx), func(row store.Row) (int64, error) {
		var id int64
		return id, row.Scan(&id)
	}, "SELECT id FROM platforms WHERE status = $1 AND (last_seen_at < $2 OR connection = $3)", string(StatusConnected), horizon, ClientOffline)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.checkOne(ctx, id); err != nil {
			s.logger.WarnContext(ctx, "liveness check failed", "platform_id", id, "error", err)
		}
	}
	return nil
}

func (s *Service) checkOne(ctx context.Context, id int64) error {
	p, err := s.Find(ctx, id)
	if err != nil {
		return err
	}
	auth, err := s.Auth(p)
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	_, callErr := s.client.Call(cctx, ocpiclient.Request{Method: http.MethodGet, URL: p.VersionsURL, Token: auth.Token, Base64: auth.Base64, MaxAttempts: 1, Timeout: 10 * time.Second,
		PlatformID: p.ID, Partner: p.Name, Module: "versions"}, nil)
	cancel()
	next := ClientConnected
	if callErr != nil {
		next = ClientOffline
	}
	if next == p.Connection {
		if callErr == nil {
			return s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
				_, err := tx.Exec(ctx, "UPDATE platforms SET last_seen_at = $1 WHERE id = $2", s.now(), id)
				return err
			})
		}
		return nil
	}
	lastErr := ""
	if callErr != nil {
		lastErr = truncate(callErr.Error(), 500)
	}
	err = s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		s.forgetAtCommit(tx)
		if _, err := tx.Exec(ctx, "UPDATE platforms SET connection = $1, last_error = $2, last_seen_at = CASE WHEN $1 = 'CONNECTED' THEN $3 ELSE last_seen_at END WHERE id = $4",
			next, lastErr, s.now(), id); err != nil {
			return err
		}
		return s.ClientInfoChanged(ctx, tx, id, p.Refs(), next)
	})
	if err != nil {
		return err
	}
	s.logger.InfoContext(ctx, "platform connection changed", "platform_id", id, "name", p.Name, "connection", next, "error", lastErr)
	if next == ClientConnected {
		for _, fn := range s.ReconnectFuncs {
			fn(ctx, id)
		}
	}
	return nil
}
