package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ocpihub/ocpihub/internal/authguard"
	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/httpapi/route"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/party"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// switchAuth answers as the registry would: the admin for the admin token,
// unknown for any other, or err for every token while err is set (the
// registry cannot be read).
type switchAuth struct {
	mu  sync.Mutex
	err error
}

func (a *switchAuth) set(err error) { a.mu.Lock(); a.err = err; a.mu.Unlock() }

func (a *switchAuth) Authenticate(_ context.Context, tokens []string) (*party.Caller, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.err != nil:
		return nil, a.err
	case len(tokens) > 0 && tokens[len(tokens)-1] == "the-admin-token":
		return &party.Caller{Kind: party.CallerAdmin, Name: "admin"}, nil
	}
	return nil, &ocpi.Error{Code: ocpi.EUNAUTHORIZED, Message: "unknown token"}
}

// TestGuardCountsUnknownTokensOnly: an authentication that fails because
// the registry cannot be read (its database away) is a server error and
// no guess: the client is not blocked once the registry answers again.
// Unknown tokens still count, and block it.
func TestGuardCountsUnknownTokensOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		auth := &switchAuth{}
		s := New(Config{Logger: slog.New(slog.DiscardHandler), Registry: prometheus.NewRegistry(), Auth: auth,
			AuthGuard: authguard.New(db, clock.OrReal(nil), 3, time.Hour)})
		s.add(route.Row{Pattern: "GET /admin/test/who", Access: route.Admin, Handler: func(w http.ResponseWriter, r *http.Request) error {
			return s.kit.OK(w, map[string]string{"who": "admin"})
		}})
		ts := httptest.NewServer(s)
		defer ts.Close()
		get := func(token string) int {
			t.Helper()
			req, _ := http.NewRequest(http.MethodGet, ts.URL+"/admin/test/who", nil)
			req.Header.Set("Authorization", "Token "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		auth.set(errors.New("read tcp: connection reset by peer"))
		for i := range 5 {
			if got := get("the-admin-token"); got != http.StatusInternalServerError {
				t.Fatalf("request %d while the registry cannot be read: HTTP %d, want 500", i+1, got)
			}
		}
		auth.set(nil)
		if got := get("the-admin-token"); got != http.StatusOK {
			t.Fatalf("once the registry answers again: HTTP %d, want 200 (the errors were counted as guesses)", got)
		}
		for range 3 {
			get("a-guess")
		}
		if got := get("the-admin-token"); got != http.StatusTooManyRequests {
			t.Errorf("after three unknown tokens: HTTP %d, want 429", got)
		}
	})
}
