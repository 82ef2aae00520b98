package app

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/ocpihub/ocpihub/internal/netguard"
	"github.com/ocpihub/ocpihub/internal/sms"
)

// SMSReportPath is where the SMS provider posts its delivery reports.
const SMSReportPath = "/ocpi/2.2.1/payments/upi/sms/reports"

// SMS providers (--sms-provider).
const (
	SMSProviderMSG91  = "msg91"
	SMSProviderSigned = "signed"
)

// buildSMS returns the SMS gateway the --sms-* settings describe: the
// MSG91-shaped template API or the signed JSON POST, through the outbound
// address guard; in dev mode without a provider, the built-in simulator
// (in the MSG91 shape, reporting to this hub) when the binary brings one
// (Options.Simulators). Nil without a provider: receipts are not sent by
// SMS. CLI commands (insertOnly) start no simulator.
func (a *App) buildSMS(insertOnly bool) (sms.Gateway, error) {
	cfg := a.Config
	dlt := sms.DLT{Sender: cfg.SMSSender, TemplateID: cfg.SMSDLTTemplateID, EntityID: cfg.SMSDLTEntityID}
	switch cfg.SMSProvider {
	case SMSProviderMSG91:
		return &sms.MSG91{BaseURL: cfg.SMSURL, AuthKey: cfg.SMSAuthKey, TemplateID: cfg.SMSFlowID, DLT: dlt,
			ReportToken: cfg.SMSSecret, Guard: a.Guard}, nil
	case SMSProviderSigned:
		return &sms.Signed{URL: cfg.SMSURL, Secret: cfg.SMSSecret, DLT: dlt, Guard: a.Guard, Clock: a.Clock.Now}, nil
	}
	if !cfg.DevMode || insertOnly || a.sims.SMS == nil {
		return nil, nil
	}
	sim, err := a.sims.SMS(SMSSimOptions{Clock: a.Clock, Logger: a.Logger.With("component", "smssim"), ReportURL: a.PublicURL() + SMSReportPath})
	if err != nil {
		return nil, errors.Join(errors.New("start the built-in SMS simulator"), err)
	}
	rule, err := netguard.ParseRule(strings.TrimPrefix(sim.URL, "http://"))
	if err != nil {
		sim.Server.Close()
		return nil, fmt.Errorf("the built-in SMS simulator's address: %w", err)
	}
	a.SMSSim = sim.Server
	a.Logger.Warn("dev mode: receipts go by SMS to the built-in SMS simulator; set --sms-provider for a real one", "sms_url", sim.URL)
	sim.Client.Guard = a.Guard.With(rule)
	return sim.Client, nil
}

// checkSMS validates the --sms-* settings.
func (c Config) checkSMS() error {
	switch c.SMSProvider {
	case "":
		return nil
	case SMSProviderMSG91, SMSProviderSigned:
	default:
		return fmt.Errorf("sms provider %q: want msg91 or signed", c.SMSProvider)
	}
	u, err := url.Parse(c.SMSURL)
	if err != nil || u.Host == "" || (u.Scheme != "https" && !(c.DevMode && u.Scheme == "http")) {
		return fmt.Errorf("sms url %q: want an https URL", c.SMSURL)
	}
	if err := (sms.DLT{Sender: c.SMSSender, TemplateID: c.SMSDLTTemplateID, EntityID: c.SMSDLTEntityID}).Check(); err != nil {
		return err
	}
	if len(c.SMSSecret) < 16 {
		return fmt.Errorf("sms secret: want at least 16 characters (it authenticates the delivery reports)")
	}
	if c.SMSProvider == SMSProviderMSG91 && (c.SMSAuthKey == "" || c.SMSFlowID == "") {
		return fmt.Errorf("sms provider msg91 needs --sms-auth-key and --sms-flow-id")
	}
	if c.SMSDailyCap < 0 {
		return fmt.Errorf("sms daily cap must not be negative")
	}
	return nil
}

// phoneKey keys the hash that counts a phone number's SMS per day: derived
// from the secret key, so the hash does not give the number away.
func phoneKey(secret string) []byte {
	k := sha256.Sum256([]byte("ocpihub phone key\x00" + secret))
	return k[:]
}
