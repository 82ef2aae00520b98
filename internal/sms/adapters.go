package sms

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/netguard"
)

// DLT is the registration a transactional SMS carries in India (TRAI's
// TCCCPR 2018): the sender header registered on the DLT platform, the DLT id
// of the content template, and the principal entity (the operator's
// registration).
type DLT struct {
	Sender     string
	TemplateID string
	EntityID   string
}

// Check validates the registration; an error names the field.
func (d DLT) Check() error {
	switch {
	case len(d.Sender) != 6 || strings.ToUpper(d.Sender) != d.Sender:
		return &Error{Field: "sms_sender", Issue: "must be the six-character DLT sender header (e.g. OCPHUB)"}
	case len(d.TemplateID) < 10 || len(d.TemplateID) > 30 || !digits(d.TemplateID):
		return &Error{Field: "sms_template_id", Issue: "must be the DLT content template id (digits)"}
	case len(d.EntityID) < 10 || len(d.EntityID) > 30 || !digits(d.EntityID):
		return &Error{Field: "sms_entity_id", Issue: "must be the DLT principal entity id (digits)"}
	}
	return nil
}

// httpClient is a client whose connections pass the outbound address
// guard (nil guard: a plain client).
func httpClient(g *netguard.Guard, timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = 15 * time.Second
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if g != nil {
		tr.Proxy, tr.DialContext = nil, g.Dial(&net.Dialer{Timeout: timeout})
	}
	// A redirect would resend the credentials elsewhere.
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// post sends a JSON body and reads the answer (at most 64 KiB).
func post(ctx context.Context, c *http.Client, url string, header http.Header, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, &PermanentError{err}
	}
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return resp.StatusCode, b, err
}

// statusError turns an HTTP answer into an error: 5xx and 429 may be
// retried, other 4xx are permanent.
func statusError(status int, body []byte) error {
	err := fmt.Errorf("sms provider answered HTTP %d: %.200s", status, phoneDigits.ReplaceAll(body, []byte("[number]")))
	if status >= 500 || status == http.StatusTooManyRequests {
		return err
	}
	return &PermanentError{err}
}

// phoneDigits finds what may be a phone number in a provider's answer: it
// is masked before the answer is stored or logged.
var phoneDigits = regexp.MustCompile(`\+?\d[\d ]{8,}\d`)

// MSG91 sends through a template ("flow") API in MSG91's shape: POST
// {BaseURL}/api/v5/flow with the account's authkey header and
//
//	{"template_id": …, "sender": …, "DLT_TE_ID": …, "PE_ID": …, "short_url": "0",
//	 "recipients": [{"mobiles": "919876543210", "amount": …, "energy": …, "link": …}]}
//
// answered {"type": "success", "message": "<request id>"}. Its delivery
// reports are POSTed to the hub's callback URL, which carries ReportToken
// as ?token= (the provider does not sign them): a JSON array of
// {"requestId", "number", "status" ("1" delivered, others not), "desc",
// "date"}.
type MSG91 struct {
	BaseURL     string
	AuthKey     string
	TemplateID  string
	DLT         DLT
	ReportToken string
	Guard       *netguard.Guard
	Timeout     time.Duration

	once   sync.Once
	client *http.Client
}

// Send implements Gateway.
func (g *MSG91) Send(ctx context.Context, m Message) (string, error) {
	if err := m.Check(); err != nil {
		return "", err
	}
	g.once.Do(func() { g.client = httpClient(g.Guard, g.Timeout) })
	body, err := json.Marshal(map[string]any{
		"template_id": g.TemplateID, "sender": g.DLT.Sender, "DLT_TE_ID": g.DLT.TemplateID, "PE_ID": g.DLT.EntityID, "short_url": "0",
		"recipients": []map[string]string{{"mobiles": strings.TrimPrefix(m.To, "+"), "amount": m.Vars.Amount, "energy": m.Vars.Energy,
			"link": m.Vars.Link, "reference": m.Reference}},
	})
	if err != nil {
		return "", err
	}
	status, resp, err := post(ctx, g.client, strings.TrimRight(g.BaseURL, "/")+"/api/v5/flow", http.Header{"Authkey": {g.AuthKey}}, body)
	if err != nil {
		return "", err
	}
	if status != http.StatusOK {
		return "", statusError(status, resp)
	}
	var ans struct{ Type, Message string }
	if err := json.Unmarshal(resp, &ans); err != nil || ans.Type != "success" || ans.Message == "" {
		return "", &PermanentError{fmt.Errorf("sms provider refused the message: %.200s", phoneDigits.ReplaceAll(resp, []byte("[number]")))}
	}
	return ans.Message, nil
}

// Reports implements Gateway.
func (g *MSG91) Reports(_ http.Header, query map[string][]string, body []byte) ([]Report, error) {
	tok := ""
	if v := query["token"]; len(v) == 1 {
		tok = v[0]
	}
	if g.ReportToken == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(g.ReportToken)) != 1 {
		return nil, ErrForged
	}
	var in []struct {
		RequestID string `json:"requestId"`
		Number    string `json:"number"`
		Status    string `json:"status"`
		Desc      string `json:"desc"`
		Date      string `json:"date"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, &Error{Field: "body", Issue: "is not a JSON array of delivery reports"}
	}
	out := make([]Report, 0, len(in))
	for _, r := range in {
		if r.RequestID == "" {
			return nil, &Error{Field: "requestId", Issue: "is required"}
		}
		rep := Report{ProviderID: r.RequestID, Status: StatusUndelivered, Reason: r.Desc}
		if r.Status == "1" {
			rep.Status, rep.Reason = StatusDelivered, ""
		}
		if t, err := time.Parse("2006-01-02 15:04:05", r.Date); err == nil {
			rep.At = t
		}
		out = append(out, rep)
	}
	return out, nil
}

// Signed sends a JSON POST to URL, signed with Secret like ocpihub's
// webhooks (headers webhook-id, webhook-timestamp, webhook-signature):
//
//	{"reference": …, "to": "+919876543210", "sender": …, "template_id": …,
//	 "entity_id": …, "vars": {"amount": …, "energy": …, "link": …}, "text": …}
//
// A 2xx answer {"id": "<provider id>"} accepts it. Delivery reports come
// back signed with the same secret: {"reports": [{"reference", "provider_id",
// "status" ("delivered" or "undelivered"), "reason", "at"}]}.
type Signed struct {
	URL     string
	Secret  string
	DLT     DLT
	Guard   *netguard.Guard
	Timeout time.Duration
	Clock   func() time.Time

	once   sync.Once
	client *http.Client
}

func (g *Signed) now() time.Time {
	if g.Clock != nil {
		return g.Clock()
	}
	return clock.Real{}.Now()
}

// Send implements Gateway.
func (g *Signed) Send(ctx context.Context, m Message) (string, error) {
	if err := m.Check(); err != nil {
		return "", err
	}
	g.once.Do(func() { g.client = httpClient(g.Guard, g.Timeout) })
	body, err := json.Marshal(map[string]any{"reference": m.Reference, "to": m.To, "sender": g.DLT.Sender,
		"template_id": g.DLT.TemplateID, "entity_id": g.DLT.EntityID, "vars": m.Vars, "text": Text(m.Vars)})
	if err != nil {
		return "", err
	}
	h := http.Header{}
	SetSignature(h, g.Secret, m.Reference, g.now(), body)
	status, resp, err := post(ctx, g.client, g.URL, h, body)
	if err != nil {
		return "", err
	}
	if status < 200 || status > 299 {
		return "", statusError(status, resp)
	}
	var ans struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal(resp, &ans); err != nil {
		return "", errors.New("sms provider's answer is not JSON")
	}
	return ans.ID, nil
}

// Reports implements Gateway.
func (g *Signed) Reports(header http.Header, _ map[string][]string, body []byte) ([]Report, error) {
	if err := Verify(header, g.Secret, g.now(), body); err != nil {
		return nil, err
	}
	var in struct {
		Reports []Report `json:"reports"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		return nil, &Error{Field: "body", Issue: "is not {\"reports\": [...]}"}
	}
	for _, r := range in.Reports {
		if r.Reference == "" && r.ProviderID == "" {
			return nil, &Error{Field: "reference", Issue: "is required"}
		}
		if r.Status != StatusDelivered && r.Status != StatusUndelivered {
			return nil, &Error{Field: "status", Issue: "must be delivered or undelivered"}
		}
	}
	return in.Reports, nil
}
