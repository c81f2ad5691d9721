package broadcast

import "context"

// ContinueFree is the Continue free button's action (continueFreeErr), for
// the tests of package broadcast_test.
func (s *Service) ContinueFree(ctx context.Context, who, id string) (string, error) {
	return s.continueFreeErr(ctx, who, id)
}
