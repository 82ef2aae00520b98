package traffic_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/demo"
	"github.com/ocpihub/ocpihub/internal/devgw"
	"github.com/ocpihub/ocpihub/internal/sim/pgsim"
	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
	"github.com/ocpihub/ocpihub/internal/traffic"
)

// TestNoSecretInRecordedTraffic runs the whole demo (registrations, token
// rotation-free charging, UPI, Direct Payment, webhooks) with the traffic
// recorder on, then reads every stored exchange back — URL, headers,
// bodies, errors — and the raw database file, and looks for every token and
// secret the run used, as they are and Base64-encoded.
//
// It runs apart from the package's parallel tests: the demo's stories wait
// at most a minute each, and a busy machine should not decide them.
func TestNoSecretInRecordedTraffic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	var secrets []string
	var out bytes.Buffer
	_, err := demo.Run(ctx, demo.Options{Addr: "127.0.0.1:0", Dir: dir, Logger: slog.New(slog.DiscardHandler), Out: &out,
		AfterStories: func(ctx context.Context, env *demo.Env) {
			secrets = append(secrets, env.AdminToken)
			for _, p := range env.Parties {
				secrets = append(secrets, p.Token(), p.TokenIn())
			}
			if sim := devgw.PG(env.Hub); sim != nil {
				secrets = append(secrets, sim.KeySecret(), pgsim.DefaultWebhookSecret)
			}
			// A partner subscribes to webhooks: the answer carries the
			// signing secret, through the recorder.
			resp, err := env.EMSPs[0].Raw(ctx, http.MethodPost, env.Hub.PublicURL()+"/ocpi/2.2.1/webhooks",
				map[string]any{"url": env.Webhooks.URL(), "events": []string{"session.started"}}, nil)
			if err != nil || resp.Envelope == nil {
				t.Errorf("webhook subscription: %v", err)
				return
			}
			var sub struct {
				Secret string `json:"secret"`
			}
			if err := json.Unmarshal(resp.Envelope.Data, &sub); err != nil || sub.Secret == "" {
				t.Errorf("webhook subscription answer: %s", resp.Body)
			}
			secrets = append(secrets, sub.Secret)
			if err := env.Hub.Traffic.Flush(ctx); err != nil {
				t.Error(err)
			}
		}})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}

	var needles []string
	for _, s := range secrets {
		if len(s) < 8 {
			continue
		}
		needles = append(needles, s, base64.StdEncoding.EncodeToString([]byte(s)))
	}
	if len(needles) < 20 {
		t.Fatalf("only %d secrets collected", len(needles))
	}

	dbPath := filepath.Join(dir, "ocpihub.db")
	db, err := store.Open(ctx, "sqlite:"+dbPath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var all []traffic.Exchange
	var before int64
	for {
		xs, next, err := traffic.List(ctx, db.Read(), traffic.Filter{Bodies: true, Limit: traffic.MaxLimit, Before: before})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, xs...)
		if next == 0 {
			break
		}
		before = next
	}
	modules := map[string]int{}
	redactedAuth, redactedToken := 0, 0
	for _, x := range all {
		modules[x.Module]++
		b, _ := json.Marshal(x)
		text := string(b)
		for _, n := range needles {
			if strings.Contains(text, n) {
				t.Errorf("exchange %d (%s %s) holds a secret: %s", x.ID, x.Method, x.URL, text)
			}
		}
		if x.RequestHeader.Get("Authorization") == traffic.Redacted {
			redactedAuth++
		}
		if strings.Contains(x.RequestBody+x.ResponseBody, `"token":"[redacted]"`) {
			redactedToken++
		}
	}
	// The run is what it claims: many exchanges of every kind, tokens in
	// headers and credentials bodies that were there to redact.
	for _, m := range []string{"credentials", "versions", "locations", "tokens", "sessions", "cdrs", "commands", "payments", "webhooks"} {
		if modules[m] == 0 {
			t.Errorf("no %s exchange recorded (%v)", m, modules)
		}
	}
	if len(all) < 100 || redactedAuth < 50 || redactedToken < 5 {
		t.Errorf("%d exchanges, %d with a redacted Authorization, %d with a redacted credentials token", len(all), redactedAuth, redactedToken)
	}

	// Every other table too, read as text: none keeps a secret in clear
	// (idempotency_keys keeps the answer of a webhook subscription's
	// create, its secret included, sealed).
	for _, table := range storetest.Column[string](t, ctx, db.Read(), "SELECT name FROM sqlite_master WHERE type = 'table'") {
		if strings.HasPrefix(table, "sqlite_") {
			continue
		}
		text := tableText(t, ctx, db.SQLDB(), table)
		for _, n := range needles {
			if i := strings.Index(text, n); i >= 0 {
				t.Errorf("table %s holds a secret in clear: %q", table, text[max(i-200, 0):min(i+50, len(text))])
			}
		}
	}
}

// tableText returns every value of a table as text.
func tableText(t *testing.T, ctx context.Context, db *sql.DB, table string) string {
	t.Helper()
	rows, err := db.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var sb strings.Builder
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			switch v := v.(type) {
			case []byte:
				sb.Write(v)
			case string:
				sb.WriteString(v)
			}
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}
