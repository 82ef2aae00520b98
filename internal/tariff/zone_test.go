package tariff

import (
	"strings"
	"testing"
	"time"
)

// TestZoneLoadedOnce: a zone is loaded once and kept; a name that does not
// load is refused each time and never kept; Zone falls back to UTC; names
// that load in other spellings are kept up to maxZones, no more.
func TestZoneLoadedOnce(t *testing.T) {
	a, err := LoadZone("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadZone("Asia/Kolkata")
	if err != nil || a != b {
		t.Fatalf("the second load: %p (%v), want the first's %p", b, err, a)
	}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).In(a)
	if _, off := at.Zone(); off != 5*3600+1800 {
		t.Fatalf("Asia/Kolkata's offset %d s, want +05:30", off)
	}
	for _, name := range []string{"Mars/Olympus_Mons", "../../etc/passwd"} {
		for range 2 {
			if _, err := LoadZone(name); err == nil {
				t.Fatalf("%q loaded", name)
			}
		}
		zones.RLock()
		_, kept := zones.m[name]
		zones.RUnlock()
		if kept {
			t.Fatalf("%q kept after failing to load", name)
		}
		if Zone(name) != time.UTC {
			t.Fatalf("Zone(%q) is not UTC", name)
		}
	}
	if Zone("") != time.UTC {
		t.Fatal(`Zone("") is not UTC`)
	}
	// Names that load in other spellings are kept up to maxZones.
	for i := range maxZones + 10 {
		name := "Asia" + strings.Repeat("/", 2+i) + "Kolkata"
		if _, err := LoadZone(name); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
	}
	zones.RLock()
	n := len(zones.m)
	zones.RUnlock()
	if n > maxZones {
		t.Fatalf("%d zones kept, more than %d", n, maxZones)
	}
}
