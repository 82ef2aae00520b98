package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ocpihub/ocpihub/internal/hubtest"
	"github.com/ocpihub/ocpihub/internal/sim"
)

// TestQRCommands drives ocpihub qr … against a serving hub's database: a
// mapping for a connector the CPO published, the conflicts, listing and
// disabling.
func TestQRCommands(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		ctx := hubtest.Ctx(t, 60*time.Second)
		cpo, err := sim.StartCPO("CPO", "IN", "CPO", hubtest.Logger())
		if err != nil {
			t.Fatal(err)
		}
		defer cpo.Close()
		h.Register(t, cpo.Platform)
		loc := map[string]any{"country_code": "IN", "party_id": "CPO", "id": "LOC1", "publish": true, "address": "MG Road 1",
			"city": "Pune", "country": "IND", "coordinates": map[string]any{"latitude": "18.52040", "longitude": "73.85670"},
			"time_zone": "Asia/Kolkata", "last_updated": "2026-03-01T10:00:00Z",
			"evses": []any{map[string]any{"uid": "E1", "status": "AVAILABLE", "last_updated": "2026-03-01T10:00:00Z",
				"connectors": []any{map[string]any{"id": "1", "standard": "IEC_62196_T2", "format": "SOCKET", "power_type": "AC_3_PHASE",
					"max_voltage": 230, "max_amperage": 16, "last_updated": "2026-03-01T10:00:00Z"}}}}}
		if err := cpo.PutLocation(ctx, "LOC1", loc); err != nil {
			t.Fatal(err)
		}

		out := mustCLI(t, h, "qr", "create", "--location", "LOC1", "--evse", "E1", "--connector", "1", "--ref", "PUNE-1", "--json")
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil || m["qr_ref"] != "PUNE-1" || m["tenant_id"] != "IN*CPO" ||
			m["url"] != h.PublicURL()+"/qr/PUNE-1" {
			t.Fatalf("qr create --json: %v %s", err, out)
		}
		if _, errOut, code := cli(t, h, "qr", "create", "--location", "LOC1", "--evse", "E1", "--connector", "1"); code != 1 ||
			!strings.Contains(errOut, "PUNE-1") {
			t.Errorf("second mapping of the connector: exit %d: %s", code, errOut)
		}
		if _, errOut, code := cli(t, h, "qr", "create", "--location", "LOC1"); code != 2 || !strings.Contains(errOut, "--evse") {
			t.Errorf("create without --evse: exit %d: %s", code, errOut)
		}
		if out := mustCLI(t, h, "qr", "list"); !strings.Contains(out, "PUNE-1") || !strings.Contains(out, "ACTIVE") {
			t.Errorf("qr list:\n%s", out)
		}
		out = filepath.Join(t.TempDir(), "sticker.pdf")
		mustCLI(t, h, "qr", "render", "PUNE-1", "--out", out)
		if b, err := os.ReadFile(out); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
			t.Errorf("qr render: %v, %d bytes", err, len(b))
		}
		if svg := mustCLI(t, h, "qr", "render", "PUNE-1", "--format", "svg", "--out", "-"); !strings.Contains(svg, "<svg") {
			t.Errorf("qr render --format svg: %.80s", svg)
		}
		mustCLI(t, h, "qr", "disable", "PUNE-1")
		var list struct {
			Mappings []map[string]any `json:"qr_mappings"`
		}
		if err := json.Unmarshal([]byte(mustCLI(t, h, "qr", "list", "--json")), &list); err != nil || len(list.Mappings) != 0 {
			t.Errorf("active mappings after disable: %v %v", err, list.Mappings)
		}
		if err := json.Unmarshal([]byte(mustCLI(t, h, "qr", "list", "--all", "--json")), &list); err != nil || len(list.Mappings) != 1 ||
			list.Mappings[0]["status"] != "DISABLED" {
			t.Errorf("all mappings: %v %v", err, list.Mappings)
		}
		if _, errOut, code := cli(t, h, "qr", "show", "NOPE"); code != 1 || !strings.Contains(errOut, "not found") {
			t.Errorf("show unknown: exit %d: %s", code, errOut)
		}
	})
}

// TestPaymentCommands checks the payment commands' arguments against a
// serving hub without payments (the flows themselves are tested in
// internal/upi).
func TestPaymentCommands(t *testing.T) {
	t.Parallel()
	hubtest.Each(t, func(t *testing.T, h *hubtest.Hub) {
		var list struct {
			Payments []map[string]any `json:"payments"`
		}
		if err := json.Unmarshal([]byte(mustCLI(t, h, "payment", "list", "--json")), &list); err != nil || list.Payments == nil || len(list.Payments) != 0 {
			t.Errorf("payment list --json: %v %v", err, list)
		}
		for _, c := range []struct {
			args []string
			code int
			text string
		}{
			{[]string{"payment", "show", "UPINOPE"}, 1, "not found"},
			{[]string{"payment", "show"}, 2, "needs a payment ID"},
			{[]string{"payment", "refund", "UPINOPE"}, 2, "--amount"},
			{[]string{"payment", "refund", "UPINOPE", "--amount", "10.00"}, 1, "not found"},
			{[]string{"payment", "resolve", "UPINOPE", "--note", "done"}, 1, "not found"},
			{[]string{"payment", "resolve", "UPINOPE"}, 1, "note"},
			{[]string{"payment", "resolve", "UPINOPE", "--note", "x", "--settle-on", "half"}, 1, "settle_on"},
			{[]string{"payment", "frobnicate"}, 2, "unknown payment command"},
		} {
			if _, errOut, code := cli(t, h, c.args...); code != c.code || !strings.Contains(errOut, c.text) {
				t.Errorf("%v: exit %d: %s", c.args, code, errOut)
			}
		}
	})
}
