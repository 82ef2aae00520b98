package webhook_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ocpihub/ocpihub/internal/webhook"
)

// A receiver verifies each delivery against the raw body before it trusts
// it, and deduplicates on webhook-id (deliveries are at least once).
func ExampleVerify() {
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // shown once when the subscription was created

	receiver := func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := webhook.Verify(secret, r.Header, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		var p webhook.Payload
		if err := json.Unmarshal(body, &p); err != nil {
			http.Error(w, "bad JSON", http.StatusBadRequest)
			return
		}
		fmt.Printf("%s %s\n", p.Event, p.Data)
		w.WriteHeader(http.StatusNoContent)
	}

	// What ocpihub sends: a signed body and the Standard Webhooks headers.
	msg, _ := webhook.NewMessage(secret, "0b6a1f9e-5a8c-4c57-9d39-1b7b2f3c4d5e", "session.started",
		json.RawMessage(`{"session_id":"S-1","location_id":"LOC-1","evse_id":"IN*OHE*E1","timestamp":"2025-03-01T10:00:00Z"}`), time.Now())
	req := httptest.NewRequest(http.MethodPost, "/hooks", bytes.NewReader(msg.Body))
	msg.SetHeaders(req.Header)
	rec := httptest.NewRecorder()
	receiver(rec, req)
	fmt.Println(rec.Code)

	// A forged copy is refused.
	forged := httptest.NewRequest(http.MethodPost, "/hooks", bytes.NewReader(bytes.Replace(msg.Body, []byte("S-1"), []byte("S-2"), 1)))
	msg.SetHeaders(forged.Header)
	rec = httptest.NewRecorder()
	receiver(rec, forged)
	fmt.Println(rec.Code)
	// Output:
	// session.started {"session_id":"S-1","location_id":"LOC-1","evse_id":"IN*OHE*E1","timestamp":"2025-03-01T10:00:00Z"}
	// 204
	// 401
}
