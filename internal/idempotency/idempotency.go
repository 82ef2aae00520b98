// Package idempotency remembers the answers to write requests so that a
// repeated request gets the first answer instead of a second effect.
//
// Two kinds of keys exist side by side, per caller: the OCPI X-Request-ID
// of a POST, PUT or PATCH together with the request itself (a partner
// retrying the identical request with the same id gets the stored answer;
// the same id on another request is just another request: OCPI defines
// X-Request-ID for tracing, and partners reuse it), and the Idempotency-Key
// header of our own JSON APIs, with the semantics of
// the IETF draft (draft-ietf-httpapi-idempotency-key-header): 409 while the
// first request is in flight, 422 when the key comes back with a different
// request, the stored answer otherwise. Answers are kept for 24 hours; a
// periodic job deletes expired keys.
//
// The claim commits with the request's effect: Track puts a hook in the
// request's context that marks the claim "applied" inside every write
// transaction the request runs (store.WithCommitHook), so the effect and
// that mark commit together or not at all. The answer is stored right after
// (Finish). A process that dies between the two leaves an applied claim
// without an answer: a retry after StaleAfter is then told the request was
// already processed (State Applied; HTTP 409) and never runs it again; a claim that
// never got as far as an effect (a crash before any commit) is taken over
// and the retry runs.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/sealbox"
	"github.com/ocpihub/ocpihub/internal/store"
)

// Key kinds.
const (
	KindRequestID = "request-id"
	KindKey       = "idempotency-key"
)

const (
	// TTL is how long an answer is kept.
	TTL = 24 * time.Hour
	// StaleAfter is when a claim whose request never finished (the process
	// died) may be taken over by a retry.
	StaleAfter = 5 * time.Minute
)

// State is what Begin found.
type State int

// States of a claim.
const (
	// Proceed: the key is new (or expired): run the request, then Finish.
	Proceed State = iota + 1
	// Replay: the request was answered; Response holds the answer.
	Replay
	// InFlight: the first request with this key is still running.
	InFlight
	// Mismatch: the key was used for a different request.
	Mismatch
	// Applied: the request's effect committed but its answer was never
	// stored (the process died in between): do not run it again.
	Applied
)

// statusApplied is the status of a claim whose effect committed and whose
// answer is not stored yet (0: nothing committed; an HTTP status: answered).
const statusApplied = 1

// RequestIDKey is the key of a request carrying an X-Request-ID: the id
// with the request's fingerprint, so that only the identical request
// (method, path, query, body) with the same id is a repeat.
func RequestIDKey(requestID, fingerprint string) string {
	return requestID + " " + fingerprint
}

// Request identifies a request: who sent it, the kind and value of its key,
// and a fingerprint of the request itself (method, path, body).
type Request struct {
	Caller      string
	Kind        string
	Key         string
	Fingerprint string
}

// Response is a stored answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Fingerprint identifies a request for key comparison: its method, path,
// query and body.
func Fingerprint(method, path, rawQuery string, body []byte) string {
	h := sha256.New()
	io.WriteString(h, method+" "+path+"?"+rawQuery+"\n")
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// Claim is the outcome of Begin.
type Claim struct {
	State    State
	Response *Response
	id       int64
}

// Store keeps keys and answers.
type Store struct {
	db    *store.DB
	clock clock.Clock
	box   *sealbox.Box
}

// New returns a Store and registers its cleanup worker on jc. Answers are
// stored sealed by box, like the hub's other secrets: some carry one (the
// signing secret in the answer to a webhook subscription), and a replay must
// give it back. A nil box (or one without a key) marks them plain.
func New(db *store.DB, jc *jobs.Client, clk clock.Clock, box *sealbox.Box) *Store {
	clk = clock.OrReal(clk)
	s := &Store{db: db, clock: clk, box: box}
	if jc != nil {
		jobs.AddWorker(jc, jobs.CountedTask[pruneArgs](s.Prune))
	}
	return s
}

// Schedule adds the hourly cleanup of expired keys to jc.
func (s *Store) Schedule(jc *jobs.Client) {
	jc.Every(time.Hour, pruneArgs{}, "")
}

// Begin claims a key for a request, or says why the request must not run.
func (s *Store) Begin(ctx context.Context, req Request) (Claim, error) {
	var claim Claim
	err := s.db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		now := s.clock.Now()
		us, expires := now.UnixMicro(), now.Add(TTL).UnixMicro()
		err := tx.QueryRow(ctx, `INSERT INTO idempotency_keys (caller, kind, key, fingerprint, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (caller, kind, key) DO NOTHING RETURNING id`,
			req.Caller, req.Kind, req.Key, req.Fingerprint, us, expires).Scan(&claim.id)
		if err == nil {
			claim.State = Proceed
			return nil
		}
		if !errors.Is(err, store.ErrNoRows) {
			return err
		}
		var fp string
		var status int
		var created, exp int64
		var header, body []byte
		if err := tx.QueryRow(ctx, `SELECT id, fingerprint, status, header, body, created_at, expires_at FROM idempotency_keys
			WHERE caller = $1 AND kind = $2 AND key = $3`, req.Caller, req.Kind, req.Key).
			Scan(&claim.id, &fp, &status, &header, &body, &created, &exp); err != nil {
			return err
		}
		stale := created <= now.Add(-StaleAfter).UnixMicro()
		if exp <= us || (status == 0 && stale) {
			// Expired, or abandoned by a process that died: start over.
			_, err := tx.Exec(ctx, `UPDATE idempotency_keys SET fingerprint = $1, status = 0, header = NULL, body = NULL,
				created_at = $2, expires_at = $3 WHERE id = $4`, req.Fingerprint, us, expires, claim.id)
			claim.State = Proceed
			return err
		}
		switch {
		case fp != req.Fingerprint:
			claim.State = Mismatch
		case status == 0 || (status == statusApplied && !stale):
			claim.State = InFlight
		case status == statusApplied:
			claim.State = Applied
		default:
			claim.State = Replay
			plain, err := s.box.Open(string(body))
			if err != nil {
				return fmt.Errorf("the stored answer of %s %q: %w", req.Kind, req.Key, err)
			}
			claim.Response = &Response{Status: status, Header: http.Header{}, Body: []byte(plain)}
			if len(header) > 0 {
				if err := json.Unmarshal(header, &claim.Response.Header); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return claim, err
}

// Wait waits, reading without locks, until the request holding req's key is
// no longer in flight (answered, abandoned, or taken over as stale), or ctx
// ends. Call Begin again afterwards.
func (s *Store) Wait(ctx context.Context, req Request) error {
	tick := time.NewTicker(25 * time.Millisecond)
	defer tick.Stop()
	for {
		var status int
		var created int64
		err := s.db.Read().QueryRow(ctx, "SELECT status, created_at FROM idempotency_keys WHERE caller = $1 AND kind = $2 AND key = $3",
			req.Caller, req.Kind, req.Key).Scan(&status, &created)
		if errors.Is(err, store.ErrNoRows) || (err == nil && (status > statusApplied || created <= s.clock.Now().Add(-StaleAfter).UnixMicro())) {
			return nil
		}
		if err != nil {
			return err
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Track returns ctx with a commit hook that marks claim applied inside
// every write transaction run under it: the request's effect and the mark
// commit together. Run the request under the returned context.
func (s *Store) Track(ctx context.Context, claim Claim) context.Context {
	return store.WithCommitHook(ctx, func(ctx context.Context, tx *store.Tx) error {
		if tx.DB() != s.db {
			return nil // a transaction on another database (the sandbox's)
		}
		_, err := tx.Exec(ctx, "UPDATE idempotency_keys SET status = $1 WHERE id = $2 AND status = 0", statusApplied, claim.id)
		return err
	})
}

// Finish stores the answer of a claimed request.
func (s *Store) Finish(ctx context.Context, claim Claim, resp Response) error {
	header, err := json.Marshal(resp.Header)
	if err != nil {
		return err
	}
	return s.db.InTx(context.WithoutCancel(ctx), func(ctx context.Context, tx *store.Tx) error {
		_, err := tx.Exec(ctx, "UPDATE idempotency_keys SET status = $1, header = $2, body = $3 WHERE id = $4",
			resp.Status, string(header), []byte(s.box.Seal(string(resp.Body))), claim.id)
		return err
	})
}

// Abandon releases a claim whose request failed in a way worth retrying (a
// server error) before any of its effect committed: the next request with
// the key runs again. If part of its effect did commit, running it again
// could do that part twice: resp is stored as its answer instead.
func (s *Store) Abandon(ctx context.Context, claim Claim, resp Response) error {
	var n int64
	err := s.db.InTx(context.WithoutCancel(ctx), func(ctx context.Context, tx *store.Tx) error {
		var err error
		n, err = tx.Exec(ctx, "DELETE FROM idempotency_keys WHERE id = $1 AND status = 0", claim.id)
		return err
	})
	if err != nil || n == 1 {
		return err
	}
	return s.Finish(ctx, claim, resp)
}

// Prune deletes expired keys in batches and returns how many.
func (s *Store) Prune(ctx context.Context) (int64, error) {
	return s.db.DeleteBatches(ctx, 5000,
		"DELETE FROM idempotency_keys WHERE id IN (SELECT id FROM idempotency_keys WHERE expires_at <= $1 LIMIT 5000)", s.clock.Now().UnixMicro())
}

type pruneArgs struct{}

// Kind implements river.JobArgs.
func (pruneArgs) Kind() string { return "idempotency_prune" }
