package route

import "time"

// Backoff is how long after a failed measurement the next may start; each
// failure in a row doubles it, up to MaxBackoff.
const (
	Backoff    = 10 * time.Second
	MaxBackoff = 10 * time.Minute
)

// Retry is the back-off after background measurements that failed: the
// next may start at At; Wait is the back-off of the latest failure. The
// zero value is no back-off.
type Retry struct {
	At   time.Time
	Wait time.Duration
}

// Fail starts the back-off of a failure at now: Backoff after a success,
// twice the last one after a failure, at most MaxBackoff.
func (r *Retry) Fail(now time.Time) {
	r.Wait = min(max(2*r.Wait, Backoff), MaxBackoff)
	r.At = now.Add(r.Wait)
}

// Ready reports whether a measurement may start at now: no back-off is
// running.
func (r Retry) Ready(now time.Time) bool { return !now.Before(r.At) }
