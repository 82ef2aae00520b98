package core

import (
	"errors"
	"testing"
)

// TestDecodeErrors: what is not JSON is EINVALIDJSON wherever it breaks
// (Decode leaves that check to the decoder's own pass); JSON that is not
// an object, or of the wrong shape, is EINVALID naming the field; nothing
// is decoded from a body that is not JSON.
func TestDecodeErrors(t *testing.T) {
	t.Parallel()
	type wire struct {
		KWh   Number `json:"kwh"`
		Inner struct {
			N int `json:"n"`
		} `json:"inner"`
	}
	for _, c := range []struct {
		body, code, field string
	}{
		{`{"kwh":1,"inner":{"n":2}}`, "", ""},
		{``, EINVALIDJSON, ""},
		{`{"kwh":`, EINVALIDJSON, ""},
		{`{"kwh":1} {}`, EINVALIDJSON, ""},
		{`{"kwh":1,}`, EINVALIDJSON, ""},
		{`"text`, EINVALIDJSON, ""},
		{`[1,2]`, EINVALID, "body"},
		{`"text"`, EINVALID, "body"},
		{`{"kwh":"x"}`, EINVALID, "kwh"},
		{`{"inner":{"n":"2"}}`, EINVALID, "inner.n"},
		{`{"inner":{"n":2},"kwh":1,"tail":[}`, EINVALIDJSON, ""},
	} {
		var v wire
		err := Decode([]byte(c.body), &v)
		var e *Error
		switch {
		case c.code == "" && err != nil:
			t.Errorf("%s: %v", c.body, err)
		case c.code != "" && (!errors.As(err, &e) || e.Code != c.code || e.Field != c.field):
			t.Errorf("%s: %#v; want %s naming %q", c.body, err, c.code, c.field)
		case c.code == EINVALIDJSON && (v.KWh.Valid() || v.Inner.N != 0):
			t.Errorf("%s: decoded %+v from a body that is not JSON", c.body, v)
		}
	}
}
