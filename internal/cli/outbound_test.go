package cli

import (
	"bytes"
	"testing"
)

// TestOutboundAllowSetting: --outbound-allow and OCPIHUB_OUTBOUND_ALLOW read
// a comma-separated allow-list; a name or a bad range is refused.
func TestOutboundAllowSetting(t *testing.T) {
	t.Parallel()
	var errOut bytes.Buffer
	e := env{stderr: &errOut, getenv: func(k string) string {
		return map[string]string{"OCPIHUB_OUTBOUND_ALLOW": "127.0.0.0/8, ::1, 10.1.2.3:587"}[k]
	}}
	fs, cfg, apply := newFlagSet(e, "serve", "serve")
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if err := apply(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range cfg.OutboundAllow {
		got = append(got, r.String())
	}
	if len(got) != 3 || got[0] != "127.0.0.0/8" || got[1] != "::1" || got[2] != "10.1.2.3:587" {
		t.Errorf("allow-list from the environment: %v", got)
	}
	for _, bad := range []string{"localhost", "10.0.0.0/33", "smtp.example.com:587"} {
		fs, _, _ := newFlagSet(e, "serve", "serve")
		if err := fs.Parse([]string{"--outbound-allow", bad}); err == nil {
			t.Errorf("--outbound-allow %s accepted", bad)
		}
	}
}
