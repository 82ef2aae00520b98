package store

import (
	"strings"
	"testing"
)

// TestNotifyChannelFitsPostgreSQL: a channel is named after its schema, and
// never longer than the 63 bytes pg_notify takes, however long the schema's
// name; two long names that differ only at their end get two channels.
func TestNotifyChannelFitsPostgreSQL(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("s", 63)
	seen := map[string]string{}
	for _, schema := range []string{"", "t_0123456789ab", strings.Repeat("x", 48), strings.Repeat("x", 49), long + "a", long + "b"} {
		ch := (&DB{schema: schema}).notifyChannel()
		if len(ch) > 63 {
			t.Errorf("schema %q: channel %q is %d bytes", schema, ch, len(ch))
		}
		if other, ok := seen[ch]; ok {
			t.Errorf("schemas %q and %q share the channel %q", other, schema, ch)
		}
		seen[ch] = schema
	}
	if ch := (&DB{schema: "t_0123456789ab"}).notifyChannel(); ch != "ocpihub_forget_t_0123456789ab" {
		t.Errorf("a short schema's channel is %q", ch)
	}
}
