package location

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hub"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/tariff"
)

// Syncer pulls partners' SENDER interfaces: CPOs' locations and tariffs, and
// the modules added with AddModule (a peer hub's tokens, sessions and CDRs).
// It is the recovery path when pushes were missed (transport.md §10: "the
// receiving side re-syncs with GET, date_from = last successful sync"). Each
// object is validated like a push; invalid ones are logged and counted, not
// stored; only real changes are broadcast and emitted.
type Syncer struct {
	db        *store.DB
	jobs      *jobs.Client
	hub       *hub.Hub
	parties   *party.Service
	locations *Service
	tariffs   *tariff.Service
	clock     clock.Clock
	logger    *slog.Logger
	objects   *prometheus.CounterVec
	// modules are the pullable modules in pull order.
	modules []pullModule
}

// PullFunc stores one object pulled from platform p, of the party cc/pid
// (one p hosts or represents in the module's role) with id (uid for a
// token). It reports whether anything changed; an ocpi.StaleError or an
// EINVALID error is counted as stale or invalid and the pull goes on.
type PullFunc func(ctx context.Context, p *party.Platform, cc, pid, id string, raw []byte) (changed bool, err error)

// pullModule is a module the Syncer pulls: the role of the parties whose
// objects it holds, and how an object is stored.
type pullModule struct {
	name string
	role party.Role
	put  PullFunc
	// peersOnly: the periodic pull asks peer hubs only (their parties'
	// objects reach us through one more hop that may have dropped them);
	// a direct partner's are pulled on demand.
	peersOnly bool
}

// NewSyncer returns a Syncer and registers its job on jc.
func NewSyncer(db *store.DB, jc *jobs.Client, h *hub.Hub, parties *party.Service, locations *Service, tariffs *tariff.Service,
	clk clock.Clock, logger *slog.Logger, reg prometheus.Registerer) *Syncer {
	s := &Syncer{db: db, jobs: jc, hub: h, parties: parties, locations: locations, tariffs: tariffs, clock: clk, logger: logger,
		objects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ocpihub_sync_objects_total",
			Help: "Objects pulled from partners' sender interfaces, by module and outcome (changed, unchanged, stale, invalid).",
		}, []string{"module", "outcome"})}
	s.AddModule(tariff.Module, party.RoleCPO, false, func(ctx context.Context, p *party.Platform, cc, pid, id string, raw []byte) (bool, error) {
		_, changed, err := s.tariffs.Put(ctx, tariff.Change{PlatformID: p.ID}, tariff.Ref{CountryCode: cc, PartyID: pid, ID: id}, raw)
		return changed, err
	})
	s.AddModule(Module, party.RoleCPO, false, func(ctx context.Context, p *party.Platform, cc, pid, id string, raw []byte) (bool, error) {
		res, err := s.locations.Put(ctx, Change{PlatformID: p.ID}, Ref{CountryCode: cc, PartyID: pid, LocationID: id}, raw)
		return res.Changed, err
	})
	if reg != nil {
		reg.MustRegister(s.objects)
	}
	if jc != nil {
		jobs.AddWorker(jc, &syncWorker{s: s})
	}
	return s
}

// AddModule makes module pullable from the SENDER interfaces of platforms
// hosting (or representing) parties of role, storing each object with put.
// peersOnly limits the periodic pull to peer hubs. Modules are pulled in the
// order they were added. It is meant for wiring, before the hub runs.
func (s *Syncer) AddModule(module string, role party.Role, peersOnly bool, put PullFunc) {
	s.modules = append(s.modules, pullModule{name: module, role: role, put: put, peersOnly: peersOnly})
	// Every module and outcome exists from the start, at 0.
	for _, o := range []string{"changed", "unchanged", "invalid"} {
		s.objects.WithLabelValues(module, o)
	}
}

// Modules returns the names of the pullable modules.
func (s *Syncer) Modules() []string {
	out := make([]string, 0, len(s.modules))
	for _, m := range s.modules {
		out = append(out, m.name)
	}
	return out
}

func (s *Syncer) module(name string) (pullModule, bool) {
	for _, m := range s.modules {
		if m.name == name {
			return m, true
		}
	}
	return pullModule{}, false
}

// SyncResult counts what a pull did.
type SyncResult struct {
	Module    string        `json:"module"`
	Party     string        `json:"party"`
	Since     ocpi.DateTime `json:"since,omitzero"`
	Received  int           `json:"received"`
	Changed   int           `json:"changed"`
	Unchanged int           `json:"unchanged"`
	Invalid   int           `json:"invalid"`
}

// LastSync returns the time of the last successful pull of module from a
// platform (zero: never).
func (s *Syncer) LastSync(ctx context.Context, platformID int64, module string) (time.Time, error) {
	var us int64
	err := s.db.Read().QueryRow(ctx, "SELECT last_sync FROM sync_state WHERE platform_id = $1 AND module = $2", platformID, module).Scan(&us)
	if errors.Is(err, store.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(us).UTC(), nil
}

// Sync pulls module (one of Modules) from a platform, changed since since
// (zero: everything), and records the pull's start as the platform's last
// successful sync. A peer hub is asked as a hub, for every party behind it.
func (s *Syncer) Sync(ctx context.Context, module string, platformID int64, since time.Time) (SyncResult, error) {
	res := SyncResult{Module: module}
	if !since.IsZero() {
		res.Since = ocpi.NewDateTime(since)
	}
	m, ok := s.module(module)
	if !ok {
		return res, fmt.Errorf("cannot sync %q: want one of %v", module, s.Modules())
	}
	p, err := s.parties.Find(ctx, platformID)
	if err != nil {
		return res, err
	}
	if len(p.Roles) > 0 {
		res.Party = p.Roles[0].String()
	}
	start := s.clock.Now()
	err = s.hub.Pull(ctx, platformID, module, m.role, since, func(items []json.RawMessage) error {
		for _, raw := range items {
			res.Received++
			outcome, err := s.one(ctx, p, m, raw)
			if err != nil {
				return err
			}
			s.objects.WithLabelValues(module, outcome).Inc()
			switch outcome {
			case "changed":
				res.Changed++
			case "unchanged", "stale":
				// A stale object leaves the hub's (newer) copy unchanged.
				res.Unchanged++
			default:
				res.Invalid++
			}
		}
		return nil
	})
	msg := ""
	if err != nil {
		msg = truncate(err.Error(), 500)
	}
	werr := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		if err != nil {
			_, e := tx.Exec(ctx, `INSERT INTO sync_state (platform_id, module, last_sync, last_error, updated_at) VALUES ($1, $2, 0, $3, $4)
				ON CONFLICT (platform_id, module) DO UPDATE SET last_error = excluded.last_error, updated_at = excluded.updated_at`,
				platformID, module, msg, s.clock.Now().UnixMicro())
			return e
		}
		_, e := tx.Exec(ctx, `INSERT INTO sync_state (platform_id, module, last_sync, last_error, updated_at) VALUES ($1, $2, $3, '', $3)
			ON CONFLICT (platform_id, module) DO UPDATE SET last_sync = excluded.last_sync, last_error = '', updated_at = excluded.updated_at`,
			platformID, module, start.UnixMicro())
		return e
	})
	if err != nil {
		return res, err
	}
	s.logger.InfoContext(ctx, "sync done", "module", module, "platform_id", platformID, "received", res.Received,
		"changed", res.Changed, "invalid", res.Invalid)
	return res, werr
}

// one stores one pulled object; it returns changed, unchanged, stale (older
// than the hub's copy: kept) or invalid.
func (s *Syncer) one(ctx context.Context, p *party.Platform, m pullModule, raw []byte) (string, error) {
	module := m.name
	var head struct {
		CountryCode string `json:"country_code"`
		PartyID     string `json:"party_id"`
		ID          string `json:"id"`
		UID         string `json:"uid"`
	}
	if json.Unmarshal(raw, &head) != nil {
		head.ID, head.UID = "", ""
	}
	if head.ID == "" {
		head.ID = head.UID // a token's key
	}
	if head.ID == "" {
		s.logger.WarnContext(ctx, "pulled object without an id", "module", module, "platform", p.Name)
		return "invalid", nil
	}
	owned := false
	for _, r := range p.Roles {
		if r.Role == m.role && r.Matches(head.CountryCode, head.PartyID) {
			owned = true
		}
	}
	if !owned {
		s.logger.WarnContext(ctx, "pulled object of a party the platform does not host", "module", module, "platform", p.Name,
			"country_code", head.CountryCode, "party_id", head.PartyID, "id", head.ID)
		return "invalid", nil
	}
	changed, err := m.put(ctx, p, head.CountryCode, head.PartyID, head.ID, raw)
	if ocpi.AsStale(err) != nil {
		// The hub holds a newer copy (a push overtook the pull).
		return "stale", nil
	}
	var oe *ocpi.Error
	if errors.As(err, &oe) && (oe.Code == ocpi.EINVALID || oe.Code == ocpi.EINVALIDJSON) {
		s.logger.WarnContext(ctx, "pulled object is invalid; not stored", "module", module, "platform", p.Name,
			"id", head.ID, "field", oe.Field, "issue", oe.Issue, "error", oe.Message)
		return "invalid", nil
	}
	if err != nil {
		return "", err
	}
	if changed {
		return "changed", nil
	}
	return "unchanged", nil
}

// SyncAllArgs is the periodic job that pulls every connected CPO.
type SyncAllArgs struct{}

// Kind implements river.JobArgs.
func (SyncAllArgs) Kind() string { return "location_sync_all" }

type syncWorker struct {
	river.WorkerDefaults[SyncAllArgs]
	s *Syncer
}

// Timeout allows a long pull (a large directory over slow pages).
func (w *syncWorker) Timeout(*river.Job[SyncAllArgs]) time.Duration { return 30 * time.Minute }

func (w *syncWorker) Work(ctx context.Context, job *river.Job[SyncAllArgs]) error {
	return w.s.SyncAll(ctx)
}

// SyncAll pulls locations and tariffs from every connected CPO platform that
// offers them, and the other modules from every connected peer hub that
// offers them, each since its last successful pull.
func (s *Syncer) SyncAll(ctx context.Context) error {
	ps, err := s.parties.List(ctx, party.Filter{Status: []party.Status{party.StatusConnected}})
	if err != nil {
		return err
	}
	for _, p := range ps {
		if p.Connection == party.ClientOffline {
			continue
		}
		for _, m := range s.modules {
			module := m.name
			if !hasRole(p, m.role) || (m.peersOnly && !p.IsPeerHub()) {
				continue
			}
			if _, ok := p.Endpoint(module, ocpi.InterfaceSender); !ok {
				continue
			}
			since, err := s.LastSync(ctx, p.ID, module)
			if err != nil {
				return err
			}
			if _, err := s.Sync(ctx, module, p.ID, since); err != nil {
				s.logger.WarnContext(ctx, "sync failed", "module", module, "platform", p.Name, "error", err)
			}
		}
	}
	return nil
}

// Schedule pulls every interval (on the leader only), with the first pull
// one interval after start.
func (s *Syncer) Schedule(interval time.Duration) {
	s.jobs.Every(interval, SyncAllArgs{}, "location_sync_all")
}

func hasRole(p *party.Platform, role party.Role) bool {
	for _, r := range p.Roles {
		if r.Role == role {
			return true
		}
	}
	return false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
