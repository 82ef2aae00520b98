package hub

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/instance"
	"github.com/ocpihub/ocpihub/internal/store"
)

// A receiver's pushes are sent by one process at a time, the holder of the
// receiver's lease (hub_receiver_lease). Pushes carry no lease of their own:
// a claim that runs while its process holds the receiver writes nothing, and
// the lease is taken or extended (one row) only when less than two thirds of
// it is left. Within the process the receiver's worker is the only one that
// claims, sends and settles its pushes, one batch after another
// (delivery.Engine), so one object is never in flight twice and its pushes
// leave in order.
//
// The lease lasts Config.Lease (10 s). It is renewed every third of it while
// a batch is in flight, so a slow receiver keeps its holder; a holder that
// stops renewing (killed, or stopped) loses it when it runs out, or at once
// to a process that can tell it is gone (instance.ID.Gone: a restart on the
// same machine). A holder whose worker found nothing to do for ReleaseAfter
// hands the receiver back (one write), so a change that another replica
// takes reaches the receiver through that replica at its next claim (a
// replica that finds the receiver held looks again within ReleaseAfter);
// Stop hands every lease back.
//
// A holder that lost its lease (its renewals failed for a whole lease, and
// another process took the receiver) may still record the outcomes of what
// it had sent: an outcome changes only a push that is still open, so none
// is closed twice.

// ReleaseAfter is how long a receiver's worker waits for more work before it
// ends and hands the receiver back; a replica that finds a receiver held by
// another live process looks again after as long (or when the lease ends).
// At a steady stream of changes the worker never waits that long and the
// lease is written only every third of it.
const ReleaseAfter = 250 * time.Millisecond

// receiverLeases is what this process holds.
type receiverLeases struct {
	// token names this process in every lease it holds.
	token string
	mu    sync.Mutex
	// until is the end of each lease this process wrote, by receiver.
	until map[int64]int64
}

func newReceiverLeases(id instance.ID) *receiverLeases {
	return &receiverLeases{token: id.Token("receivers"), until: map[int64]int64{}}
}

func (l *receiverLeases) get(platformID int64) (int64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	u, ok := l.until[platformID]
	return u, ok
}

func (l *receiverLeases) set(platformID, until int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.until[platformID] = until
}

func (l *receiverLeases) drop(platformID int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.until, platformID)
}

// leasePlan is what a claim must write to hold its receiver's lease.
type leasePlan struct {
	// write: the claim's transaction takes or extends the lease.
	write bool
	// found: a lease row exists; token and until are what was read of it.
	found bool
	token string
	until int64
}

// errLeaseTaken: another process took the lease between the read and the
// claim's transaction.
var errLeaseTaken = errors.New("the receiver's lease was taken by another process")

// planLease decides whether this process may claim platformID's pushes at
// now, and what the claim must write for it. A receiver held by a live
// process other than this one returns busy with its lease's end. It reads
// on the read pool, before any transaction.
func (h *Hub) planLease(ctx context.Context, platformID, now int64) (p leasePlan, busyUntil int64, err error) {
	if u, ok := h.leases.get(platformID); ok && u-now >= h.cfg.Lease.Microseconds()*2/3 {
		return p, 0, nil
	}
	err = h.db.Read().QueryRow(ctx, "SELECT lease_token, lease_until FROM hub_receiver_lease WHERE platform_id = $1", platformID).
		Scan(&p.token, &p.until)
	switch {
	case errors.Is(err, store.ErrNoRows):
		return leasePlan{write: true}, 0, nil
	case err != nil:
		return p, 0, err
	}
	p.found, p.write = true, true
	if p.token == h.leases.token || p.until <= now || h.cfg.Instance.Gone(instance.Holder(p.token)) {
		return p, 0, nil
	}
	h.leases.drop(platformID)
	return leasePlan{}, p.until, nil
}

// takeLease writes p in tx: the lease of platformID is this process' until
// until. It fails with errLeaseTaken when the row is no longer what
// planLease read.
func (h *Hub) takeLease(ctx context.Context, tx *store.Tx, platformID int64, p leasePlan, until int64) error {
	if !p.write {
		return nil
	}
	var n int64
	var err error
	if p.found {
		n, err = tx.Exec(ctx, `UPDATE hub_receiver_lease SET lease_token = $1, lease_until = $2
			WHERE platform_id = $3 AND lease_token = $4 AND lease_until = $5`, h.leases.token, until, platformID, p.token, p.until)
	} else {
		n, err = tx.Exec(ctx, `INSERT INTO hub_receiver_lease (platform_id, lease_token, lease_until) VALUES ($1, $2, $3)
			ON CONFLICT (platform_id) DO NOTHING`, platformID, h.leases.token, until)
	}
	if err == nil && n != 1 {
		err = errLeaseTaken
	}
	return err
}

// renewLease extends this process' lease of platformID while a batch is in
// flight.
func (h *Hub) renewLease(ctx context.Context, platformID int64) error {
	until := h.now() + h.cfg.Lease.Microseconds()
	n, err := h.db.Write(ctx, "UPDATE hub_receiver_lease SET lease_until = $1 WHERE platform_id = $2 AND lease_token = $3",
		until, platformID, h.leases.token)
	if err != nil {
		return err
	}
	if n != 1 {
		h.leases.drop(platformID)
		return errLeaseTaken
	}
	h.leases.set(platformID, until)
	return nil
}

// Release implements delivery.Releaser: the receiver's worker ends, and
// another replica may take the receiver at once.
func (q pushQueue) Release(ctx context.Context, platformID int64) {
	if _, ok := q.h.leases.get(platformID); ok {
		q.h.leases.drop(platformID)
		q.h.handBack(context.WithoutCancel(ctx), platformID)
	}
}

// releaseLeases hands back every lease this process holds (Stop): another
// replica, or this one restarted, takes the receivers at once.
func (h *Hub) releaseLeases(ctx context.Context) {
	h.leases.mu.Lock()
	n := len(h.leases.until)
	clear(h.leases.until)
	h.leases.mu.Unlock()
	if n > 0 {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		h.handBack(ctx, 0)
	}
}

// handBack ends this process' lease of platformID (of every receiver when
// 0) in the database.
func (h *Hub) handBack(ctx context.Context, platformID int64) {
	if _, err := h.db.Write(ctx, "UPDATE hub_receiver_lease SET lease_until = 0 WHERE lease_token = $1 AND (platform_id = $2 OR $2 = 0)",
		h.leases.token, platformID); err != nil {
		h.logger.WarnContext(ctx, "could not hand receivers back; their leases run out by themselves", "platform_id", platformID, "error", err)
	}
}
