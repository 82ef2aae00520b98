package upi

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"github.com/ocpihub/ocpihub/internal/jobs"
	"github.com/ocpihub/ocpihub/internal/ocpi"
	"github.com/ocpihub/ocpihub/internal/store"
)

// NormalizePhone reads the mobile number a driver types for the receipt's
// SMS and returns it in E.164. Indian mobile numbers only (the hub's SMS
// route and its DLT registration are Indian): ten digits starting 6–9,
// optionally after +91, 91 or 0, with spaces, dots, hyphens or brackets in
// between. Anything else is an error naming the field "phone".
func NormalizePhone(in string) (string, error) {
	s := strings.TrimSpace(in)
	if len(s) > 32 {
		return "", ocpi.Invalid("phone", "is too long for a phone number")
	}
	plus := strings.HasPrefix(s, "+")
	s = strings.TrimPrefix(s, "+")
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ' ' || r == '-' || r == '.' || r == '(' || r == ')':
		default:
			return "", ocpi.Invalid("phone", "is not a phone number: use digits, e.g. 98765 43210 or +91 98765 43210")
		}
	}
	d := b.String()
	switch {
	case plus && !strings.HasPrefix(d, "91"):
		return "", ocpi.Invalid("phone", "must be an Indian mobile number (+91); receipts are not sent by SMS abroad")
	case plus || len(d) == 12 && strings.HasPrefix(d, "91"):
		d = strings.TrimPrefix(d, "91")
	case len(d) == 11 && d[0] == '0':
		d = d[1:]
	}
	if len(d) != 10 || d[0] < '6' {
		return "", ocpi.Invalid("phone", "must be an Indian mobile number: ten digits starting with 6, 7, 8 or 9")
	}
	return "+91" + d, nil
}

// maskPhone shows a number as the driver recognises it without giving it
// away: "+91 98******10".
func maskPhone(e164 string) string {
	if len(e164) < 7 {
		return "****"
	}
	n := strings.TrimPrefix(e164, "+91")
	return "+91 " + n[:2] + strings.Repeat("*", len(n)-4) + n[len(n)-2:]
}

// phoneKey is the keyed hash of a number that counts its daily SMS; the
// number itself is only stored sealed.
func (s *Service) phoneKey(e164 string) string {
	m := hmac.New(sha256.New, s.phoneHashKey)
	m.Write([]byte(e164))
	return hex.EncodeToString(m.Sum(nil))
}

// erasePhonesArgs is the periodic job that erases drivers' phone numbers
// past the retention period.
type erasePhonesArgs struct{}

func (erasePhonesArgs) Kind() string { return "upi_erase_phones" }

// erasePhonesWorker erases the numbers (and keys and consent) of orders
// older than the retention, and of their deliveries; the masked destination
// stays as the record that a message was sent.
func (s *Service) erasePhonesWorker() river.Worker[erasePhonesArgs] {
	return jobs.CountedTask[erasePhonesArgs](s.ErasePhones)
}

// ErasePhones erases the phone numbers captured more than the retention
// period ago (Config.PhoneRetention) and returns how many orders it
// cleared.
func (s *Service) ErasePhones(ctx context.Context) (int64, error) {
	cutoff := s.now().Add(-s.cfg.PhoneRetention).UnixMicro()
	var n int64
	err := s.inTx(ctx, func(ctx context.Context, tx *store.Tx) error {
		var err error
		n, err = tx.Exec(ctx, `UPDATE upi_orders SET phone = '', phone_key = '', phone_consent_at = 0
			WHERE phone <> '' AND created_at < $1`, cutoff)
		if err != nil {
			return err
		}
		if _, err = tx.Exec(ctx, `UPDATE upi_receipt_deliveries SET phone = '', phone_key = '' WHERE phone <> '' AND created_at < $1`, cutoff); err != nil {
			return err
		}
		// The daily counts are needed for a day; two days' keep the cap
		// right across the IST midnight.
		_, err = tx.Exec(ctx, "DELETE FROM sms_daily WHERE day < $1", s.now().In(ist).AddDate(0, 0, -2).Format(time.DateOnly))
		return err
	})
	if n > 0 {
		s.logger.InfoContext(ctx, "phone numbers erased after the retention period", "orders", n)
	}
	return n, err
}

// Schedule adds the module's periodic job, the hourly erasure of phone
// numbers past their retention. Call it once, before the job client
// starts, on hubs that work jobs.
func (s *Service) Schedule() {
	s.periodic.Periodic(river.PeriodicInterval(time.Hour), erasePhonesArgs{}, &river.PeriodicJobOpts{RunOnStart: true})
}
