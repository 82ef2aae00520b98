package tariff

import (
	"math/rand/v2"
	"testing"

	"github.com/shopspring/decimal"
)

// TestAccSumsExactly: acc's sum equals repeated decimal.Add for small and
// large terms, mixed exponents and signs, across the switch to decimals.
func TestAccSumsExactly(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewPCG(7, 11))
	for run := range 2000 {
		var a acc
		want := decimal.Zero
		for range 1 + rnd.IntN(60) {
			m := rnd.Int64N(1_000_000_000) - 500_000_000
			switch rnd.IntN(4) {
			case 0:
				m *= 1_000_000_000 // 18 digits: beyond the int64 sum
			case 1:
				m = 0
			}
			v := decimal.New(m, int32(rnd.IntN(30)-22))
			a.add(v)
			want = want.Add(v)
		}
		if got := a.value(); !got.Equal(want) {
			t.Fatalf("run %d: sum %s, want %s", run, got, want)
		}
	}
}
