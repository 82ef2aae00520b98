package ocpiclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/ocpiclient"
)

type bundle struct {
	client *ocpiclient.Client
	mu     sync.Mutex
	sleeps []time.Duration
	reqs   []*http.Request
}

func setup(t *testing.T) *bundle {
	t.Helper()
	b := &bundle{client: ocpiclient.New(nil)}
	b.client.SleepFunc = func(ctx context.Context, d time.Duration) error {
		b.mu.Lock()
		b.sleeps = append(b.sleeps, d)
		b.mu.Unlock()
		return nil
	}
	return b
}

// serve starts a loopback server whose n-th request (0-based) is answered by
// answers[n] (the last answer repeats).
func (b *bundle) serve(t *testing.T, answers ...func(w http.ResponseWriter, r *http.Request)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		n := len(b.reqs)
		b.reqs = append(b.reqs, r.Clone(context.Background()))
		b.mu.Unlock()
		answers[min(n, len(answers)-1)](w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func envelope(code int, data any) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"status_code": code, "data": data, "timestamp": "2026-01-01T00:00:00Z"})
	}
}

func status(code int, header ...string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(code)
	}
}

func TestHeaders(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := b.serve(t, envelope(1000, nil))
	_, err := b.client.Call(context.Background(), ocpiclient.Request{
		Method: http.MethodPut, URL: srv.URL + "/x", Body: map[string]string{"a": "b"},
		Token: "example-token", Base64: true, CorrelationID: "corr-1",
		To: ocpiclient.Party{CountryCode: "NL", PartyID: "TNM"}, From: ocpiclient.Party{CountryCode: "IN", PartyID: "HUB"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := b.reqs[0]
	want := map[string]string{
		"Authorization":          "Token ZXhhbXBsZS10b2tlbg==",
		"X-Correlation-Id":       "corr-1",
		"Content-Type":           "application/json",
		"Ocpi-To-Country-Code":   "NL",
		"Ocpi-To-Party-Id":       "TNM",
		"Ocpi-From-Country-Code": "IN",
		"Ocpi-From-Party-Id":     "HUB",
	}
	for k, v := range want {
		if got := r.Header.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	// Made by the client: a time-ordered id (internal/ids).
	if u, err := uuid.Parse(r.Header.Get("X-Request-Id")); err != nil || u.Version() != 7 {
		t.Errorf("X-Request-ID %q, want a version 7 UUID", r.Header.Get("X-Request-Id"))
	}

	// Raw tokens for legacy partners; no routing headers when not addressed.
	b2 := setup(t)
	srv2 := b2.serve(t, envelope(1000, nil))
	if _, err := b2.client.Call(context.Background(), ocpiclient.Request{Method: http.MethodGet, URL: srv2.URL, Token: "raw-token"}, nil); err != nil {
		t.Fatal(err)
	}
	if got := b2.reqs[0].Header.Get("Authorization"); got != "Token raw-token" {
		t.Errorf("raw Authorization = %q", got)
	}
	if got := b2.reqs[0].Header.Get("OCPI-to-party-id"); got != "" {
		t.Errorf("unexpected OCPI-to-party-id %q", got)
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		answers    []func(http.ResponseWriter, *http.Request)
		wantErr    bool
		wantCalls  int
		wantSleeps []time.Duration // exact; -1 means "some backoff"
	}{
		{"5xx then success", []func(http.ResponseWriter, *http.Request){status(503), envelope(1000, nil)}, false, 2, []time.Duration{-1}},
		{"5xx three times gives up", []func(http.ResponseWriter, *http.Request){status(500)}, true, 3, []time.Duration{-1, -1}},
		{"429 honours Retry-After", []func(http.ResponseWriter, *http.Request){status(429, "Retry-After", "7"), envelope(1000, nil)}, false, 2, []time.Duration{7 * time.Second}},
		{"429 without Retry-After waits 60s", []func(http.ResponseWriter, *http.Request){status(429), envelope(1000, nil)}, false, 2, []time.Duration{60 * time.Second}},
		{"4xx is not retried", []func(http.ResponseWriter, *http.Request){status(401)}, true, 1, nil},
		{"OCPI error is not retried", []func(http.ResponseWriter, *http.Request){envelope(2001, nil)}, true, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			srv := b.serve(t, tt.answers...)
			_, err := b.client.Call(context.Background(), ocpiclient.Request{Method: http.MethodGet, URL: srv.URL}, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if len(b.reqs) != tt.wantCalls {
				t.Fatalf("calls = %d, want %d", len(b.reqs), tt.wantCalls)
			}
			if len(b.sleeps) != len(tt.wantSleeps) {
				t.Fatalf("sleeps = %v, want %d", b.sleeps, len(tt.wantSleeps))
			}
			for i, want := range tt.wantSleeps {
				if want >= 0 && b.sleeps[i] != want {
					t.Errorf("sleep %d = %v, want %v", i, b.sleeps[i], want)
				}
			}
			// Every attempt of one call carries the same X-Request-ID.
			for _, r := range b.reqs {
				if r.Header.Get("X-Request-ID") != b.reqs[0].Header.Get("X-Request-ID") {
					t.Errorf("retries changed X-Request-ID")
				}
			}
		})
	}
}

func TestBackoffGrows(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.client.BackoffBase = 100 * time.Millisecond
	srv := b.serve(t, status(502))
	_, err := b.client.Do(context.Background(), ocpiclient.Request{Method: http.MethodGet, URL: srv.URL, MaxAttempts: 5})
	if ocpiclient.KindOf(err) != ocpiclient.KindHTTP {
		t.Fatalf("err = %v, want KindHTTP", err)
	}
	if len(b.sleeps) != 4 {
		t.Fatalf("sleeps = %v", b.sleeps)
	}
	for i, d := range b.sleeps {
		base := 100 * time.Millisecond << i
		if d < base/2 || d >= base*3/2 {
			t.Errorf("sleep %d = %v, want in [%v, %v)", i, d, base/2, base*3/2)
		}
	}
}

func TestUnreachableAndTimeout(t *testing.T) {
	t.Parallel()
	b := setup(t)
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := b.client.Do(context.Background(), ocpiclient.Request{Method: http.MethodGet, URL: url, MaxAttempts: 1})
	if ocpiclient.KindOf(err) != ocpiclient.KindUnreachable {
		t.Fatalf("closed port: err = %v, want KindUnreachable", err)
	}

	block := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	t.Cleanup(func() { close(block); slow.Close() })
	_, err = b.client.Do(context.Background(), ocpiclient.Request{Method: http.MethodGet, URL: slow.URL, MaxAttempts: 1, Timeout: 50 * time.Millisecond})
	if ocpiclient.KindOf(err) != ocpiclient.KindTimeout {
		t.Fatalf("slow server: err = %v, want KindTimeout", err)
	}
}

func TestDiscoverPicksHighestCommonVersion(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var srv *httptest.Server
	srv = b.serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/versions":
			envelope(1000, []ocpi.Version{{Version: "2.1.1", URL: srv.URL + "/211"}, {Version: "2.2.1", URL: srv.URL + "/221"}, {Version: "3.0", URL: srv.URL + "/30"}})(w, r)
		case "/221":
			envelope(1000, ocpi.VersionDetails{Version: "2.2.1", Endpoints: []ocpi.Endpoint{{Identifier: "locations", Role: "RECEIVER", URL: srv.URL + "/loc"}}})(w, r)
		default:
			status(404)(w, r)
		}
	})
	v, d, err := b.client.Discover(context.Background(), srv.URL+"/versions", ocpiclient.Auth{Token: "t", Base64: true}, []string{"2.2.1", "2.1.1"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if v.Version != "2.2.1" {
		t.Fatalf("picked %s", v.Version)
	}
	if u, ok := d.Find("locations", "RECEIVER"); !ok || u != srv.URL+"/loc" {
		t.Fatalf("locations receiver = %q %v", u, ok)
	}
	_, _, err = b.client.Discover(context.Background(), srv.URL+"/versions", ocpiclient.Auth{}, []string{"2.0"}, "")
	if _, ok := err.(*ocpiclient.ErrNoCommonVersion); !ok {
		t.Fatalf("no common version: err = %v", err)
	}
}

func TestGetAllFollowsLink(t *testing.T) {
	t.Parallel()
	b := setup(t)
	var srv *httptest.Server
	srv = b.serve(t, func(w http.ResponseWriter, r *http.Request) {
		offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		if r.URL.Query().Get("date_from") != "2026-01-01T00:00:00Z" {
			status(400)(w, r)
			return
		}
		var items []int
		for i := offset; i < min(offset+2, 5); i++ {
			items = append(items, i)
		}
		if offset+2 < 5 {
			w.Header().Set("Link", fmt.Sprintf(`<%s/list?date_from=2026-01-01T00:00:00Z&offset=%d&limit=2>; rel="next"`, srv.URL, offset+2))
		}
		envelope(1000, items)(w, r)
	})
	var got []string
	err := b.client.GetAll(context.Background(), ocpiclient.Request{URL: srv.URL + "/list?date_from=2026-01-01T00:00:00Z&limit=2"}, 0, func(items []json.RawMessage) error {
		for _, it := range items {
			got = append(got, string(it))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[0 1 2 3 4]" {
		t.Fatalf("got %v", got)
	}
}
