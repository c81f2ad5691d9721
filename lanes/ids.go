package lanes

import (
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// JobIDPrefix brands every job id.
const JobIDPrefix = "job_"

// JobIDLen is the length of a job id in bytes: the 4-byte prefix and a
// 26-character ULID (Crockford base32).
const JobIDLen = len(JobIDPrefix) + ulid.EncodedSize

// JobID is a branded, time-ordered job id: "job_" followed by a 26-character
// ULID. Byte order is mint order (within one process strictly; across
// processes, to the precision of their clocks), so a lane written at score 0
// is FIFO by id with no second index.
type JobID string

// ParseJobID checks s and returns it as a JobID. It returns an error wrapping
// ErrInvalid when s is not "job_" + a valid ULID.
func ParseJobID(s string) (JobID, error) {
	id := JobID(s)
	if err := id.Validate(); err != nil {
		return "", err
	}
	return id, nil
}

// Validate returns an error wrapping ErrInvalid when id is malformed.
func (id JobID) Validate() error {
	s := string(id)
	if len(s) != JobIDLen || !strings.HasPrefix(s, JobIDPrefix) {
		return fmt.Errorf("%w: job id %q: want %q + 26-character ULID", ErrInvalid, s, JobIDPrefix)
	}
	u, err := ulid.ParseStrict(s[len(JobIDPrefix):])
	if err != nil {
		return fmt.Errorf("%w: job id %q: %v", ErrInvalid, s, err)
	}
	// ParseStrict accepts lower case; only the canonical (upper-case) form
	// sorts in mint order and names one job, so a lower-case spelling of an
	// existing id cannot become a second copy of it.
	if u.String() != s[len(JobIDPrefix):] {
		return fmt.Errorf("%w: job id %q: want upper-case Crockford base32", ErrInvalid, s)
	}
	return nil
}

// Time returns the mint time encoded in the id (millisecond precision), or
// the zero time for a malformed id.
func (id JobID) Time() time.Time {
	if id.Validate() != nil {
		return time.Time{}
	}
	u := ulid.MustParse(string(id)[len(JobIDPrefix):])
	return ulid.Time(u.Time())
}

// Minter mints JobIDs. It is safe for concurrent use. Ids minted by one
// Minter are strictly increasing, even within one millisecond and even if the
// wall clock steps back (the time part then stays at the last value used).
type Minter struct {
	mu      sync.Mutex
	entropy *ulid.MonotonicEntropy
	last    uint64
	now     func() time.Time
}

// NewMinter returns a Minter using crypto/rand monotonic entropy.
func NewMinter() *Minter {
	return &Minter{entropy: ulid.Monotonic(rand.Reader, 0), now: time.Now}
}

// New mints the next id.
func (m *Minter) New() JobID {
	m.mu.Lock()
	defer m.mu.Unlock()
	ms := ulid.Timestamp(m.now())
	if ms < m.last {
		ms = m.last
	}
	u, err := ulid.New(ms, m.entropy)
	if err != nil {
		// The entropy overflowed within this millisecond (after 2^80 ids):
		// move to the next millisecond.
		ms++
		u = ulid.MustNew(ms, m.entropy)
	}
	m.last = ms
	return JobID(JobIDPrefix + u.String())
}
