package store_test

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/ocpihub/ocpihub/internal/store"
	"github.com/ocpihub/ocpihub/internal/store/storetest"
)

// TestLateLowerMigrationIsApplied: migrations are numbered by module range,
// so a release can bring a migration numbered below one an earlier release
// applied. A database migrated with versions 1 and 30 reports 20 as pending
// when a later release knows it, then applies it, once.
func TestLateLowerMigrationIsApplied(t *testing.T) {
	t.Parallel()
	mig := func(table string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("-- +goose Up\nCREATE TABLE " + table + " (id BIGINT);\n-- +goose Down\nDROP TABLE " + table + ";\n")}
	}
	early := fstest.MapFS{"0001_a.sql": mig("late_a"), "0030_c.sql": mig("late_c")}
	later := fstest.MapFS{"0001_a.sql": mig("late_a"), "0020_b.sql": mig("late_b"), "0030_c.sql": mig("late_c")}
	storetest.EachEngine(t, func(t *testing.T, engine store.Engine) {
		ctx := context.Background()
		db, err := store.Open(ctx, storetest.URL(t, engine), store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })

		if err := db.UpFS(ctx, early); err != nil {
			t.Fatalf("early release: %v", err)
		}
		if cur, latest, err := db.StatusFS(ctx, early); err != nil || cur != 30 || latest != 30 {
			t.Fatalf("early release status: current %d, latest %d, %v; want 30, 30", cur, latest, err)
		}
		// The later release before migrating: 20 is pending, so current
		// stays at 1 although 30 is applied.
		if cur, latest, err := db.StatusFS(ctx, later); err != nil || cur != 1 || latest != 30 {
			t.Fatalf("later release status before migrating: current %d, latest %d, %v; want 1, 30", cur, latest, err)
		}
		if err := db.UpFS(ctx, later); err != nil {
			t.Fatalf("later release: %v", err)
		}
		if cur, latest, err := db.StatusFS(ctx, later); err != nil || cur != 30 || latest != 30 {
			t.Fatalf("later release status: current %d, latest %d, %v; want 30, 30", cur, latest, err)
		}
		var n int
		if err := db.Read().QueryRow(ctx, "SELECT COUNT(*) FROM late_b").Scan(&n); err != nil {
			t.Fatalf("the late migration's table: %v", err)
		}
		// Running again applies nothing twice.
		if err := db.UpFS(ctx, later); err != nil {
			t.Fatalf("again: %v", err)
		}
	})
}
