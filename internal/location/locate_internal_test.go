package location

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestContainsAgreesWithPick: the check commands and authorizations use
// (contains, over the stored body) answers as pick, which decodes the
// whole document, does: on random locations whose EVSE uids and connector
// ids differ in case, are escaped, repeat across EVSEs, or are not strings,
// and whose lists hold values that are not objects.
func TestContainsAgreesWithPick(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 4))
	ids := []string{"E1", "e1", "E2", "Ä1", "1", "2", "x y", "E\"1"}
	escape := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			switch {
			case r == '"':
				b.WriteString(`\"`)
			case rng.IntN(4) == 0:
				fmt.Fprintf(&b, `\u%04x`, r)
			default:
				b.WriteRune(r)
			}
		}
		return b.String()
	}
	value := func(key string) string {
		switch rng.IntN(8) {
		case 0:
			return `"` + key + `":7`
		case 1:
			return `"` + key + `":null`
		case 2:
			return ""
		}
		return `"` + key + `":"` + escape(ids[rng.IntN(len(ids))]) + `"`
	}
	list := func(item func() string) string {
		var items []string
		for range rng.IntN(4) {
			switch rng.IntN(6) {
			case 0:
				items = append(items, `"E1"`)
			case 1:
				items = append(items, `[]`)
			default:
				items = append(items, item())
			}
		}
		return "[" + strings.Join(items, ",") + "]"
	}
	object := func(fields ...string) string {
		var kept []string
		for _, f := range fields {
			if f != "" {
				kept = append(kept, f)
			}
		}
		return "{" + strings.Join(kept, ",") + "}"
	}
	connector := func() string { return object(value("id"), `"standard":"IEC_62196_T2"`) }
	evse := func() string {
		conns := `"connectors":` + list(connector)
		if rng.IntN(6) == 0 {
			conns = `"connectors":{"id":"1"}`
		}
		return object(value("uid"), `"status":"AVAILABLE"`, conns)
	}
	checked := 0
	for i := range 20_000 {
		evses := `"evses":` + list(evse)
		if rng.IntN(10) == 0 {
			evses = `"evses":"E1"`
		}
		body := []byte(object(`"id":"LOC1"`, evses, `"name":"x"`))
		e := ids[rng.IntN(len(ids))]
		c := ""
		if rng.IntN(2) == 0 {
			c = ids[rng.IntN(len(ids))]
		}
		_, err := pick(body, Ref{LocationID: "LOC1", EVSEUID: e, ConnectorID: c})
		if want, got := err == nil, contains(body, e, c); got != want {
			t.Fatalf("case %d: %s\nEVSE %q connector %q: contains %v, pick finds it %v (%v)", i, body, e, c, got, want, err)
		}
		if err == nil {
			checked++
		}
	}
	if checked < 500 {
		t.Errorf("only %d of 20 000 cases found what they named; the generator tests too little", checked)
	}
}
