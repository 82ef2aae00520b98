package idempotency_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/idempotency"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/sealbox"
	"github.com/ocpihub/ocpihub/internal/sim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

type answer struct {
	status int
	header http.Header
	body   []byte
	env    ocpi.Envelope
}

func (a answer) field() string {
	if a.env.Error == nil || a.env.Error.Details == nil {
		return ""
	}
	return a.env.Error.Details.Field
}

func post(t *testing.T, h *hubtest.Hub, token, method, path, body string, header http.Header) answer {
	t.Helper()
	resp := h.Do(t, method, path, token, []byte(body), header)
	a := answer{status: resp.HTTPStatus, header: resp.Header, body: resp.Body}
	if err := json.Unmarshal(resp.Body, &a.env); err != nil {
		t.Fatalf("%s %s: %s", method, path, resp.Body)
	}
	return a
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

func platform(t *testing.T, h *hubtest.Hub, pid string) string {
	t.Helper()
	c := hubtest.Add(t, h, sim.StartCPO, "CPO "+pid, "NL", pid)
	return base64.StdEncoding.EncodeToString([]byte(c.Token()))
}

const subsCount = "SELECT COUNT(*) FROM webhook_subscriptions"

func TestRepeatedRequestIDHasOneEffect(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		tok := platform(t, h, "ID1")
		other := platform(t, h, "ID2")
		body := `{"url":"https://hooks.example.com/a","events":["cdr.created"]}`

		first := post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", body, hdr("X-Request-ID", "req-1"))
		again := post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", body, hdr("X-Request-ID", "req-1"))
		if first.status != http.StatusCreated || again.status != http.StatusCreated || !bytes.Equal(first.body, again.body) {
			t.Fatalf("first HTTP %d %s\nagain HTTP %d %s", first.status, first.body, again.status, again.body)
		}
		if again.header.Get("Idempotent-Replayed") != "true" || again.header.Get("X-Request-ID") != "req-1" || again.header.Get("Location") != first.header.Get("Location") {
			t.Fatalf("replay headers %v", again.header)
		}
		if n := storetest.Count(t, h.DB, subsCount); n != 1 {
			t.Fatalf("%d subscriptions after a repeated request", n)
		}

		// X-Request-ID is for tracing: the same id on another request is a
		// new request (issue 16: a partner reusing ids was locked out with
		// 2001), and a repeat of that one replays its own answer.
		other2 := `{"url":"https://hooks.example.com/b","events":["cdr.created"]}`
		diff := post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", other2, hdr("X-Request-ID", "req-1"))
		if diff.status != http.StatusCreated || diff.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("same id, other body: HTTP %d %s", diff.status, diff.body)
		}
		if n := storetest.Count(t, h.DB, subsCount); n != 2 {
			t.Fatalf("%d subscriptions after a reused id, want 2", n)
		}
		if again := post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", other2, hdr("X-Request-ID", "req-1")); !bytes.Equal(again.body, diff.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("repeat of the second request: HTTP %d %s", again.status, again.body)
		}
		// The first request, repeated again, still gets its own answer.
		if again := post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", body, hdr("X-Request-ID", "req-1")); !bytes.Equal(again.body, first.body) {
			t.Fatalf("repeat of the first request: HTTP %d %s", again.status, again.body)
		}
		if n := storetest.Count(t, h.DB, subsCount); n != 2 {
			t.Fatalf("%d subscriptions after repeats, want 2", n)
		}
		// Ids belong to their caller.
		if a := post(t, h, other, http.MethodPost, "/ocpi/2.2.1/webhooks", body, hdr("X-Request-ID", "req-1")); a.status != http.StatusCreated || a.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("another caller's request: HTTP %d %v", a.status, a.header)
		}
		// Without an X-Request-ID every request runs.
		post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", body, nil)
		post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", body, nil)
		if n := storetest.Count(t, h.DB, subsCount); n != 5 {
			t.Fatalf("%d subscriptions, want 5", n)
		}
		// Reads are never replayed.
		var list []json.RawMessage
		a := post(t, h, tok, http.MethodGet, "/ocpi/2.2.1/webhooks", "", hdr("X-Request-ID", "read-1"))
		_ = json.Unmarshal(a.env.Data, &list)
		n1 := len(list)
		post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", body, nil)
		a = post(t, h, tok, http.MethodGet, "/ocpi/2.2.1/webhooks", "", hdr("X-Request-ID", "read-1"))
		_ = json.Unmarshal(a.env.Data, &list)
		if len(list) != n1+1 {
			t.Fatalf("a GET was answered from the store: %d then %d", n1, len(list))
		}
		// Invitations carry a token A: never stored, so never replayed.
		admin := base64.StdEncoding.EncodeToString([]byte(hubtest.AdminToken))
		i1 := post(t, h, admin, http.MethodPost, "/admin/invitations", `{"name":"x"}`, hdr("X-Request-ID", "inv-1"))
		i2 := post(t, h, admin, http.MethodPost, "/admin/invitations", `{"name":"x"}`, hdr("X-Request-ID", "inv-1"))
		if i1.status != http.StatusCreated || bytes.Equal(i1.env.Data, i2.env.Data) {
			t.Fatalf("invitations: %s / %s", i1.body, i2.body)
		}
	})
}

func TestIdempotencyKey(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		tok := platform(t, h, "IK1")
		body := `{"url":"https://hooks.example.com/a","events":["cdr.created"]}`
		path := "/ocpi/2.2.1/webhooks"

		first := post(t, h, tok, http.MethodPost, path, body, hdr("Idempotency-Key", `"8e03978e-40d5-43e8"`))
		again := post(t, h, tok, http.MethodPost, path, body, hdr("Idempotency-Key", `8e03978e-40d5-43e8`, "X-Request-ID", "whatever"))
		if first.status != http.StatusCreated || !bytes.Equal(first.body, again.body) || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: %s / %s", first.body, again.body)
		}
		diff := post(t, h, tok, http.MethodPost, path, `{"url":"https://hooks.example.com/b","events":["cdr.created"]}`, hdr("Idempotency-Key", "8e03978e-40d5-43e8"))
		if diff.status != http.StatusUnprocessableEntity || diff.field() != "Idempotency-Key" {
			t.Fatalf("other body: HTTP %d %s", diff.status, diff.body)
		}
		// While the first request with a key runs, a second gets 409.
		var pid int64
		if err := h.DB.Read().QueryRow(t.Context(), "SELECT id FROM platforms WHERE name = 'CPO IK1'").Scan(&pid); err != nil {
			t.Fatal(err)
		}
		claim, err := h.Idempotency.Begin(t.Context(), idempotency.Request{Caller: "platform:" + itoa(pid), Kind: idempotency.KindKey, Key: "busy",
			Fingerprint: idempotency.Fingerprint(http.MethodPost, path, "", []byte(body))})
		if err != nil || claim.State != idempotency.Proceed {
			t.Fatalf("claim: %+v %v", claim, err)
		}
		busy := post(t, h, tok, http.MethodPost, path, body, hdr("Idempotency-Key", "busy"))
		if busy.status != http.StatusConflict || busy.header.Get("Retry-After") == "" {
			t.Fatalf("in flight: HTTP %d %s", busy.status, busy.body)
		}
		bad := post(t, h, tok, http.MethodPost, path, body, hdr("Idempotency-Key", strings.Repeat("k", 300)))
		if bad.env.StatusCode != 2001 || bad.field() != "Idempotency-Key" {
			t.Fatalf("long key: %s", bad.body)
		}
		if n := storetest.Count(t, h.DB, subsCount); n != 1 {
			t.Fatalf("%d subscriptions, want 1", n)
		}
	})
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestAnswersExpireAfter24Hours(t *testing.T) {
	t.Parallel()
	clk := clock.NewFake(time.Now().Truncate(time.Second))
	h := hubtest.Start(t, store.SQLite, func(o *hubtest.Options) { o.Clock = clk })
	tok := platform(t, h, "EX1")
	body := `{"url":"https://hooks.example.com/a","events":["cdr.created"]}`
	post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", body, hdr("X-Request-ID", "old"))
	post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", body, hdr("X-Request-ID", "reused"))
	clk.Add(23 * time.Hour)
	if a := post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", body, hdr("X-Request-ID", "reused")); a.header.Get("Idempotent-Replayed") != "true" {
		t.Fatal("not replayed after 23 hours")
	}
	clk.Add(2 * time.Hour)
	if a := post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", body, hdr("X-Request-ID", "reused")); a.status != http.StatusCreated || a.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("replayed after 25 hours: %v", a.header)
	}
	if n := storetest.Count(t, h.DB, subsCount); n != 3 {
		t.Fatalf("%d subscriptions, want 3", n)
	}
	n, err := h.Idempotency.Prune(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("pruned %d (%v), want the expired key", n, err)
	}
	if left := storetest.Count(t, h.DB, "SELECT COUNT(*) FROM idempotency_keys"); left != 1 {
		t.Fatalf("%d keys left", left)
	}
}

func TestClaims(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.NewFake(time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC))
		s := idempotency.New(db, nil, clk, nil)
		ctx := context.Background()
		req := idempotency.Request{Caller: "admin", Kind: idempotency.KindRequestID, Key: "k", Fingerprint: "f"}
		begin := func(r idempotency.Request) idempotency.Claim {
			t.Helper()
			c, err := s.Begin(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		c := begin(req)
		if c.State != idempotency.Proceed {
			t.Fatalf("new key: %v", c.State)
		}
		if got := begin(req).State; got != idempotency.InFlight {
			t.Fatalf("while running: %v", got)
		}
		other := req
		other.Fingerprint = "g"
		if got := begin(other).State; got != idempotency.Mismatch {
			t.Fatalf("other request: %v", got)
		}
		// A claim abandoned by a dead process is taken over.
		clk.Add(idempotency.StaleAfter + time.Second)
		c = begin(req)
		if c.State != idempotency.Proceed {
			t.Fatalf("stale claim: %v", c.State)
		}
		if err := s.Finish(ctx, c, idempotency.Response{Status: 201, Header: http.Header{"Location": {"/x"}}, Body: []byte(`{"a":1}`)}); err != nil {
			t.Fatal(err)
		}
		r := begin(req)
		if r.State != idempotency.Replay || r.Response.Status != 201 || r.Response.Header.Get("Location") != "/x" || string(r.Response.Body) != `{"a":1}` {
			t.Fatalf("replay: %+v", r)
		}
		// A server error releases the key.
		k2 := req
		k2.Key = "k2"
		c = begin(k2)
		if err := s.Abandon(ctx, c, idempotency.Response{Status: 500}); err != nil {
			t.Fatal(err)
		}
		if got := begin(k2).State; got != idempotency.Proceed {
			t.Fatalf("after abandon: %v", got)
		}
	})
}

// TestRepeatedRequestIDWaitsForTheFirst: an OCPI client that retries after
// its own timeout, while the first attempt still runs, gets that attempt's
// answer once it is there (OCPI has no 409).
func TestRepeatedRequestIDWaitsForTheFirst(t *testing.T) {
	t.Parallel()
	h := hubtest.Start(t, store.SQLite)
	tok := platform(t, h, "WT1")
	var pid int64
	if err := h.DB.Read().QueryRow(t.Context(), "SELECT id FROM platforms WHERE name = 'CPO WT1'").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	body := `{"url":"https://hooks.example.com/a","events":["cdr.created"]}`
	fp := idempotency.Fingerprint(http.MethodPost, "/ocpi/2.2.1/webhooks", "", []byte(body))
	req := idempotency.Request{Caller: "platform:" + itoa(pid), Kind: idempotency.KindRequestID, Key: idempotency.RequestIDKey("slow-1", fp),
		Fingerprint: fp}
	claim, err := h.Idempotency.Begin(t.Context(), req)
	if err != nil || claim.State != idempotency.Proceed {
		t.Fatalf("claim: %+v %v", claim, err)
	}
	// The retry is sent while the claim is open; whether it arrives before
	// or after Finish, it must get the first answer and run nothing.
	got := make(chan answer, 1)
	go func() {
		got <- post(t, h, tok, http.MethodPost, "/ocpi/2.2.1/webhooks", body, hdr("X-Request-ID", "slow-1"))
	}()
	stored := []byte(`{"data":{"id":"s-1","url":"https://hooks.example.com/a","events":["cdr.created"],"status":"ACTIVE",` +
		`"created_at":"2025-03-01T10:00:00Z","last_updated":"2025-03-01T10:00:00Z"},"status_code":1000,"status_message":"Success","timestamp":"2025-03-01T10:00:00Z"}`)
	if err := h.Idempotency.Finish(t.Context(), claim, idempotency.Response{Status: http.StatusCreated,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: stored}); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.status != http.StatusCreated || !bytes.Equal(a.body, stored) || a.header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("the retry got HTTP %d %s", a.status, a.body)
	}
	if n := storetest.Count(t, h.DB, subsCount); n != 0 {
		t.Fatalf("the retry ran the request: %d subscriptions", n)
	}
}

// TestAnswersAreSealed: a stored answer can carry a secret (the signing
// secret of a new webhook subscription); with a secret key it is kept
// sealed, and a replay still gives it back whole. An answer stored before
// answers were sealed still replays.
func TestAnswersAreSealed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		box, err := sealbox.New(strings.Repeat("k3y-", 10))
		if err != nil {
			t.Fatal(err)
		}
		s := idempotency.New(db, nil, clock.NewFake(time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)), box)
		ctx := context.Background()
		req := idempotency.Request{Caller: "emsp", Kind: idempotency.KindKey, Key: "sub-1", Fingerprint: "f"}
		c, err := s.Begin(ctx, req)
		if err != nil || c.State != idempotency.Proceed {
			t.Fatalf("new key: %v %v", c.State, err)
		}
		answer := `{"data":{"secret":"whsec_Zm9vYmFyYmF6cXV4"}}`
		if err := s.Finish(ctx, c, idempotency.Response{Status: 201, Body: []byte(answer)}); err != nil {
			t.Fatal(err)
		}
		var stored []byte
		if err := db.Read().QueryRow(ctx, "SELECT body FROM idempotency_keys WHERE key = $1", "sub-1").Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(stored), "whsec_") || !sealbox.IsSealed(string(stored)) {
			t.Errorf("stored answer %q: want it sealed", stored)
		}
		r, err := s.Begin(ctx, req)
		if err != nil || r.State != idempotency.Replay || string(r.Response.Body) != answer {
			t.Fatalf("replay: %+v %v", r, err)
		}
		// An answer written before sealing (no prefix) reads as it is.
		if err := db.InTx(ctx, func(ctx context.Context, tx *store.Tx) error {
			_, err := tx.Exec(ctx, "UPDATE idempotency_keys SET body = $1 WHERE key = $2", []byte(`{"old":true}`), "sub-1")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if r, err := s.Begin(ctx, req); err != nil || string(r.Response.Body) != `{"old":true}` {
			t.Fatalf("old answer: %+v %v", r, err)
		}
	})
}
