package hub

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Initial load defaults.
const (
	// DefaultLoadBatch is how many objects one step of an initial load
	// queues for the receiver.
	DefaultLoadBatch = 100
	// DefaultLoadPace is the pause between two steps, and the wait while the
	// receiver still has a batch's worth of pushes outstanding.
	DefaultLoadPace = time.Second
	// DefaultLoadDelay is how long after the handshake the load starts, so
	// the partner has stored the credentials it just received.
	DefaultLoadDelay = 2 * time.Second
)

// ModuleClientInfo is the HubClientInfo module, whose initial load the party
// service does (a ClientInfo push job per party).
const ModuleClientInfo = "hubclientinfo"

// Lister is a Source whose objects can be listed, for the initial load of a
// receiver that joined after they were published.
type Lister interface {
	// List returns up to limit objects after the cursor, in cursor order
	// (the table's pk): their key for Current and their owner.
	List(ctx context.Context, tx *store.Tx, after int64, limit int) ([]Listed, error)
}

// ListObjects runs a Lister's query: q selects (pk, country_code, party_id,
// id) rows after the cursor $1, at most $2 of them, in pk order.
func ListObjects(ctx context.Context, tx *store.Tx, q string, after int64, limit int) ([]Listed, error) {
	return store.QueryAll(ctx, tx, scanListed, q, after, limit)
}

// scanListed reads a row of a Lister's query.
func scanListed(r store.Row) (Listed, error) {
	var l Listed
	var id string
	if err := r.Scan(&l.Seq, &l.CountryCode, &l.PartyID, &id); err != nil {
		return l, err
	}
	l.Key = ObjectKey(l.CountryCode, l.PartyID, id)
	return l, nil
}

// Listed is one object of a Lister.
type Listed struct {
	Seq                  int64
	Key                  string
	CountryCode, PartyID string
}

// loadable is a module the hub loads into new receivers, and the roles it
// goes to (nil: any platform with the receiver).
type loadable struct {
	module   string
	audience []party.Role
}

// loadables are the modules of an initial load, in the order they are sent:
// who is out there first, then tariffs before the locations that name them.
var loadables = []loadable{
	{ModuleClientInfo, nil},
	{"tariffs", CPOAudience},
	{"locations", CPOAudience},
}

// allRoles is the audience of a module without one.
var allRoles = []party.Role{party.RoleCPO, party.RoleEMSP, party.RoleHUB, party.RoleNAP, party.RoleNSP, party.RoleOTHER, party.RoleSCSP, party.RolePTP}

// planInitialLoad is the party service's ConnectedFunc: inside the
// transaction that connected the platform (or changed its endpoints), it
// records an initial load of each module whose RECEIVER the platform offers
// now and did not before, and schedules the job that sends it, shortly after
// the handshake. A receiver that is dropped loses its load record, so
// gaining it again loads again.
func (h *Hub) planInitialLoad(ctx context.Context, tx *store.Tx, platformID int64, before []ocpi.Endpoint) error {
	if h.cfg.NoInitialLoad {
		return nil
	}
	planned := false
	for _, l := range loadables {
		if _, ok := h.sources[l.module]; !ok && l.module != ModuleClientInfo {
			continue
		}
		audience := l.audience
		if audience == nil {
			audience = allRoles
		}
		rs, err := h.receivers(ctx, tx, 0, audience, l.module)
		if err != nil {
			return err
		}
		receives := false
		for _, r := range rs {
			receives = receives || r.PlatformID == platformID
		}
		_, had := (ocpi.VersionDetails{Endpoints: before}).Find(l.module, ocpi.InterfaceReceiver)
		switch {
		case !receives:
			if _, err := tx.Exec(ctx, "DELETE FROM hub_initial_load WHERE platform_id = $1 AND module = $2", platformID, l.module); err != nil {
				return err
			}
		case before == nil || !had:
			n, err := tx.Exec(ctx, `INSERT INTO hub_initial_load (platform_id, module, cursor, sent, started_at, done_at) VALUES ($1, $2, 0, 0, $3, 0)
				ON CONFLICT (platform_id, module) DO UPDATE SET cursor = 0, sent = 0, started_at = excluded.started_at, done_at = 0`,
				platformID, l.module, h.now())
			if err != nil {
				return err
			}
			planned = planned || n > 0
		}
	}
	if !planned {
		return nil
	}
	// A job for every plan, not one unique per platform: a load planned
	// while the platform's job runs its last step would be skipped as a
	// duplicate of it, and then wait for the hourly cleanup. Two jobs of one
	// platform are harmless: each step takes its batch under the row's lock.
	_, err := h.jobs.InsertTx(ctx, tx, InitialLoadArgs{PlatformID: platformID}, &river.InsertOpts{Queue: jobs.QueuePush,
		ScheduledAt: h.clock.Now().Add(h.cfg.LoadDelay)})
	return err
}

// InitialLoadArgs is the job that sends a platform's initial loads, one
// batch per run: it snoozes between batches (the pace) and while the
// receiver has a batch's worth of pushes outstanding.
type InitialLoadArgs struct {
	PlatformID int64 `json:"platform_id"`
}

// Kind implements river.JobArgs.
func (InitialLoadArgs) Kind() string { return "hub_initial_load" }

// initialLoadJob is the work of an InitialLoadArgs job: one step, then a
// snooze until the next.
func (h *Hub) initialLoadJob(ctx context.Context, a InitialLoadArgs) error {
	more, wait, err := h.LoadStep(ctx, a.PlatformID)
	if err != nil || !more {
		return err
	}
	return river.JobSnooze(wait)
}

// LoadProgress is the state of one module's initial load to a platform.
type LoadProgress struct {
	Module string `json:"module"`
	Sent   int64  `json:"sent"`
	Done   bool   `json:"done"`
}

// InitialLoads lists a platform's initial loads.
func (h *Hub) InitialLoads(ctx context.Context, platformID int64) ([]LoadProgress, error) {
	return store.QueryAll(ctx, h.db.Read(), func(r store.Row) (LoadProgress, error) {
		var p LoadProgress
		var done int64
		err := r.Scan(&p.Module, &p.Sent, &done)
		p.Done = done != 0
		return p, err
	}, "SELECT module, sent, done_at FROM hub_initial_load WHERE platform_id = $1 ORDER BY module", platformID)
}

// LoadStep sends the next batch of a platform's unfinished initial load, in
// one transaction with the cursor that records it (a restart carries on after
// the last committed batch). more is true while something is left; wait is
// how long to pause before the next step.
func (h *Hub) LoadStep(ctx context.Context, platformID int64) (more bool, wait time.Duration, err error) {
	p, err := h.parties.Find(ctx, platformID)
	if ocpi.IsNotFound(err) || (err == nil && p.Status == party.StatusUnregistered) {
		err = h.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, "DELETE FROM hub_initial_load WHERE platform_id = $1", platformID)
			return err
		})
		return false, 0, err
	}
	if err != nil {
		return false, 0, err
	}
	if p.Status != party.StatusConnected || p.Connection != party.ClientConnected {
		// Suspended, OFFLINE or still in its handshake: look again later
		// (an OFFLINE receiver gets nothing, hubclientinfo.md).
		return true, time.Minute, nil
	}
	var module string
	var cursor, sent int64
	err = h.db.Read().QueryRow(ctx, `SELECT module, cursor, sent FROM hub_initial_load WHERE platform_id = $1 AND done_at = 0
		ORDER BY CASE module WHEN 'hubclientinfo' THEN 0 WHEN 'tariffs' THEN 1 ELSE 2 END, module LIMIT 1`, platformID).Scan(&module, &cursor, &sent)
	if errors.Is(err, store.ErrNoRows) {
		return false, 0, nil
	}
	if err != nil {
		return false, 0, err
	}
	var backlog int
	if err := h.db.Read().QueryRow(ctx, `SELECT COUNT(*) FROM hub_push WHERE platform_id = $1 AND module = $2
		AND state IN ('pending', 'leased')`, platformID, module).Scan(&backlog); err != nil {
		return false, 0, err
	}
	if backlog >= h.cfg.LoadBatch {
		return true, h.cfg.LoadPace, nil
	}
	var done bool
	var n int
	err = h.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		// The row's cursor under the transaction's lock: two runs of the
		// step never send one batch twice.
		var cur int64
		if err := tx.QueryRow(ctx, `UPDATE hub_initial_load SET cursor = cursor WHERE platform_id = $1 AND module = $2 AND done_at = 0
			RETURNING cursor`, platformID, module).Scan(&cur); err != nil {
			if errors.Is(err, store.ErrNoRows) {
				return nil // finished or dropped meanwhile
			}
			return err
		}
		var last int64
		var err error
		if module == ModuleClientInfo {
			last, n, done, err = h.parties.LoadClientInfo(ctx, tx, platformID, cur, h.cfg.LoadBatch)
		} else {
			last, n, done, err = h.loadObjects(ctx, tx, platformID, module, cur)
		}
		if err != nil {
			return err
		}
		doneAt := int64(0)
		if done {
			doneAt = h.now()
		}
		_, err = tx.Exec(ctx, "UPDATE hub_initial_load SET cursor = $1, sent = sent + $2, done_at = $3 WHERE platform_id = $4 AND module = $5",
			last, n, doneAt, platformID, module)
		return err
	})
	if err != nil {
		return false, 0, err
	}
	if done {
		h.logger.InfoContext(ctx, "initial load sent", "platform_id", platformID, "module", module, "objects", sent+int64(n))
	}
	return true, h.cfg.LoadPace, nil
}

// loadObjects queues full pushes of the next batch of module's objects to
// one receiver, leaving out the objects of its own parties.
func (h *Hub) loadObjects(ctx context.Context, tx *store.Tx, platformID int64, module string, after int64) (last int64, sent int, done bool, err error) {
	src := h.sources[module]
	lister, ok := src.(Lister)
	if !ok {
		return after, 0, true, nil
	}
	var to receiver
	rs, err := h.receivers(ctx, tx, 0, CPOAudience, module)
	if err != nil {
		return after, 0, false, err
	}
	for _, r := range rs {
		if r.PlatformID == platformID {
			to = r
		}
	}
	if to.PlatformID == 0 {
		return after, 0, true, nil // no longer a receiver: the load ends
	}
	own, err := h.route.Hosts(ctx, tx, platformID)
	if err != nil {
		return after, 0, false, err
	}
	// One more than a batch: whether anything is left after it.
	items, err := lister.List(ctx, tx, after, h.cfg.LoadBatch+1)
	if err != nil {
		return after, 0, false, err
	}
	if done = len(items) <= h.cfg.LoadBatch; !done {
		items = items[:h.cfg.LoadBatch]
	}
	last = after
	for _, it := range items {
		last = it.Seq
		if own(it.CountryCode, it.PartyID) {
			continue
		}
		p, ok, err := src.Current(ctx, tx, it.Key)
		if err != nil {
			return after, 0, false, err
		}
		if !ok || p.Method != "PUT" {
			continue
		}
		p.Module, p.ObjectKey, p.Full, p.To = module, it.Key, true, to.To
		if err := h.Enqueue(ctx, tx, platformID, p); err != nil {
			return after, 0, false, err
		}
		sent++
	}
	return last, sent, done, nil
}

// rearmLoads schedules the job of every unfinished initial load (the
// cleanup job runs it, in case a job was lost).
func (h *Hub) rearmLoads(ctx context.Context) error {
	ids, err := store.QueryAll(ctx, h.db.Read(), scanPlatformID, "SELECT DISTINCT platform_id FROM hub_initial_load WHERE done_at = 0")
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := h.jobs.Insert(ctx, InitialLoadArgs{PlatformID: id}, &river.InsertOpts{Queue: jobs.QueuePush,
			UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: loadUniqueStates}}); err != nil {
			return err
		}
	}
	return nil
}

// loadUniqueStates: the cleanup's re-arm adds no job while one of the
// platform's waits or runs.
var loadUniqueStates = []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRetryable,
	rivertype.JobStateRunning, rivertype.JobStateScheduled}
