package idempotency_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// loseAnswers makes storing an answer fail, as if the process died right
// after the request's effect committed and before its answer was stored.
func loseAnswers(t *testing.T, db *store.DB) {
	t.Helper()
	stmts := []string{`CREATE TRIGGER lose_answers BEFORE UPDATE OF status ON idempotency_keys WHEN NEW.status >= 100
		BEGIN SELECT RAISE(ABORT, 'the process died before the answer was stored'); END`}
	if db.Engine() == store.Postgres {
		stmts = []string{`CREATE FUNCTION lose_answers() RETURNS trigger LANGUAGE plpgsql AS $$
			BEGIN IF NEW.status >= 100 THEN RAISE EXCEPTION 'the process died before the answer was stored'; END IF; RETURN NEW; END $$`,
			`CREATE TRIGGER lose_answers BEFORE UPDATE ON idempotency_keys FOR EACH ROW EXECUTE FUNCTION lose_answers()`}
	}
	storetest.Exec(t, db, stmts...)
}

// TestCrashBetweenEffectAndAnswer: the request's effect commits, then the
// process dies before its answer is stored. A retry with the same
// Idempotency-Key (or the identical request with the same X-Request-ID),
// once the claim is stale, must not run the request a second time (issue 15
// item 6: the claim and the effect committed separately, and the retry ran
// it again).
func TestCrashBetweenEffectAndAnswer(t *testing.T) {
	t.Parallel()
	hubtest.EachFake(t, func(t *testing.T, h *hubtest.Hub, clk *clock.Fake) {
		tok := platform(t, h, "CR1")
		loseAnswers(t, h.DB)
		path := "/ocpi/2.2.1/webhooks"
		for i, header := range []http.Header{hdr("Idempotency-Key", "crash-1"), hdr("X-Request-ID", "crash-2")} {
			body := `{"url":"https://hooks.example.com/` + itoa(int64(i)) + `","events":["cdr.created"]}`
			if a := post(t, h, tok, http.MethodPost, path, body, header); a.status != http.StatusCreated {
				t.Fatalf("first attempt: HTTP %d %s", a.status, a.body)
			}
			clk.Add(10 * time.Minute) // the claim is stale: its process is gone
			retry := post(t, h, tok, http.MethodPost, path, body, header)
			if retry.status != http.StatusConflict || retry.env.Error == nil || !strings.Contains(retry.env.Error.Description, "already processed") {
				t.Errorf("retry %v: HTTP %d %s", header, retry.status, retry.body)
			}
			if n := storetest.Count(t, h.DB, subsCount); n != i+1 {
				t.Fatalf("retry %v ran the request again: %d subscriptions, want %d", header, n, i+1)
			}
		}
	})
}
