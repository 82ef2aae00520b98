package upi_test

import (
	"context"
	"encoding/base64"
	"log/slog"
	"net"
	"net/textproto"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/upi/receipt"
)

// mail is one message the test SMTP server received.
type mail struct {
	From, To, Auth string
	Data           string
}

// smtpServer is a tiny SMTP server on loopback: enough of RFC 5321 for
// net/smtp (EHLO, AUTH PLAIN, MAIL, RCPT, DATA, QUIT), keeping what it
// receives.
type smtpServer struct {
	l      net.Listener
	mu     sync.Mutex
	mails  []mail
	notify chan struct{}
}

func startSMTP(t *testing.T) *smtpServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpServer{l: l, notify: make(chan struct{})}
	s.acceptOn(t, l)
	return s
}

// acceptOn holds the server's dialogue with every connection l accepts,
// until l is closed when the test ends.
func (s *smtpServer) acceptOn(t *testing.T, l net.Listener) {
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
}

func (s *smtpServer) Addr() string { return s.l.Addr().String() }

func (s *smtpServer) serve(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	tp := textproto.NewConn(c)
	var m mail
	_ = tp.PrintfLine("220 test ESMTP")
	for {
		line, err := tp.ReadLine()
		if err != nil {
			return
		}
		cmd := strings.ToUpper(line)
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			_ = tp.PrintfLine("250-test greets you")
			_ = tp.PrintfLine("250 AUTH PLAIN")
		case strings.HasPrefix(cmd, "AUTH PLAIN"):
			raw, _ := base64.StdEncoding.DecodeString(strings.TrimSpace(line[len("AUTH PLAIN"):]))
			m.Auth = string(raw)
			_ = tp.PrintfLine("235 ok")
		case strings.HasPrefix(cmd, "MAIL FROM:"):
			m.From = strings.Trim(line[len("MAIL FROM:"):], "<> ")
			_ = tp.PrintfLine("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			m.To = strings.Trim(line[len("RCPT TO:"):], "<> ")
			_ = tp.PrintfLine("250 ok")
		case cmd == "DATA":
			_ = tp.PrintfLine("354 go on")
			b, err := tp.ReadDotBytes()
			if err != nil {
				return
			}
			m.Data = string(b)
			s.mu.Lock()
			s.mails = append(s.mails, m)
			close(s.notify)
			s.notify = make(chan struct{})
			s.mu.Unlock()
			_ = tp.PrintfLine("250 queued")
		case cmd == "QUIT":
			_ = tp.PrintfLine("221 bye")
			return
		default:
			_ = tp.PrintfLine("500 unknown command")
		}
	}
}

// wait waits for n messages.
func (s *smtpServer) wait(ctx context.Context, n int) []mail {
	for {
		s.mu.Lock()
		got, ch := append([]mail(nil), s.mails...), s.notify
		s.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return got
		}
	}
}

// TestSMTPNotifier sends a receipt to the test server: the envelope, PLAIN
// authentication (allowed without TLS on loopback only), the text and the
// PDF attachment.
func TestSMTPNotifier(t *testing.T) {
	t.Parallel()
	srv := startSMTP(t)
	n := receipt.SMTPNotifier{Logger: slog.New(slog.DiscardHandler), Config: receipt.SMTPConfig{Addr: srv.Addr(), From: "ocpihub <receipts@ocpihub.test>",
		Username: "hub", Password: "secret", TLS: "none"}}
	r := &receipt.Receipt{ID: "abcdefghabcdefghabcdefghabcdefgh", PaymentID: "UPI123", Amount: "272.88", Currency: "INR", EnergyKWh: "12.5",
		Cost: "272.88", Captured: "500.00", Refunded: "227.12", URL: "https://hub.test/receipts/abcdefghabcdefghabcdefghabcdefgh"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := n.SendReceipt(ctx, receipt.ReceiptNotice{Receipt: r, Email: "driver@example.in", PDF: []byte("%PDF-1.7 test")}); err != nil {
		t.Fatal(err)
	}
	got := srv.wait(ctx, 1)
	if len(got) != 1 {
		t.Fatalf("%d mails", len(got))
	}
	m := got[0]
	if m.From != "receipts@ocpihub.test" || m.To != "driver@example.in" || m.Auth != "\x00hub\x00secret" {
		t.Errorf("envelope %+v", m)
	}
	for _, want := range []string{"Subject: =?utf-8?q?Your_charging_receipt:_=E2=82=B9272.88?=", "Paid:      ₹272.88", r.URL + ".pdf",
		"Content-Type: application/pdf", base64.StdEncoding.EncodeToString([]byte("%PDF-1.7 test"))} {
		if !strings.Contains(m.Data, want) {
			t.Errorf("mail lacks %q:\n%s", want, m.Data)
		}
	}
	// Without an address the receipt is only logged.
	if err := n.SendReceipt(ctx, receipt.ReceiptNotice{Receipt: r}); err != nil {
		t.Fatal(err)
	}
	if got := srv.wait(ctx, 1); len(got) != 1 {
		t.Errorf("%d mails after a receipt without an address", len(got))
	}
}
