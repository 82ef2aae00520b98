package webhook

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
)

// Signing follows Standard Webhooks v1: every delivery carries the headers
// webhook-id (the event id, the same on every attempt, for deduplication),
// webhook-timestamp (Unix seconds of the attempt) and webhook-signature, a
// space-separated list of "v1,<base64 HMAC-SHA256(key, id.timestamp.content)>".
//
// The seed also wants the signature inside the body, {event, data,
// signature}, and upi.md §8 says it is "the same value" as the header's. A
// signature cannot cover a body that contains it, so two are made:
//
//	S1 signs {"event":…,"data":…} (the body without its signature field);
//	   the body's signature field is "v1,"+S1.
//	S2 signs the raw body as sent, signature field included.
//
// The header lists both, "v1,S2 v1,S1": a stock Standard Webhooks verifier
// (which signs the raw body) accepts S2, and the body's value appears in the
// header as the seed asks. The body without its signature field is the raw
// body with its final `,"signature":"…"` member cut off, since we always
// write that member last; Verify accepts either form.

// Header names of a delivery.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix marks secrets in the Standard Webhooks form: the key is the
// base64 text after the prefix.
const secretPrefix = "whsec_"

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock before Verify rejects it (replay protection).
const DefaultTolerance = 5 * time.Minute

// Verification errors.
var (
	ErrMissingHeaders   = errors.New("webhook: missing webhook-id, webhook-timestamp or webhook-signature header")
	ErrTimestamp        = errors.New("webhook: timestamp outside the tolerance")
	ErrInvalidSignature = errors.New("webhook: no matching signature")
)

// NewSecret returns a fresh secret in the Standard Webhooks form: "whsec_"
// and the base64 of 32 random bytes.
func NewSecret() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return secretPrefix + base64.StdEncoding.EncodeToString(b[:])
}

// signingKey returns the HMAC key of a secret: the decoded bytes of a
// "whsec_" secret, the secret's own bytes otherwise (what a receiver that
// computes a plain HMAC-SHA256 with the shared secret expects).
func signingKey(secret string) ([]byte, error) {
	if rest, ok := strings.CutPrefix(secret, secretPrefix); ok {
		key, err := base64.StdEncoding.DecodeString(rest)
		if err != nil {
			return nil, fmt.Errorf("webhook: a %s secret must be base64 after the prefix", secretPrefix)
		}
		return key, nil
	}
	if secret == "" {
		return nil, errors.New("webhook: empty secret")
	}
	return []byte(secret), nil
}

// sign returns base64(HMAC-SHA256(key, id + "." + ts + "." + content)).
func sign(key []byte, id string, ts int64, content []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(ts, 10)))
	m.Write([]byte{'.'})
	m.Write(content)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// Payload is the body of a delivery as a receiver decodes it.
type Payload struct {
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data"`
	Signature string          `json:"signature"`
}

// Message is one signed delivery attempt: the body and the header values.
type Message struct {
	ID        string
	Timestamp int64 // Unix seconds
	Body      []byte
	Signature string // the webhook-signature header value
}

// NewMessage builds the signed delivery of an event: the body {event, data,
// signature} and the Standard Webhooks headers, for an attempt at time at.
func NewMessage(secret, id, name string, data json.RawMessage, at time.Time) (Message, error) {
	key, err := signingKey(secret)
	if err != nil {
		return Message{}, err
	}
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	ev, _ := json.Marshal(name)
	var inner bytes.Buffer
	inner.WriteString(`{"event":`)
	inner.Write(ev)
	inner.WriteString(`,"data":`)
	inner.Write(data)
	ts := at.Unix()
	s1 := "v1," + sign(key, id, ts, append(inner.Bytes(), '}'))
	body := inner.Bytes()
	body = append(body, `,"signature":"`...)
	body = append(body, s1...)
	body = append(body, `"}`...)
	s2 := "v1," + sign(key, id, ts, body)
	return Message{ID: id, Timestamp: ts, Body: body, Signature: s2 + " " + s1}, nil
}

// SetHeaders writes the Standard Webhooks headers of m on h.
func (m Message) SetHeaders(h http.Header) {
	h.Set(HeaderID, m.ID)
	h.Set(HeaderTimestamp, strconv.FormatInt(m.Timestamp, 10))
	h.Set(HeaderSignature, m.Signature)
}

// Verify checks a delivery received from ocpihub: the headers are present,
// the timestamp is within DefaultTolerance of the local clock, and one of the
// signatures is the HMAC of the raw body (or of the body without its
// signature field) under secret. Pass the body exactly as received, before
// any JSON decoding.
func Verify(secret string, header http.Header, body []byte) error {
	return VerifyAt(secret, header, body, clock.Real{}.Now(), DefaultTolerance)
}

// VerifyAt is Verify with an explicit clock and tolerance.
func VerifyAt(secret string, header http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	id, tsText, sigs := header.Get(HeaderID), header.Get(HeaderTimestamp), header.Get(HeaderSignature)
	if id == "" || tsText == "" || sigs == "" {
		return ErrMissingHeaders
	}
	ts, err := strconv.ParseInt(tsText, 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	key, err := signingKey(secret)
	if err != nil {
		return err
	}
	want := [][]byte{[]byte(sign(key, id, ts, body))}
	if inner, ok := withoutSignature(body); ok {
		want = append(want, []byte(sign(key, id, ts, inner)))
	}
	for _, sig := range strings.Fields(sigs) {
		version, value, ok := strings.Cut(sig, ",")
		if !ok || version != "v1" {
			continue
		}
		for _, w := range want {
			if hmac.Equal([]byte(value), w) {
				return nil
			}
		}
	}
	return ErrInvalidSignature
}

// withoutSignature returns the body without its final "signature" member.
func withoutSignature(body []byte) ([]byte, bool) {
	body = bytes.TrimRight(body, " \t\r\n")
	i := bytes.LastIndex(body, []byte(`,"signature":"`))
	if i < 0 || !bytes.HasSuffix(body, []byte(`"}`)) {
		return nil, false
	}
	out := make([]byte, 0, i+1)
	out = append(out, body[:i]...)
	return append(out, '}'), true
}
