package traffic

import (
	"context"

	"github.com/ocpihub/ocpihub/internal/ocpiclient"
	"github.com/ocpihub/ocpihub/internal/party"
)

// ObserveCall records one attempt of an outgoing call; it implements
// ocpiclient.Observer.
func (r *Recorder) ObserveCall(ctx context.Context, a ocpiclient.Attempt) {
	if !r.Recording() {
		return
	}
	req := a.Request
	c := &Capture{At: r.clock.Now().Add(-a.Duration), Direction: Out, PlatformID: req.PlatformID, Partner: req.Partner,
		Module: req.Module, Method: req.Method, URL: req.URL, Duration: a.Duration, RequestID: req.RequestID,
		CorrelationID: req.CorrelationID, FromParty: partyLabel(req.From), ToParty: partyLabel(req.To),
		RequestHeader: a.Header.Clone(), RequestBody: capped(a.Body)}
	if a.Response != nil {
		c.HTTPStatus = a.Response.HTTPStatus
		c.ResponseHeader = a.Response.Header.Clone()
		c.ResponseBody = capped(a.Response.Body)
	}
	if a.Err != nil && a.Response == nil {
		c.Error = a.Err.Error()
	}
	r.Record(c)
}

func partyLabel(p ocpiclient.Party) string {
	if p.IsZero() {
		return ""
	}
	return party.Notation(p.CountryCode, p.PartyID)
}

func capped(b []byte) []byte {
	if len(b) > CaptureLimit {
		return b[:CaptureLimit]
	}
	return b
}
