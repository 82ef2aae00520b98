package app_test

import (
	"strings"
	"testing"

	"github.com/ocpihub/ocpihub/internal/app"
	"github.com/ocpihub/ocpihub/internal/upi/receipt"
)

// TestSMSAndGSTSettings: the SMS and GST settings are checked at start-up;
// each mistake is refused with a message naming the setting.
func TestSMSAndGSTSettings(t *testing.T) {
	t.Parallel()
	good := func() app.Config {
		c := app.Defaults()
		c.SMSProvider, c.SMSURL, c.SMSSecret = app.SMSProviderSigned, "https://sms.example.in/send", "report-secret-0123456789"
		c.SMSSender, c.SMSDLTTemplateID, c.SMSDLTEntityID = "OCPHUB", "1107170000000000001", "1101170000000000001"
		c.GST = receipt.GSTConfig{SupplierName: "Operator Pvt Ltd", SupplierAddress: "Bengaluru", GSTIN: "29AAGCB7383J1Z4"}
		return c
	}
	if err := good().Validate(); err != nil {
		t.Fatalf("good settings: %v", err)
	}
	for _, c := range []struct {
		name string
		edit func(*app.Config)
		want string
	}{
		{"unknown provider", func(c *app.Config) { c.SMSProvider = "twilio" }, "sms provider"},
		{"http in production", func(c *app.Config) { c.SMSURL = "http://sms.example.in/send" }, "sms url"},
		{"short secret", func(c *app.Config) { c.SMSSecret = "short" }, "sms secret"},
		{"bad sender", func(c *app.Config) { c.SMSSender = "OCPIHUB" }, "sms_sender"},
		{"bad template id", func(c *app.Config) { c.SMSDLTTemplateID = "abc" }, "sms_template_id"},
		{"msg91 without authkey", func(c *app.Config) { c.SMSProvider = app.SMSProviderMSG91 }, "--sms-auth-key"},
		{"GSTIN check character", func(c *app.Config) { c.GST.GSTIN = "29AAGCB7383J1Z5" }, "gstin"},
		{"GST without a name", func(c *app.Config) { c.GST.SupplierName = "" }, "gst_supplier_name"},
	} {
		cfg := good()
		c.edit(&cfg)
		err := cfg.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
}
