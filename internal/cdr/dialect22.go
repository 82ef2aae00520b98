package cdr

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"github.com/ocpihub/ocpihub/internal/hub"
)

// Dialect22 is what the hub sends partners speaking OCPI 2.2: the 2.2.1
// messages, except that signed data with a SignedValue.signed_data longer
// than 2.2's 512 characters is left out of a CDR (signed_data is optional;
// a 2.2 receiver would reject the whole CDR). Answers need no conversion.
type Dialect22 struct{}

// signedDataMax22 is SignedValue.signed_data's length in OCPI 2.2.
const signedDataMax22 = 512

// Request implements hub.Dialect.
func (Dialect22) Request(ctx context.Context, m *hub.Message) (bool, error) {
	if m.Module != Module || len(m.Body) == 0 {
		return true, nil
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(m.Body, &doc) != nil || doc["signed_data"] == nil {
		return true, nil
	}
	var sd struct {
		SignedValues []struct {
			SignedData string `json:"signed_data"`
		} `json:"signed_values"`
	}
	if json.Unmarshal(doc["signed_data"], &sd) != nil {
		return true, nil
	}
	for _, v := range sd.SignedValues {
		if utf8.RuneCountInString(v.SignedData) > signedDataMax22 {
			delete(doc, "signed_data")
			b, err := json.Marshal(doc)
			if err != nil {
				return false, err
			}
			m.Body = b
			break
		}
	}
	return true, nil
}

// Answer implements hub.Dialect.
func (Dialect22) Answer(ctx context.Context, m hub.Message, data json.RawMessage) (json.RawMessage, error) {
	return data, nil
}
