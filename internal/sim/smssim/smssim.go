// Package smssim is a simulated bulk-SMS gateway for tests, --dev and the
// demo: a real HTTP server on loopback that takes messages in both shapes
// the hub sends (sms.MSG91's template API and sms.Signed's signed JSON),
// checks their credentials and DLT fields, keeps them, and reports their
// delivery to the hub's callback like a provider does. It can be told to
// fail sends (HTTP 503, as a gateway that is down), to delay its answers,
// and to report a number's messages undelivered.
package smssim

import (
	"bytes"
	"cmp"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ocpihub/ocpihub/internal/clock"
	"github.com/ocpihub/ocpihub/internal/sim/simwire"
	"github.com/ocpihub/ocpihub/internal/sms"
)

// Defaults of a simulator started without its own credentials.
const (
	DefaultAuthKey    = "smssim-authkey"
	DefaultSecret     = "smssim-report-secret-0001"
	DefaultSender     = "OCPHUB"
	DefaultTemplateID = "1107170000000000001"
	DefaultEntityID   = "1101170000000000001"
	DefaultFlowID     = "smssim-receipt"
)

// Options configure a simulator.
type Options struct {
	// Addr to listen on (default 127.0.0.1:0).
	Addr string
	// AuthKey is what the MSG91-shaped API requires in its authkey header;
	// Secret signs the signed API's requests and reports.
	AuthKey, Secret string
	// DLT is the registration messages must carry (defaults above).
	DLT sms.DLT
	// ReportURL receives the delivery reports (the hub's callback; for the
	// MSG91 shape it carries the report token). Empty: none are sent.
	ReportURL string
	Clock     clock.Clock
	Logger    *slog.Logger
}

// Message is a message the simulator accepted.
type Message struct {
	// Shape is "msg91" or "signed".
	Shape      string
	ProviderID string
	Reference  string
	// To is the number in E.164.
	To   string
	DLT  sms.DLT
	Vars sms.Vars
	// Text is the registered template filled in (sms.Text).
	Text string
	At   time.Time
	// Report is what the simulator reported ("delivered", "undelivered").
	Report string
}

// Server is a running simulator.
type Server struct {
	opts     Options
	listener net.Listener
	server   *http.Server
	client   *http.Client
	bg       *simwire.Background

	mu          sync.Mutex
	msgs        []Message
	seq         int
	failNext    int
	failAll     bool
	delay       time.Duration
	undelivered map[string]bool
	calls       int
}

// Start starts a simulator.
func Start(opts Options) (*Server, error) {
	opts.Addr = cmp.Or(opts.Addr, "127.0.0.1:0")
	opts.AuthKey = cmp.Or(opts.AuthKey, DefaultAuthKey)
	opts.Secret = cmp.Or(opts.Secret, DefaultSecret)
	if opts.DLT == (sms.DLT{}) {
		opts.DLT = sms.DLT{Sender: DefaultSender, TemplateID: DefaultTemplateID, EntityID: DefaultEntityID}
	}
	if opts.Clock == nil {
		opts.Clock = clock.Real{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	l, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, listener: l, client: simwire.Client(), bg: simwire.NewBackground(),
		undelivered: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/v5/flow", s.handleMSG91)
	mux.HandleFunc("POST /signed", s.handleSigned)
	s.server = simwire.Serve(l, mux)
	return s, nil
}

// URL is the simulator's base URL (the MSG91 shape's base URL).
func (s *Server) URL() string { return "http://" + s.listener.Addr().String() }

// SignedURL is the signed API's URL.
func (s *Server) SignedURL() string { return s.URL() + "/signed" }

// Options returns the simulator's effective options.
func (s *Server) Options() Options { return s.opts }

// SetReportURL sets where delivery reports go (a hub started after the
// simulator).
func (s *Server) SetReportURL(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts.ReportURL = u
}

// Close stops the simulator and waits for its reports in flight.
func (s *Server) Close() { s.bg.Stop(func() { _ = s.server.Close() }) }

// FailNext makes the next n sends fail with HTTP 503.
func (s *Server) FailNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = n
}

// SetDown makes every send fail with HTTP 503 until SetDown(false).
func (s *Server) SetDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failAll = down
}

// SetDelay delays every answer by d.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Undeliver makes the messages to a number (E.164) be reported
// undelivered.
func (s *Server) Undeliver(e164 string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.undelivered[e164] = true
}

// Messages returns the messages accepted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.msgs...)
}

// Calls counts the send requests received, failed ones included.
func (s *Server) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// admit counts a call, waits the delay and reports whether it fails.
func (s *Server) admit(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	s.calls++
	delay, fail := s.delay, s.failAll || s.failNext > 0
	if s.failNext > 0 {
		s.failNext--
	}
	s.mu.Unlock()
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return false
		case <-s.bg.Closing():
			return false
		}
	}
	if fail {
		http.Error(w, `{"type":"error","message":"service unavailable"}`, http.StatusServiceUnavailable)
		return false
	}
	return true
}

// checkDLT refuses a message whose registration or variables are wrong,
// as the provider's DLT scrubbing would.
func (s *Server) checkDLT(d sms.DLT, to string, v sms.Vars) error {
	if d != s.opts.DLT {
		return fmt.Errorf("DLT mismatch: sender %q template %q entity %q", d.Sender, d.TemplateID, d.EntityID)
	}
	return sms.Message{To: to, Reference: "x", Vars: v}.Check()
}

func (s *Server) handleMSG91(w http.ResponseWriter, r *http.Request) {
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("authkey")), []byte(s.opts.AuthKey)) != 1 {
		http.Error(w, `{"type":"error","message":"authentication failure"}`, http.StatusUnauthorized)
		return
	}
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if !s.admit(w, r) {
		return
	}
	var in struct {
		TemplateID string              `json:"template_id"`
		Sender     string              `json:"sender"`
		DLTTEID    string              `json:"DLT_TE_ID"`
		PEID       string              `json:"PE_ID"`
		Recipients []map[string]string `json:"recipients"`
	}
	if err := json.Unmarshal(body, &in); err != nil || len(in.Recipients) != 1 || in.TemplateID == "" {
		http.Error(w, `{"type":"error","message":"bad request"}`, http.StatusBadRequest)
		return
	}
	rc := in.Recipients[0]
	to := "+" + rc["mobiles"]
	v := sms.Vars{Amount: rc["amount"], Energy: rc["energy"], Link: rc["link"]}
	d := sms.DLT{Sender: in.Sender, TemplateID: in.DLTTEID, EntityID: in.PEID}
	if err := s.checkDLT(d, to, v); err != nil {
		b, _ := json.Marshal(map[string]string{"type": "error", "message": err.Error()})
		http.Error(w, string(b), http.StatusBadRequest)
		return
	}
	m := s.accept("msg91", rc["reference"], to, d, v)
	writeJSON(w, map[string]string{"type": "success", "message": m.ProviderID})
	s.report(m)
}

func (s *Server) handleSigned(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err := sms.Verify(r.Header, s.opts.Secret, s.opts.Clock.Now(), body); err != nil {
		http.Error(w, `{"error":"bad signature"}`, http.StatusUnauthorized)
		return
	}
	if !s.admit(w, r) {
		return
	}
	var in struct {
		Reference  string   `json:"reference"`
		To         string   `json:"to"`
		Sender     string   `json:"sender"`
		TemplateID string   `json:"template_id"`
		EntityID   string   `json:"entity_id"`
		Vars       sms.Vars `json:"vars"`
	}
	if err := json.Unmarshal(body, &in); err != nil {
		http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
		return
	}
	d := sms.DLT{Sender: in.Sender, TemplateID: in.TemplateID, EntityID: in.EntityID}
	if err := s.checkDLT(d, in.To, in.Vars); err != nil {
		b, _ := json.Marshal(map[string]string{"error": err.Error()})
		http.Error(w, string(b), http.StatusBadRequest)
		return
	}
	m := s.accept("signed", in.Reference, in.To, d, in.Vars)
	writeJSON(w, map[string]string{"id": m.ProviderID})
	s.report(m)
}

// accept keeps a message and decides its report.
func (s *Server) accept(shape, ref, to string, d sms.DLT, v sms.Vars) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	m := Message{Shape: shape, ProviderID: fmt.Sprintf("smssim%08d", s.seq), Reference: ref, To: to, DLT: d, Vars: v,
		Text: sms.Text(v), At: s.opts.Clock.Now(), Report: sms.StatusDelivered}
	if s.undelivered[to] {
		m.Report = sms.StatusUndelivered
	}
	s.msgs = append(s.msgs, m)
	return m
}

// report posts a message's delivery report to the hub, in the background
// (a few tries, as providers retry their callbacks).
func (s *Server) report(m Message) {
	s.mu.Lock()
	url := s.opts.ReportURL
	s.mu.Unlock()
	if url == "" {
		return
	}
	var body []byte
	h := http.Header{"Content-Type": {"application/json"}}
	if m.Shape == "msg91" {
		status, desc := "1", "DELIVERED"
		if m.Report != sms.StatusDelivered {
			status, desc = "2", "FAILED: handset unreachable"
		}
		body, _ = json.Marshal([]map[string]string{{"requestId": m.ProviderID, "number": strings.TrimPrefix(m.To, "+"),
			"status": status, "desc": desc, "date": m.At.UTC().Format("2006-01-02 15:04:05")}})
	} else {
		rep := sms.Report{Reference: m.Reference, ProviderID: m.ProviderID, Status: m.Report, At: m.At}
		if m.Report != sms.StatusDelivered {
			rep.Reason = "handset unreachable"
		}
		body, _ = json.Marshal(map[string]any{"reports": []sms.Report{rep}})
		sms.SetSignature(h, s.opts.Secret, "dlr-"+m.ProviderID, s.opts.Clock.Now(), body)
	}
	s.bg.Go(func(ctx context.Context) {
		for try := range 5 {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
			if err != nil {
				return
			}
			req.Header = h.Clone()
			resp, err := s.client.Do(req)
			if err == nil {
				resp.Body.Close()
				if resp.StatusCode < 300 {
					return
				}
			}
			s.opts.Logger.Warn("smssim: delivery report not taken", "provider_id", m.ProviderID, "try", try+1, "error", err)
			select {
			case <-time.After(time.Duration(try+1) * 200 * time.Millisecond):
			case <-ctx.Done():
				return
			}
		}
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
