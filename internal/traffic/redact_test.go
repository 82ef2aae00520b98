package traffic

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRedactBody(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, ct, want string
		ids                []string
		status             int
	}{
		{name: "credentials token", in: `{"token":"s3cr3t-token","url":"https://x/versions","roles":[]}`,
			want: `{"token":"[redacted]","url":"https://x/versions","roles":[]}`},
		{name: "credentials answer", in: `{"data":{"token":"tok-B","url":"u"},"status_code":1000}`,
			want: `{"data":{"token":"[redacted]","url":"u"},"status_code":1000}`, status: 1000},
		{name: "token object is kept", in: `{"token":{"uid":"U1","type":"RFID"},"location_id":"LOC1"}`,
			want: `{"token":{"uid":"U1","type":"RFID"},"location_id":"LOC1"}`, ids: []string{"LOC1"}},
		{name: "webhook secret", in: `{"url":"https://h","secret":"whsec_abc","events":["a"]}`,
			want: `{"url":"https://h","secret":"[redacted]","events":["a"]}`},
		{name: "personal data", in: `{"email":"ravi@example.com","phone":"+919876543210","vpa":"ravi@okbank","note":"mail x.y@z.org"}`,
			want: `{"email":"r***@example.com","phone":"+***10","vpa":"r***@okbank","note":"mail x.y@z.org"}`},
		{name: "email anywhere", in: `{"a":[{"b":"x.y@z.org"}]}`, want: `{"a":[{"b":"x***@z.org"}]}`},
		{name: "key order and numbers kept", in: `{"z":1.50,"a":[true,null,2]}`, want: `{"z":1.50,"a":[true,null,2]}`},
		{name: "ids of an answer", in: `{"status_code":1000,"data":{"id":"S1","nested":{"id":"no"}}}`,
			want: `{"status_code":1000,"data":{"id":"S1","nested":{"id":"no"}}}`, ids: []string{"S1"}, status: 1000},
		{name: "form", in: "key_secret=abc&email=a.b@c.org&amount=100", ct: "application/x-www-form-urlencoded",
			want: "amount=100&email=a%2A%2A%2A%40c.org&key_secret=%5Bredacted%5D"},
		{name: "not JSON", in: "plain text", want: "plain text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, f, err := RedactBody([]byte(tt.in), tt.ct)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.ids, f.objectIDs); diff != "" {
				t.Errorf("object ids (-want +got):\n%s", diff)
			}
			if f.statusCode != tt.status {
				t.Errorf("status_code = %d, want %d", f.statusCode, tt.status)
			}
		})
	}
}

func TestRedactBodyRefusesBrokenJSON(t *testing.T) {
	t.Parallel()
	if _, _, err := RedactBody([]byte(`{"token":"abc"`), "application/json"); err == nil {
		t.Fatal("a cut JSON body was accepted")
	}
}

func TestRedactHeaderAndURL(t *testing.T) {
	t.Parallel()
	h := RedactHeader(http.Header{"Authorization": {"Token abc"}, "X-Razorpay-Signature": {"sig"}, "X-Request-Id": {"r1"}})
	if h.Get("Authorization") != Redacted || h.Get("X-Razorpay-Signature") != Redacted || h.Get("X-Request-Id") != "r1" {
		t.Errorf("headers: %v", h)
	}
	u := RedactURL("https://user:pw@x.org/p?token=abc&limit=5")
	if strings.Contains(u, "abc") || strings.Contains(u, "pw") || !strings.Contains(u, "limit=5") {
		t.Errorf("url: %s", u)
	}
}

func TestModuleAndPathIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		path, module string
		ids          []string
	}{
		{"/ocpi/2.2.1/cpo/locations/NL/TNM/LOC1/EVSE1", "locations", []string{"LOC1", "EVSE1"}},
		{"/ocpi/emsp/2.2.1/locations/NL/TNM/LOC1", "locations", []string{"LOC1"}},
		{"/ocpi/2.2.1/emsp/commands/START_SESSION", "commands", nil},
		{"/ocpi/2.2.1/cpo/commands/START_SESSION/42", "commands", []string{"42"}},
		{"/ocpi/2.2.1", "versions", nil},
		{"/ocpi/2.2.1/credentials", "credentials", nil},
	}
	for _, tt := range tests {
		m := ModuleOf(tt.path)
		if m != tt.module {
			t.Errorf("ModuleOf(%s) = %q, want %q", tt.path, m, tt.module)
		}
		if diff := cmp.Diff(tt.ids, pathObjectIDs(tt.path, m)); diff != "" {
			t.Errorf("%s ids (-want +got):\n%s", tt.path, diff)
		}
	}
}
