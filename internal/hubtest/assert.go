package hubtest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// MustStatus fails the test unless the call got an answer with httpStatus
// and the OCPI status_code code; it returns the answer.
func MustStatus(t testing.TB, resp *ocpiclient.Response, err error, httpStatus, code int) *ocpiclient.Response {
	t.Helper()
	if resp == nil {
		t.Fatalf("call failed: %v", err)
	}
	if resp.HTTPStatus != httpStatus || resp.Envelope == nil || resp.Envelope.StatusCode != code {
		t.Fatalf("got HTTP %d %s, want HTTP %d status_code %d", resp.HTTPStatus, resp.Body, httpStatus, code)
	}
	return resp
}

// MustError is MustStatus for an error answer, which must also name field
// in error.details.field ("": no field); what names the request in the
// report.
func MustError(t testing.TB, what string, resp *ocpiclient.Response, err error, httpStatus, code int, field string) {
	t.Helper()
	MustStatus(t, resp, err, httpStatus, code)
	if got := ErrorField(resp); got != field {
		t.Errorf("%s: field %q (%s), want %q", what, got, resp.Body, field)
	}
}

// ErrorField returns error.details.field of an answer ("" when absent).
func ErrorField(resp *ocpiclient.Response) string {
	if resp.Envelope == nil || resp.Envelope.Error == nil || resp.Envelope.Error.Details == nil {
		return ""
	}
	return resp.Envelope.Error.Details.Field
}

// Data decodes an answer's data as a JSON object.
func Data(t testing.TB, resp *ocpiclient.Response) map[string]any {
	t.Helper()
	var m map[string]any
	if resp.Envelope == nil || json.Unmarshal(resp.Envelope.Data, &m) != nil {
		t.Fatalf("data is not an object: %s", resp.Body)
	}
	return m
}

// HubURL is the hub's endpoint of module in role, as the platform p was
// told of it, followed by suffix; the test fails when the hub lists none.
func HubURL(t testing.TB, p *sim.Platform, module, role, suffix string) string {
	t.Helper()
	base, ok := p.HubEndpoint(module, role)
	if !ok {
		t.Fatalf("hub lists no %s %s", module, role)
	}
	return base + suffix
}

// ToHeader addresses a request to a party (OCPI-to-*).
func ToHeader(cc, pid string) http.Header {
	h := http.Header{}
	h.Set("OCPI-to-country-code", cc)
	h.Set("OCPI-to-party-id", pid)
	return h
}

// Eventually polls cond (a state on the hub's side, where no request to a
// simulator signals a change) every 10 ms until it holds; the test fails
// when ctx ends first.
func Eventually(t testing.TB, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	if err := Until(ctx, 10*time.Millisecond, cond); err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// Until polls cond every interval until it holds (nil) or ctx ends (its
// error), for tests that measure or explain the wait themselves.
func Until(ctx context.Context, interval time.Duration, cond func() bool) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for !cond() {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// WantError reports an error unless an answer is the error expected: HTTP
// status httpStatus, status_code code, and error.details.field field ("":
// an answer that names no field). what names the request in the report.
func WantError(t testing.TB, what string, resp *ocpiclient.Response, httpStatus, code int, field string) {
	t.Helper()
	if resp.HTTPStatus != httpStatus || resp.Envelope == nil || resp.Envelope.StatusCode != code {
		t.Errorf("%s: HTTP %d %s, want HTTP %d status_code %d", what, resp.HTTPStatus, resp.Body, httpStatus, code)
		return
	}
	if got := ErrorField(resp); got != field {
		t.Errorf("%s: error names field %q, want %q: %s", what, got, field, resp.Body)
	}
}

// TimeOrdered fails the test unless every id is one the hub made (ids.New:
// a version 7 UUID) and each sorts after the one before it; what names the
// ids in the report.
func TimeOrdered(t testing.TB, what string, list ...string) {
	t.Helper()
	for i, id := range list {
		u, err := uuid.Parse(id)
		if err != nil || u.Version() != 7 || u.String() != id {
			t.Errorf("%s: %q is not a time-ordered id (a version 7 UUID in its text form)", what, id)
			return
		}
		if i > 0 && id <= list[i-1] {
			t.Errorf("%s: %s, made after %s, sorts before it", what, id, list[i-1])
		}
	}
}
