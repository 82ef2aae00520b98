package upi_test

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
)

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// TestSMTPThroughTheGuard: receipts dial the SMTP server through the
// outbound address guard. A server on a refused address is never
// connected to; an allowed one gets the mail, over implicit TLS too.
func TestSMTPThroughTheGuard(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// A certificate the client trusts, borrowed from an httptest server.
	certs := httptest.NewTLSServer(http.NotFoundHandler())
	defer certs.Close()
	roots := certs.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs

	// The test SMTP server's dialogue, behind a TLS listener.
	srv := startSMTP(t)
	tlsL, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tlsSrv := &countingListener{Listener: tls.NewListener(tlsL, &tls.Config{Certificates: certs.TLS.Certificates})}
	srv.acceptOn(t, tlsSrv)

	r := &receipt.Receipt{ID: "abcdefghabcdefghabcdefghabcdefgh", PaymentID: "UPI1", Amount: "10.00", Currency: "INR", EnergyKWh: "1",
		Cost: "10.00", Captured: "10.00", Refunded: "0.00", URL: "https://hub.test/receipts/abcdefghabcdefghabcdefghabcdefgh"}
	notice := receipt.ReceiptNotice{Receipt: r, Email: "driver@example.in"}
	notifier := func(g *netguard.Guard) receipt.SMTPNotifier {
		return receipt.SMTPNotifier{Logger: slog.New(slog.DiscardHandler),
			Config:    receipt.SMTPConfig{Addr: tlsL.Addr().String(), From: "receipts@ocpihub.test", TLS: "tls"},
			TLSConfig: &tls.Config{RootCAs: roots, ServerName: "example.com", MinVersion: tls.VersionTLS12},
			DialFunc:  g.Dial(&net.Dialer{Timeout: 5 * time.Second})}
	}
	if err := notifier(netguard.New()).SendReceipt(ctx, notice); !netguard.IsRefused(err) {
		t.Errorf("SMTP server on loopback, nothing allowed: %v, want refused", err)
	}
	if n := tlsSrv.n.Load(); n != 0 {
		t.Fatalf("the refused SMTP server accepted %d connections", n)
	}
	if err := notifier(netguard.New(netguard.Loopback...)).SendReceipt(ctx, notice); err != nil {
		t.Fatalf("SMTP server on allowed loopback, implicit TLS: %v", err)
	}
	if got := srv.wait(ctx, 1); len(got) != 1 || got[0].To != "driver@example.in" {
		t.Errorf("mails %+v", got)
	}
}
