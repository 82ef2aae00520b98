package receipt

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"mime/multipart"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"
)

// Notifier sends receipts to drivers (e-mail, SMS, …).
type Notifier interface {
	SendReceipt(ctx context.Context, n ReceiptNotice) error
}

// ReceiptNotice is one receipt to send.
type ReceiptNotice struct {
	Receipt *Receipt
	// Email is where the driver asked for it ("" when they gave none).
	Email string
	// PDF is the receipt as a PDF, when it could be drawn.
	PDF []byte
}

// LogNotifier writes receipts to the log: the notifier of a hub without
// e-mail, and the stand-in for SMS.
type LogNotifier struct{ Logger *slog.Logger }

// SendReceipt implements Notifier.
func (l LogNotifier) SendReceipt(ctx context.Context, n ReceiptNotice) error {
	l.Logger.InfoContext(ctx, "receipt issued", "receipt_id", n.Receipt.ID, "payment_id", n.Receipt.PaymentID,
		"amount", n.Receipt.Amount, "currency", n.Receipt.Currency, "url", n.Receipt.URL, "email", n.Email != "")
	return nil
}

// SMTPConfig is how receipts are e-mailed.
type SMTPConfig struct {
	// Addr is the server, host:port (--smtp-addr).
	Addr string
	// From is the sender address (--smtp-from).
	From string
	// Username and Password authenticate (PLAIN) when set; the password is
	// only sent over TLS or to a server on loopback.
	Username string
	Password string
	// TLS: "starttls" (default: STARTTLS when the server offers it, required
	// when authenticating to a remote server), "tls" (implicit TLS, port
	// 465) or "none".
	TLS string
	// Timeout bounds one delivery (default 30 s).
	Timeout time.Duration
}

// SMTPNotifier e-mails receipts: a plain-text body with the receipt's link
// and the PDF attached. Without an address it only logs.
type SMTPNotifier struct {
	Config SMTPConfig
	Logger *slog.Logger
	// TLSConfig overrides the TLS settings (tests trust their own CA).
	TLSConfig *tls.Config
	// DialFunc opens the connection to the server; the hub dials through
	// its outbound address guard (netguard.Guard.Dial). Nil: a plain
	// net.Dialer.
	DialFunc func(ctx context.Context, network, address string) (net.Conn, error)
}

// SendReceipt implements Notifier.
func (n SMTPNotifier) SendReceipt(ctx context.Context, rn ReceiptNotice) error {
	if rn.Email == "" {
		return LogNotifier{n.Logger}.SendReceipt(ctx, rn)
	}
	msg, err := receiptMail(n.Config.From, rn)
	if err != nil {
		return err
	}
	if err := n.send(ctx, rn.Email, msg); err != nil {
		return fmt.Errorf("e-mail receipt %s: %w", rn.Receipt.ID, err)
	}
	n.Logger.InfoContext(ctx, "receipt e-mailed", "receipt_id", rn.Receipt.ID, "payment_id", rn.Receipt.PaymentID)
	return nil
}

func (n SMTPNotifier) send(ctx context.Context, to string, msg []byte) error {
	c := n.Config
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	host, _, err := net.SplitHostPort(c.Addr)
	if err != nil {
		return fmt.Errorf("smtp address %q: %w", c.Addr, err)
	}
	tlsCfg := n.TLSConfig
	if tlsCfg == nil {
		tlsCfg = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	}
	dial := n.DialFunc
	if dial == nil {
		dial = (&net.Dialer{Timeout: timeout}).DialContext
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := dial(ctx, "tcp", c.Addr)
	if err != nil {
		return err
	}
	if c.TLS == "tls" {
		tc := tls.Client(conn, tlsCfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return err
		}
		conn = tc
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	cl, err := smtp.NewClient(conn, host)
	if err != nil {
		conn.Close()
		return err
	}
	defer cl.Close()
	if err := cl.Hello("ocpihub"); err != nil {
		return err
	}
	secure := c.TLS == "tls"
	if ok, _ := cl.Extension("STARTTLS"); ok && c.TLS != "none" && !secure {
		if err := cl.StartTLS(tlsCfg); err != nil {
			return err
		}
		secure = true
	}
	if c.Username != "" {
		if !secure && !isLoopback(host) {
			return errors.New("refusing to send the SMTP password without TLS to " + host)
		}
		if err := cl.Auth(plainAuth{c.Username, c.Password}); err != nil {
			return err
		}
	}
	from, err := mail.ParseAddress(c.From)
	if err != nil {
		return fmt.Errorf("smtp from %q: %w", c.From, err)
	}
	if err := cl.Mail(from.Address); err != nil {
		return err
	}
	if err := cl.Rcpt(to); err != nil {
		return err
	}
	w, err := cl.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return cl.Quit()
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// plainAuth is PLAIN authentication; the TLS decision is made by send.
type plainAuth struct{ user, pass string }

func (a plainAuth) Start(*smtp.ServerInfo) (string, []byte, error) {
	return "PLAIN", []byte("\x00" + a.user + "\x00" + a.pass), nil
}

func (a plainAuth) Next(_ []byte, more bool) ([]byte, error) {
	if more {
		return nil, errors.New("unexpected SMTP authentication challenge")
	}
	return nil, nil
}

// receiptMail builds the e-mail of a receipt: text and, when drawn, the
// PDF.
func receiptMail(from string, rn ReceiptNotice) ([]byte, error) {
	r := rn.Receipt
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	hdr := func(k, v string) { fmt.Fprintf(&buf, "%s: %s\r\n", k, v) }
	hdr("From", from)
	hdr("To", rn.Email)
	hdr("Subject", mime.QEncoding.Encode("utf-8", "Your charging receipt: "+r.Display(r.Amount)))
	hdr("Date", r.IssuedAt.Format(time.RFC1123Z))
	hdr("Message-ID", "<"+r.ID+"@ocpihub>")
	hdr("MIME-Version", "1.0")
	hdr("Content-Type", "multipart/mixed; boundary="+mw.Boundary())
	buf.WriteString("\r\n")
	text, err := mw.CreatePart(textproto.MIMEHeader{"Content-Type": {"text/plain; charset=utf-8"}, "Content-Transfer-Encoding": {"8bit"}})
	if err != nil {
		return nil, err
	}
	lines := []string{
		"Thank you for charging with us.", "",
		"Paid:      " + r.Display(r.Amount),
		"Energy:    " + r.EnergyKWh + " kWh",
		"Cost:      " + r.Display(r.Cost),
		"Captured:  " + r.Display(r.Captured),
		"Refunded:  " + r.Display(r.Refunded),
		"Where:     " + strings.TrimSpace(r.LocationName+" "+r.Address),
		"Payment:   " + r.PGPaymentID, "",
		"Receipt:   " + r.URL,
		"PDF:       " + r.URL + ".pdf", "",
	}
	lines = append(lines, r.TaxLines()...)
	if _, err := text.Write([]byte(strings.Join(lines, "\r\n"))); err != nil {
		return nil, err
	}
	if len(rn.PDF) > 0 {
		att, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {"application/pdf"},
			"Content-Transfer-Encoding": {"base64"},
			"Content-Disposition":       {`attachment; filename="receipt-` + r.ID[:8] + `.pdf"`},
		})
		if err != nil {
			return nil, err
		}
		enc := base64.StdEncoding.EncodeToString(rn.PDF)
		for len(enc) > 76 {
			fmt.Fprintf(att, "%s\r\n", enc[:76])
			enc = enc[76:]
		}
		fmt.Fprintf(att, "%s\r\n", enc)
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
