package webhook_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/webhook"
)

// standardSignature is the Standard Webhooks v1 algorithm written from the
// specification, independently of the package: the key is the base64 text
// after "whsec_", the signed content is "{id}.{timestamp}.{body}", the
// signature is base64(HMAC-SHA256).
func standardSignature(t *testing.T, secret, id, ts string, body []byte) string {
	t.Helper()
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatalf("secret is not a Standard Webhooks secret: %v", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "." + string(body)))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// standardVerify accepts a delivery the way a stock Standard Webhooks
// verifier does: one of the space-separated "v1,<sig>" entries equals the
// signature of the raw body.
func standardVerify(t *testing.T, secret string, h http.Header, body []byte) bool {
	t.Helper()
	want := standardSignature(t, secret, h.Get("webhook-id"), h.Get("webhook-timestamp"), body)
	for _, s := range strings.Split(h.Get("webhook-signature"), " ") {
		if v, ok := strings.CutPrefix(s, "v1,"); ok && v == want {
			return true
		}
	}
	return false
}

func TestMessageSignaturesFollowStandardWebhooks(t *testing.T) {
	t.Parallel()
	secret := webhook.NewSecret()
	if !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("generated secret %q lacks the whsec_ prefix", secret)
	}
	at := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	data := json.RawMessage(`{"session_id":"S1","location_id":"L1","evse_id":"E1","timestamp":"2025-03-01T10:00:00Z"}`)
	msg, err := webhook.NewMessage(secret, "evt-1", "session.started", data, at)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	msg.SetHeaders(h)
	if h.Get("webhook-id") != "evt-1" || h.Get("webhook-timestamp") != strconv.FormatInt(at.Unix(), 10) {
		t.Fatalf("headers: %v", h)
	}
	if !standardVerify(t, secret, h, msg.Body) {
		t.Fatalf("a Standard Webhooks verifier rejects the delivery: %s %s", h.Get("webhook-signature"), msg.Body)
	}

	// The body is the seed's {event, data, signature}; its signature signs
	// the body without the signature field and is listed in the header.
	var p struct {
		Event     string          `json:"event"`
		Data      json.RawMessage `json:"data"`
		Signature string          `json:"signature"`
	}
	if err := json.Unmarshal(msg.Body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Event != "session.started" || string(p.Data) != string(data) {
		t.Fatalf("body %s", msg.Body)
	}
	inner := []byte(`{"event":"session.started","data":` + string(data) + `}`)
	if want := "v1," + standardSignature(t, secret, "evt-1", h.Get("webhook-timestamp"), inner); p.Signature != want {
		t.Fatalf("body signature %q, want %q", p.Signature, want)
	}
	if !strings.Contains(h.Get("webhook-signature"), p.Signature) {
		t.Fatalf("header %q does not list the body's signature %q", h.Get("webhook-signature"), p.Signature)
	}
}

func TestVerify(t *testing.T) {
	t.Parallel()
	secret := webhook.NewSecret()
	now := time.Now()
	msg, err := webhook.NewMessage(secret, "evt-2", "location.updated", json.RawMessage(`{"location_id":"L1"}`), now)
	if err != nil {
		t.Fatal(err)
	}
	headers := func() http.Header {
		h := http.Header{}
		msg.SetHeaders(h)
		return h
	}
	if err := webhook.Verify(secret, headers(), msg.Body); err != nil {
		t.Fatalf("genuine delivery: %v", err)
	}
	// Only the body's own signature (a proxy that kept one header entry).
	h := headers()
	var p webhook.Payload
	_ = json.Unmarshal(msg.Body, &p)
	h.Set("webhook-signature", p.Signature)
	if err := webhook.Verify(secret, h, msg.Body); err != nil {
		t.Fatalf("body signature alone: %v", err)
	}

	tampered := []byte(strings.Replace(string(msg.Body), "L1", "L2", 1))
	cases := []struct {
		name   string
		secret string
		header http.Header
		body   []byte
		now    time.Time
		want   error
	}{
		{"tampered body", secret, headers(), tampered, now, webhook.ErrInvalidSignature},
		{"other secret", webhook.NewSecret(), headers(), msg.Body, now, webhook.ErrInvalidSignature},
		{"too old", secret, headers(), msg.Body, now.Add(6 * time.Minute), webhook.ErrTimestamp},
		{"from the future", secret, headers(), msg.Body, now.Add(-6 * time.Minute), webhook.ErrTimestamp},
		{"no headers", secret, http.Header{}, msg.Body, now, webhook.ErrMissingHeaders},
		{"other id", secret, func() http.Header { h := headers(); h.Set("webhook-id", "evt-3"); return h }(), msg.Body, now, webhook.ErrInvalidSignature},
		{"v2 only", secret, func() http.Header {
			h := headers()
			h.Set("webhook-signature", strings.ReplaceAll(h.Get("webhook-signature"), "v1,", "v2,"))
			return h
		}(), msg.Body, now, webhook.ErrInvalidSignature},
	}
	for _, c := range cases {
		if err := webhook.VerifyAt(c.secret, c.header, c.body, c.now, webhook.DefaultTolerance); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
}

func TestPlainSecretIsUsedAsItsBytes(t *testing.T) {
	t.Parallel()
	secret := "my-shared-secret-0123"
	msg, err := webhook.NewMessage(secret, "evt-4", "cdr.created", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	msg.SetHeaders(h)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("evt-4." + h.Get("webhook-timestamp") + "." + string(msg.Body)))
	if want := "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)); !strings.Contains(h.Get("webhook-signature"), want) {
		t.Fatalf("signature %q lacks the plain-secret HMAC %q", h.Get("webhook-signature"), want)
	}
	if err := webhook.Verify(secret, h, msg.Body); err != nil {
		t.Fatal(err)
	}
}
