package sms_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/sim/smssim"
	"github.com/ocpihub/ocpihub/internal/sms"
)

func okMessage() sms.Message {
	return sms.Message{To: "+919876543210", Reference: "dl1", Vars: sms.Vars{Amount: "₹1,23,456.00", Energy: "12.5 kWh",
		Link: "https://hub.example.in/r/abcdefghijklmnop"}}
}

func TestMessageCheck(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		edit  func(*sms.Message)
		field string
	}{
		{"ok", func(*sms.Message) {}, ""},
		{"no plus", func(m *sms.Message) { m.To = "919876543210" }, "to"},
		{"letters", func(m *sms.Message) { m.To = "+91987654321O" }, "to"},
		{"no reference", func(m *sms.Message) { m.Reference = "" }, "reference"},
		{"amount over 30", func(m *sms.Message) { m.Vars.Amount = strings.Repeat("₹", 31) }, "amount"},
		{"amount of 30 runes", func(m *sms.Message) { m.Vars.Amount = strings.Repeat("₹", 30) }, ""},
		{"energy empty", func(m *sms.Message) { m.Vars.Energy = "" }, "energy"},
		{"link over 64", func(m *sms.Message) { m.Vars.Link = "https://" + strings.Repeat("a", 57) }, "link"},
		{"link not a URL", func(m *sms.Message) { m.Vars.Link = "javascript:alert(1)" }, "link"},
	} {
		m := okMessage()
		c.edit(&m)
		err := m.Check()
		var e *sms.Error
		got := ""
		if errors.As(err, &e) {
			got = e.Field
		}
		if got != c.field || (err == nil) != (c.field == "") {
			t.Errorf("%s: Check() = %v, want field %q", c.name, err, c.field)
		}
	}
}

func TestDLTCheck(t *testing.T) {
	t.Parallel()
	ok := sms.DLT{Sender: "OCPHUB", TemplateID: "1107170000000000001", EntityID: "1101170000000000001"}
	if err := ok.Check(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []sms.DLT{
		{Sender: "ocphub", TemplateID: ok.TemplateID, EntityID: ok.EntityID},
		{Sender: "OCPIHUB", TemplateID: ok.TemplateID, EntityID: ok.EntityID},
		{Sender: ok.Sender, TemplateID: "abc", EntityID: ok.EntityID},
		{Sender: ok.Sender, TemplateID: ok.TemplateID, EntityID: ""},
	} {
		if d.Check() == nil {
			t.Errorf("%+v passes", d)
		}
	}
}

// TestAdapters sends through both adapters to the simulator: each message
// arrives with its DLT fields and variables; an over-long variable is
// refused before any call; a gateway that is down gives a retryable error,
// a refused DLT registration a permanent one.
func TestAdapters(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	o := sim.Options()
	gws := map[string]sms.Gateway{
		"msg91":  &sms.MSG91{BaseURL: sim.URL(), AuthKey: o.AuthKey, TemplateID: smssim.DefaultFlowID, DLT: o.DLT},
		"signed": &sms.Signed{URL: sim.SignedURL(), Secret: o.Secret, DLT: o.DLT},
	}
	ctx := context.Background()
	for name, gw := range gws {
		before := len(sim.Messages())
		id, err := gw.Send(ctx, okMessage())
		if err != nil || id == "" {
			t.Fatalf("%s: send: %q %v", name, id, err)
		}
		msgs := sim.Messages()
		if len(msgs) != before+1 {
			t.Fatalf("%s: %d messages", name, len(msgs))
		}
		m := msgs[len(msgs)-1]
		if m.Shape != name || m.To != "+919876543210" || m.DLT != o.DLT || m.Vars != okMessage().Vars || m.ProviderID != id {
			t.Errorf("%s: received %+v", name, m)
		}

		calls := sim.Calls()
		long := okMessage()
		long.Vars.Energy = strings.Repeat("9", 31) + " kWh"
		if _, err := gw.Send(ctx, long); !sms.IsPermanent(err) || sim.Calls() != calls {
			t.Errorf("%s: an over-long variable: %v after %d calls", name, err, sim.Calls()-calls)
		}

		sim.FailNext(1)
		if _, err := gw.Send(ctx, okMessage()); err == nil || sms.IsPermanent(err) {
			t.Errorf("%s: gateway down: %v, want a retryable error", name, err)
		}
	}
	bad := &sms.MSG91{BaseURL: sim.URL(), AuthKey: o.AuthKey, TemplateID: smssim.DefaultFlowID,
		DLT: sms.DLT{Sender: "OTHERS", TemplateID: o.DLT.TemplateID, EntityID: o.DLT.EntityID}}
	if _, err := bad.Send(ctx, okMessage()); !sms.IsPermanent(err) {
		t.Errorf("unregistered sender: %v, want permanent", err)
	}
	wrongKey := &sms.MSG91{BaseURL: sim.URL(), AuthKey: "nope", TemplateID: smssim.DefaultFlowID, DLT: o.DLT}
	if _, err := wrongKey.Send(ctx, okMessage()); !sms.IsPermanent(err) {
		t.Errorf("wrong authkey: %v, want permanent", err)
	}
}

// TestReportsAuthenticated: delivery reports are read only when
// authenticated: MSG91's by the callback token, the signed ones by their
// HMAC within the time tolerance.
func TestReportsAuthenticated(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 12, 10, 0, 0, 0, time.UTC)
	m := &sms.MSG91{ReportToken: "callback-token-0123456789"}
	body := []byte(`[{"requestId":"r1","number":"919876543210","status":"1","desc":"DELIVERED","date":"2026-03-12 10:00:00"},
		{"requestId":"r2","number":"919876543211","status":"2","desc":"FAILED"}]`)
	reps, err := m.Reports(nil, map[string][]string{"token": {"callback-token-0123456789"}}, body)
	if err != nil || len(reps) != 2 || reps[0].Status != sms.StatusDelivered || reps[1].Status != sms.StatusUndelivered ||
		reps[1].Reason != "FAILED" || reps[0].ProviderID != "r1" {
		t.Errorf("msg91 reports: %+v %v", reps, err)
	}
	for _, q := range []map[string][]string{nil, {"token": {"callback-token-012345678"}}, {"token": {"a", "b"}}} {
		if _, err := m.Reports(nil, q, body); !errors.Is(err, sms.ErrForged) {
			t.Errorf("msg91 token %v: %v", q, err)
		}
	}
	if _, err := (&sms.MSG91{}).Reports(nil, map[string][]string{"token": {""}}, body); !errors.Is(err, sms.ErrForged) {
		t.Errorf("msg91 without a configured token accepted a report: %v", err)
	}

	s := &sms.Signed{Secret: "report-secret-0123456789", Clock: func() time.Time { return now }}
	sb := []byte(`{"reports":[{"reference":"dl1","status":"undelivered","reason":"DND"}]}`)
	h := http.Header{}
	sms.SetSignature(h, s.Secret, "evt1", now, sb)
	if reps, err := s.Reports(h, nil, sb); err != nil || len(reps) != 1 || reps[0].Reference != "dl1" || reps[0].Status != sms.StatusUndelivered {
		t.Errorf("signed report: %+v %v", reps, err)
	}
	tampered := []byte(strings.Replace(string(sb), "undelivered", "delivered", 1))
	if _, err := s.Reports(h, nil, tampered); !errors.Is(err, sms.ErrForged) {
		t.Errorf("tampered body: %v", err)
	}
	old := http.Header{}
	sms.SetSignature(old, s.Secret, "evt1", now.Add(-10*time.Minute), sb)
	if _, err := s.Reports(old, nil, sb); !errors.Is(err, sms.ErrForged) {
		t.Errorf("stale signature: %v", err)
	}
	other := http.Header{}
	sms.SetSignature(other, "another-secret-012345", "evt1", now, sb)
	if _, err := s.Reports(other, nil, sb); !errors.Is(err, sms.ErrForged) {
		t.Errorf("wrong secret: %v", err)
	}
	if _, err := s.Reports(http.Header{}, nil, sb); !errors.Is(err, sms.ErrForged) {
		t.Errorf("unsigned: %v", err)
	}
	badStatus := []byte(`{"reports":[{"reference":"dl1","status":"read"}]}`)
	hb := http.Header{}
	sms.SetSignature(hb, s.Secret, "evt2", now, badStatus)
	var e *sms.Error
	if _, err := s.Reports(hb, nil, badStatus); !errors.As(err, &e) || e.Field != "status" {
		t.Errorf("unknown status: %v", err)
	}
}

// TestProviderErrorsMaskNumbers: a provider's error that echoes the number
// is stored and logged without it.
func TestProviderErrorsMaskNumbers(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, `{"type":"error","message":"number 919876543210 is on the DND list"}`, http.StatusBadRequest)
	}))
	t.Cleanup(srv.Close)
	gw := &sms.MSG91{BaseURL: srv.URL, AuthKey: "k", TemplateID: "f"}
	_, err := gw.Send(context.Background(), okMessage())
	if err == nil || strings.Contains(err.Error(), "9876543210") || !strings.Contains(err.Error(), "[number] is on the DND list") {
		t.Errorf("error %v", err)
	}
	if !sms.IsPermanent(err) {
		t.Errorf("HTTP 400 is retried: %v", err)
	}
}

// TestSlowGateway: a gateway slower than the adapter's timeout gives a
// retryable error; the simulator's delay is what makes it slow.
func TestSlowGateway(t *testing.T) {
	t.Parallel()
	sim := startSim(t)
	sim.SetDelay(2 * time.Second)
	o := sim.Options()
	gw := &sms.Signed{URL: sim.SignedURL(), Secret: o.Secret, DLT: o.DLT, Timeout: 100 * time.Millisecond}
	if _, err := gw.Send(context.Background(), okMessage()); err == nil || sms.IsPermanent(err) {
		t.Errorf("a slow gateway: %v, want a retryable error", err)
	}
	if len(sim.Messages()) != 0 {
		t.Errorf("the simulator kept a message it never answered")
	}
}

// startSim starts the SMS gateway simulator, closed when the test ends.
func startSim(t *testing.T) *smssim.Server {
	t.Helper()
	sim, err := smssim.Start(smssim.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(sim.Close)
	return sim
}
