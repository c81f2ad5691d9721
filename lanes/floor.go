package lanes

import (
	"context"
	"fmt"
	"strconv"
	"time"
)

// DefaultFloorEpoch is the epoch of the shared round-trip floor
// (ShareFloor) of a store made without WithFloorEpoch.
const DefaultFloorEpoch = 10 * time.Second

// MaxClaimerBytes is the longest claimer id ShareFloor, Heartbeat and
// ClaimRequest.Claimer take.
const MaxClaimerBytes = 128

// ShareFloor publishes claimer's round-trip floor (see Lease.Floor; whole
// ms, 0..MaxFloor) and returns the store's floor: the smallest floor any
// claimer published in the current or the previous epoch (WithFloorEpoch,
// on the server clock), floor itself included, so at most floor when floor
// > 0; 0 when none was published. A floor of 0 (nothing known) publishes
// nothing and only reads.
//
// Why: Lease.Floor is safe when each leg of every claimer's round trip is
// at least half the floor a settle passes; claimers at different distances
// from the receiver break that when the far one settles with its own,
// longer floor (its sends count from settle − its floor while they arrived
// earlier, and a near claimer's next send comes too early). Settling with
// min(own floor, the store's floor) makes every claimer assume the nearest
// one's legs. Call it about once a second from each claimer (one round
// trip: one script); a claimer that stops calling (it died) stops counting
// between one and two epochs after its last call, when its epoch's set
// expires. Keys: {T}:s:floor:<epoch> (one sorted set per epoch, claimer ->
// floor, expiring at the end of the next epoch; at most two live).
//
// Errors: ErrInvalid (wrapped) for an empty or too long claimer (over
// MaxClaimerBytes) or a floor outside 0..MaxFloor; a Valkey error.
func (s *Store) ShareFloor(ctx context.Context, claimer string, floor time.Duration) (time.Duration, error) {
	if claimer == "" || len(claimer) > MaxClaimerBytes {
		return 0, fmt.Errorf("%w: claimer %q: want 1-%d bytes", ErrInvalid, claimer, MaxClaimerBytes)
	}
	if floor < 0 || floor > MaxFloor {
		return 0, fmt.Errorf("%w: floor %v: want 0..%v", ErrInvalid, floor, MaxFloor)
	}
	args := []string{claimer, ms(floor), strconv.FormatInt(s.opt.floorEpoch.Milliseconds(), 10)}
	v, err := s.scripts.floor.Exec(ctx, s.c, []string{s.keys.floor()}, args).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("lanes: share floor: %w", err)
	}
	return time.Duration(v) * time.Millisecond, nil
}
