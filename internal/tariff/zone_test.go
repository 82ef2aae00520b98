package tariff

import (
	"testing"
	"time"
)

// TestZoneLoadedOnce: a zone is loaded once and kept; a name that does not
// load is refused each time and never kept; Zone falls back to UTC.
func TestZoneLoadedOnce(t *testing.T) {
	t.Parallel()
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
		if _, kept := zones.Load(name); kept {
			t.Fatalf("%q kept after failing to load", name)
		}
		if Zone(name) != time.UTC {
			t.Fatalf("Zone(%q) is not UTC", name)
		}
	}
	if Zone("") != time.UTC {
		t.Fatal(`Zone("") is not UTC`)
	}
}
