package party

import "github.com/ocpihub/ocpihub/internal/store"

// ForgetAtCommit is forgetAtCommit, for tests that change platforms
// inside a transaction of their own.
func (s *Service) ForgetAtCommit(tx *store.Tx) { s.forgetAtCommit(tx) }

// RememberMax is rememberMax.
const RememberMax = rememberMax
