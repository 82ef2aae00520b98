package party

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/event"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/store"
)

// ConnectionStatus values of HubClientInfo (hubclientinfo.md §2).
const (
	ClientConnected = "CONNECTED"
	ClientOffline   = "OFFLINE"
	ClientPlanned   = "PLANNED"
	ClientSuspended = "SUSPENDED"
)

// ClientInfo is the HubClientInfo object.
type ClientInfo struct {
	PartyID     string        `json:"party_id"`
	CountryCode string        `json:"country_code"`
	Role        string        `json:"role"`
	Status      string        `json:"status"`
	LastUpdated ocpi.DateTime `json:"last_updated"`
}

// LivenessSilence is how long a platform may be silent before the liveness
// job checks it (transport.md §11: "start with 5 minutes").
const LivenessSilence = 5 * time.Minute

// clientInfoChanged records the HubClientInfo status of parties and, for each
// one that changed, enqueues a push to every connected platform that has the
// hubclientinfo receiver (except the platform the parties belong to).
func (s *Service) clientInfoChanged(ctx context.Context, tx *store.Tx, self int64, refs []PartyRef, status string) error {
	now := s.now()
	var changed []PartyRef
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
		if err := s.cfg.Events.Emit(ctx, tx, event.Event{Name: event.PartyStatusChanged, Data: ci, Public: true,
			Parties: []event.Party{{Role: ci.Role, CountryCode: ci.CountryCode, PartyID: ci.PartyID}}}); err != nil {
			return err
		}
		changed = append(changed, r)
	}
	return s.enqueueClientInfo(ctx, tx, self, changed, 0)
}

// enqueueClientInfo enqueues a push of the ClientInfo of each party to every
// connected platform that has the hubclientinfo receiver (except self).
// withdrawnAt is set for parties no longer listed (WithdrawPlanned).
func (s *Service) enqueueClientInfo(ctx context.Context, tx *store.Tx, self int64, changed []PartyRef, withdrawnAt int64) error {
	if len(changed) == 0 || s.jobs == nil {
		return nil
	}
	rows, err := tx.Query(ctx, "SELECT id, endpoints FROM platforms WHERE status = $1 AND connection = $2 AND id <> $3",
		string(StatusConnected), ClientConnected, self)
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
			args := ClientInfoPushArgs{PlatformID: t, Role: string(r.Role), CountryCode: ocpi.Key(r.CountryCode), PartyID: ocpi.Key(r.PartyID), WithdrawnAt: withdrawnAt}
			if _, err := s.jobs.InsertTx(ctx, tx, args, &river.InsertOpts{Queue: jobs.QueuePush, MaxAttempts: 10}); err != nil {
				return err
			}
		}
	}
	return nil
}

// ListClientInfo is the HubClientInfo sender: every party we know (ours,
// our partners', and those behind peer hubs), paged, as platform forID sees
// it: a peer hub is not told about the parties it lists itself (loop rule).
func (s *Service) ListClientInfo(ctx context.Context, forID int64, p ocpi.PageRequest) ([]ClientInfo, ocpi.Page, error) {
	l := store.List{Table: "client_info", Columns: "pk, last_updated, role, country_code, party_id, status"}
	if forID != 0 {
		l.Where = []string{`NOT EXISTS (SELECT 1 FROM peer_parties pp WHERE pp.platform_id = $1
			AND pp.country_code = client_info.country_code AND pp.party_id = client_info.party_id)`}
		l.Args = []any{forID}
	}
	l = l.WithPage(p)
	var page ocpi.Page
	total, err := l.Count(ctx, s.db.ReadIn(ctx))
	if err != nil {
		return nil, page, err
	}
	page.Total = total
	rows, err := l.Query(ctx, s.db.ReadIn(ctx))
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
		return s.clientInfoChanged(ctx, tx, 0, refs, ClientConnected)
	})
}

// ClientInfoPushArgs is a job: PUT the current ClientInfo of one party to one
// platform. The worker reads the status when it runs, so pushes that pile up
// for an unreachable platform deliver the latest state.
type ClientInfoPushArgs struct {
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
func (ClientInfoPushArgs) Kind() string { return "party_clientinfo_push" }

type clientInfoWorker struct {
	river.WorkerDefaults[ClientInfoPushArgs]
	s *Service
}

func (w *clientInfoWorker) Work(ctx context.Context, job *river.Job[ClientInfoPushArgs]) error {
	s, a := w.s, job.Args
	p, err := s.Find(ctx, a.PlatformID)
	if err != nil {
		if ocpi.IsNotFound(err) {
			return nil
		}
		return err
	}
	if p.Status != StatusConnected || p.Connection != ClientConnected {
		return nil // hubclientinfo.md: OFFLINE means do not send and do not queue
	}
	base, ok := p.Endpoint("hubclientinfo", ocpi.InterfaceReceiver)
	if !ok {
		return nil
	}
	var ci ClientInfo
	var lu int64
	err = s.db.ReadIn(ctx).QueryRow(ctx, "SELECT role, country_code, party_id, status, last_updated FROM client_info WHERE role = $1 AND country_code = $2 AND party_id = $3",
		a.Role, a.CountryCode, a.PartyID).Scan(&ci.Role, &ci.CountryCode, &ci.PartyID, &ci.Status, &lu)
	if errors.Is(err, store.ErrNoRows) {
		if a.WithdrawnAt == 0 {
			return nil
		}
		ci = ClientInfo{Role: a.Role, CountryCode: a.CountryCode, PartyID: a.PartyID, Status: ClientSuspended}
		lu, err = a.WithdrawnAt, nil
	}
	if err != nil {
		return err
	}
	ci.LastUpdated = ocpi.FromMicros(lu)
	ci.Role = string(RoleFor(p.Version, Role(ci.Role)))
	auth, err := s.Auth(p)
	if err != nil {
		return err
	}
	u := base + "/" + url.PathEscape(ci.CountryCode) + "/" + url.PathEscape(ci.PartyID)
	_, err = s.client.Call(ctx, ocpiclient.Request{Method: http.MethodPut, URL: u, Token: auth.Token, Base64: auth.Base64, Body: ci, MaxAttempts: 1,
		PlatformID: p.ID, Partner: p.Name}, nil)
	return err
}

// LivenessArgs is the periodic liveness check of transport.md §11.
type LivenessArgs struct{}

// Kind implements river.JobArgs.
func (LivenessArgs) Kind() string { return "party_liveness" }

type livenessWorker struct {
	river.WorkerDefaults[LivenessArgs]
	s *Service
}

func (w *livenessWorker) Work(ctx context.Context, job *river.Job[LivenessArgs]) error {
	return w.s.CheckLiveness(ctx)
}

// ScheduleLiveness runs the liveness check every minute (on the leader only).
func (s *Service) ScheduleLiveness() {
	s.jobs.AddPeriodic(river.NewPeriodicJob(river.PeriodicInterval(time.Minute),
		func() (river.JobArgs, *river.InsertOpts) { return LivenessArgs{}, nil },
		&river.PeriodicJobOpts{ID: "party_liveness"}))
}

// CheckLiveness GETs the versions of every connected platform silent for
// more than LivenessSilence (and of those already OFFLINE), and moves it
// between CONNECTED and OFFLINE by the result; partners learn of it through
// HubClientInfo, and ReconnectFuncs run when one comes back.
func (s *Service) CheckLiveness(ctx context.Context) error {
	horizon := s.clock.Now().Add(-LivenessSilence).UnixMicro()
	rows, err := s.db.ReadIn(ctx).Query(ctx, "SELECT id FROM platforms WHERE status = $1 AND (last_seen_at < $2 OR connection = $3)",
		string(StatusConnected), horizon, ClientOffline)
	if err != nil {
		return err
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
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
		if _, err := tx.Exec(ctx, "UPDATE platforms SET connection = $1, last_error = $2, last_seen_at = CASE WHEN $1 = 'CONNECTED' THEN $3 ELSE last_seen_at END WHERE id = $4",
			next, lastErr, s.now(), id); err != nil {
			return err
		}
		return s.clientInfoChanged(ctx, tx, id, p.Refs(), next)
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

func hasEndpoint(raw []byte, identifier, role string) bool {
	var d ocpi.VersionDetails
	if err := jsonUnmarshal(raw, &d.Endpoints); err != nil {
		return false
	}
	_, ok := d.Find(identifier, role)
	return ok
}
