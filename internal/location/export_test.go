package location

// SetPositionSpan cuts the directory's position index into buckets of n
// rows, so a test with a few dozen locations has many buckets.
func SetPositionSpan(s *Service, n int64) { s.positions.Span = n }
