package ocpi

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// failure is what a check reports: the path and the issue, or nothing.
type failure struct{ Field, Issue string }

func failureOf(c *Check) *failure {
	err := c.Err()
	if err == nil {
		return nil
	}
	e := err.(*Error)
	if e.Code != EINVALID {
		return &failure{"code", e.Code}
	}
	return &failure{e.Field, e.Issue}
}

// TestCheckPrimitives runs each helper on good and bad values.
func TestCheckPrimitives(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(c *Check)
		want *failure
	}{
		// string(n): characters, not bytes.
		{"string ok", func(c *Check) { c.String("name", "Zürich Hbf", 10, true) }, nil},
		{"string counts characters not bytes", func(c *Check) { c.String("name", strings.Repeat("é", 10), 10, true) }, nil},
		{"string too long", func(c *Check) { c.String("name", strings.Repeat("é", 11), 10, true) }, &failure{"name", "is longer than 10 characters"}},
		{"string emoji are one character each", func(c *Check) { c.String("name", "⚡🔌🚗", 3, true) }, nil},
		{"string no limit", func(c *Check) { c.String("name", strings.Repeat("x", 5000), 0, true) }, nil},
		{"string required", func(c *Check) { c.String("name", "", 10, true) }, &failure{"name", "is required"}},
		{"string optional empty", func(c *Check) { c.String("name", "", 10, false) }, nil},
		{"string newline", func(c *Check) { c.String("name", "a\nb", 10, true) }, &failure{"name", "contains a control character"}},
		{"string tab", func(c *Check) { c.String("name", "a\tb", 10, true) }, &failure{"name", "contains a control character"}},
		{"string DEL", func(c *Check) { c.String("name", "a\x7fb", 10, true) }, &failure{"name", "contains a control character"}},
		{"string C1 control", func(c *Check) { c.String("name", "a\u0085b", 10, true) }, &failure{"name", "contains a control character"}},
		{"string invalid UTF-8", func(c *Check) { c.String("name", "a\xffb", 10, true) }, &failure{"name", "is not valid UTF-8"}},

		// CiString(n): printable ASCII, bytes = characters.
		{"cistring ok", func(c *Check) { c.CiString("id", "LOC-1 a~", 36, true) }, nil},
		{"cistring exactly n", func(c *Check) { c.CiString("id", strings.Repeat("A", 36), 36, true) }, nil},
		{"cistring too long", func(c *Check) { c.CiString("id", strings.Repeat("A", 37), 36, true) }, &failure{"id", "is longer than 36 characters"}},
		{"cistring non-ASCII", func(c *Check) { c.CiString("id", "é", 36, true) }, &failure{"id", "must be printable ASCII"}},
		{"cistring control", func(c *Check) { c.CiString("id", "a\x01", 36, true) }, &failure{"id", "must be printable ASCII"}},
		{"cistring required", func(c *Check) { c.CiString("id", "", 36, true) }, &failure{"id", "is required"}},

		// Enums are exact (case-sensitive).
		{"enum ok", func(c *Check) { c.Enum("category", "CHARGER", ImageCategories, true) }, nil},
		{"enum wrong case", func(c *Check) { c.Enum("category", "charger", ImageCategories, true) },
			&failure{"category", `"charger" is not one of CHARGER, ENTRANCE, LOCATION, NETWORK, OPERATOR, OTHER, OWNER`}},
		{"enum required", func(c *Check) { c.Enum("category", "", ImageCategories, true) }, &failure{"category", "is required"}},
		{"enum optional", func(c *Check) { c.Enum("category", "", ImageCategories, false) }, nil},

		// Country and party ids.
		{"country ok", func(c *Check) { c.CountryCode("country_code", "IN", true) }, nil},
		{"country lower case", func(c *Check) { c.CountryCode("country_code", "nl", true) }, nil},
		{"country alpha-3", func(c *Check) { c.CountryCode("country_code", "IND", true) }, &failure{"country_code", "must be a two-letter ISO 3166-1 alpha-2 code"}},
		{"country digits", func(c *Check) { c.CountryCode("country_code", "N1", true) }, &failure{"country_code", "must be a two-letter ISO 3166-1 alpha-2 code"}},
		{"country non-ASCII", func(c *Check) { c.CountryCode("country_code", "É", true) }, &failure{"country_code", "must be a two-letter ISO 3166-1 alpha-2 code"}},
		{"country required", func(c *Check) { c.CountryCode("country_code", "", true) }, &failure{"country_code", "is required"}},
		{"party ok", func(c *Check) { c.PartyID("party_id", "TN1", true) }, nil},
		{"party short", func(c *Check) { c.PartyID("party_id", "TN", true) }, &failure{"party_id", "must be three letters or digits"}},
		{"party symbol", func(c *Check) { c.PartyID("party_id", "T-N", true) }, &failure{"party_id", "must be three letters or digits"}},
		{"party punctuation near letters", func(c *Check) { c.PartyID("party_id", "AB@", true) }, &failure{"party_id", "must be three letters or digits"}},
		{"language ok", func(c *Check) { c.Language("language", "hi", true) }, nil},
		{"language long", func(c *Check) { c.Language("language", "hin", true) }, &failure{"language", "must be a two-letter ISO 639-1 language code"}},
		{"currency ok", func(c *Check) { c.Currency("currency", "INR", true) }, nil},
		{"currency digits", func(c *Check) { c.Currency("currency", "356", true) }, &failure{"currency", "must be a three-letter ISO 4217 currency code"}},

		// URL: string(255), absolute http(s).
		{"url ok", func(c *Check) { c.URL("url", "https://cpo.example/ocpi/versions", true) }, nil},
		{"url http", func(c *Check) { c.URL("url", "http://127.0.0.1:8080/ocpi/versions", true) }, nil},
		{"url relative", func(c *Check) { c.URL("url", "/ocpi/versions", true) }, &failure{"url", "must be an absolute http or https URL"}},
		{"url other scheme", func(c *Check) { c.URL("url", "ftp://cpo.example/", true) }, &failure{"url", "must be an absolute http or https URL"}},
		{"url 255", func(c *Check) { c.URL("url", "https://x.example/"+strings.Repeat("a", 255-18), true) }, nil},
		{"url 256", func(c *Check) { c.URL("url", "https://x.example/"+strings.Repeat("a", 256-18), true) }, &failure{"url", "is longer than 255 characters"}},
		{"url required", func(c *Check) { c.URL("url", "", true) }, &failure{"url", "is required"}},
		{"url optional", func(c *Check) { c.URL("url", "", false) }, nil},

		// DisplayText lists name the element.
		{"display texts ok", func(c *Check) {
			c.DisplayTexts("directions", []DisplayText{{Language: "en", Text: "Turn left"}, {Language: "hi", Text: "बाएं मुड़ें"}})
		}, nil},
		{"display text bad language", func(c *Check) {
			c.DisplayTexts("directions", []DisplayText{{Language: "en", Text: "ok"}, {Language: "english", Text: "Turn left"}})
		}, &failure{"directions[1].language", "must be a two-letter ISO 639-1 language code"}},
		{"display text too long", func(c *Check) {
			c.DisplayTexts("directions", []DisplayText{{Language: "en", Text: strings.Repeat("x", 513)}})
		}, &failure{"directions[0].text", "is longer than 512 characters"}},
		{"display text empty", func(c *Check) { c.DisplayTexts("directions", []DisplayText{{Language: "en", Text: ""}}) }, &failure{"directions[0].text", "is required"}},

		// Price.
		{"price ok", func(c *Check) { c.Price("total_cost", &Price{ExclVAT: NewNumber("1.5")}, true) }, nil},
		{"price with vat", func(c *Check) {
			c.Price("total_cost", &Price{ExclVAT: NewNumber("1.5"), InclVAT: ptr(NewNumber("1.77"))}, true)
		}, nil},
		{"price without excl_vat", func(c *Check) { c.Price("total_cost", &Price{}, true) }, &failure{"total_cost.excl_vat", "is required"}},
		{"price with null incl_vat", func(c *Check) {
			c.Price("total_cost", &Price{ExclVAT: NewNumber("1"), InclVAT: &Number{}}, true)
		}, &failure{"total_cost.incl_vat", "is required"}},
		{"price required", func(c *Check) { c.Price("total_cost", nil, true) }, &failure{"total_cost", "is required"}},
		{"price optional", func(c *Check) { c.Price("total_cost", nil, false) }, nil},

		// DateTime.
		{"datetime required", func(c *Check) { c.DateTime("last_updated", DateTime{}, true) }, &failure{"last_updated", "is required"}},
		{"datetime ok", func(c *Check) { c.DateTime("last_updated", NewDateTime(testNow), true) }, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := NewCheck("")
			tt.run(c)
			if diff := cmp.Diff(tt.want, failureOf(c)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckPaths: nested checks report JSON paths, and the first failure
// wins.
func TestCheckPaths(t *testing.T) {
	t.Parallel()
	c := NewCheck("")
	c.CiString("id", "LOC1", 36, true)
	evse := c.Index("evses", 2)
	conn := evse.Index("connectors", 0)
	conn.Required("max_voltage", false)
	evse.Merge(conn)
	c.Merge(evse)
	c.String("name", "", 10, true) // later failure: ignored
	if diff := cmp.Diff(&failure{"evses[2].connectors[0].max_voltage", "is required"}, failureOf(c)); diff != "" {
		t.Error(diff)
	}
	if !c.Failed() {
		t.Error("Failed() = false after a failure")
	}

	p := NewCheck("body")
	if got := p.Path("x"); got != "body.x" {
		t.Errorf("Path = %s", got)
	}
	if got := p.Path("[3]"); got != "body[3]" {
		t.Errorf("Path = %s", got)
	}
	if got := p.Sub("coordinates").Path("latitude"); got != "body.coordinates.latitude" {
		t.Errorf("Sub path = %s", got)
	}
	sub := p.Sub("coordinates")
	sub.Fail("latitude", "must match %s", `-?[0-9]{1,2}\.[0-9]{5,7}`)
	p.Merge(sub)
	if diff := cmp.Diff(&failure{"body.coordinates.latitude", `must match -?[0-9]{1,2}\.[0-9]{5,7}`}, failureOf(p)); diff != "" {
		t.Error(diff)
	}
	// A sub-check started after a failure does not replace it.
	late := p.Sub("other")
	late.Fail("x", "late")
	p.Merge(late)
	if failureOf(p).Field != "body.coordinates.latitude" {
		t.Errorf("a later failure replaced the first: %+v", failureOf(p))
	}
	if NewCheck("").Err() != nil {
		t.Error("a fresh Check has an error")
	}
}

// TestCredentialsCheck validates the one module object that exists now.
func TestCredentialsCheck(t *testing.T) {
	t.Parallel()
	valid := func() Credentials {
		return Credentials{Token: "ebf3b399-779f-4497-9b9d-ac6ad3cc44d2", URL: "https://cpo.example/ocpi/versions", Roles: []CredentialsRole{
			{Role: "CPO", CountryCode: "NL", PartyID: "EXA", BusinessDetails: BusinessDetails{Name: "Example CPO", Logo: &Image{URL: "https://cpo.example/logo.png", Category: "OPERATOR", Type: "png", Width: ptr(512), Height: ptr(512)}}},
			{Role: "EMSP", CountryCode: "NL", PartyID: "EXA", BusinessDetails: BusinessDetails{Name: "Example eMSP"}},
		}}
	}
	roles := []string{"CPO", "EMSP", "HUB", "NAP", "NSP", "OTHER", "SCSP"}
	tests := []struct {
		name string
		edit func(c *Credentials)
		want *failure
	}{
		{"valid", func(c *Credentials) {}, nil},
		{"no token", func(c *Credentials) { c.Token = "" }, &failure{"token", "is required"}},
		{"token with space", func(c *Credentials) { c.Token = "a b" }, &failure{"token", "must be 1 to 64 printable ASCII characters without spaces"}},
		{"token of 65", func(c *Credentials) { c.Token = strings.Repeat("t", 65) }, &failure{"token", "must be 1 to 64 printable ASCII characters without spaces"}},
		{"relative url", func(c *Credentials) { c.URL = "versions" }, &failure{"url", "must be an absolute http or https URL"}},
		{"no roles", func(c *Credentials) { c.Roles = nil }, &failure{"roles", "must list at least one role"}},
		{"bad role", func(c *Credentials) { c.Roles[1].Role = "PTP" }, &failure{"roles[1].role", `"PTP" is not one of CPO, EMSP, HUB, NAP, NSP, OTHER, SCSP`}},
		{"bad party", func(c *Credentials) { c.Roles[0].PartyID = "EXAMPLE" }, &failure{"roles[0].party_id", "must be three letters or digits"}},
		{"no business name", func(c *Credentials) { c.Roles[0].BusinessDetails.Name = "" }, &failure{"roles[0].business_details.name", "is required"}},
		{"bad logo category", func(c *Credentials) { c.Roles[0].BusinessDetails.Logo.Category = "LOGO" },
			&failure{"roles[0].business_details.logo.category", `"LOGO" is not one of CHARGER, ENTRANCE, LOCATION, NETWORK, OPERATOR, OTHER, OWNER`}},
		{"logo width of 6 digits", func(c *Credentials) { c.Roles[0].BusinessDetails.Logo.Width = ptr(100000) },
			&failure{"roles[0].business_details.logo.width", "must be a non-negative integer of at most 5 digits"}},
		{"both logo sizes bad: width is reported first", func(c *Credentials) {
			c.Roles[0].BusinessDetails.Logo.Width = ptr(-1)
			c.Roles[0].BusinessDetails.Logo.Height = ptr(-1)
		}, &failure{"roles[0].business_details.logo.width", "must be a non-negative integer of at most 5 digits"}},
		{"duplicate role", func(c *Credentials) { c.Roles[1] = c.Roles[0]; c.Roles[1].PartyID = "exa" },
			&failure{"roles[1]", "role CPO NL/exa is listed twice"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// Repeated: the order of failures must not depend on map order.
			for range 20 {
				c := valid()
				tt.edit(&c)
				chk := NewCheck("")
				if err := c.Check(roles); err != nil {
					chk.err = err.(*Error)
				}
				if diff := cmp.Diff(tt.want, failureOf(chk)); diff != "" {
					t.Fatalf("(-want +got):\n%s", diff)
				}
			}
		})
	}
}

// TestKeys covers the CiString helpers.
func TestKeys(t *testing.T) {
	t.Parallel()
	if Key("nl-Exa") != "NL-EXA" || !EqualCI("exa", "EXA") || EqualCI("exa", "exb") {
		t.Error("Key/EqualCI")
	}
}

func ptr[T any](v T) *T { return &v }

var testNow = time.Date(2025, 3, 4, 5, 6, 7, 890_000_000, time.UTC)
