// Package pace makes background work rest as long as it works, so that it
// takes about half of one core from the queries and writes beside it.
package pace

import "time"

// Pacer rests as long as the work has gone on since its last rest, in
// slices of a few milliseconds (a sleep much shorter than that
// oversleeps). The zero value never rests.
type Pacer struct {
	on    bool
	since time.Time
	now   func() time.Time
	sleep func(time.Duration)
}

// New returns a Pacer that rests if on, counting work from now.
func New(on bool) *Pacer { return newPacer(on, time.Now, time.Sleep) }

// newPacer is New on the clock now and sleep, which tests replace.
func newPacer(on bool, now func() time.Time, sleep func(time.Duration)) *Pacer {
	return &Pacer{on: on, since: now(), now: now, sleep: sleep}
}

// Rest sleeps for the time worked since the last rest, once that is at
// least 2 ms.
func (p *Pacer) Rest() {
	if p == nil || !p.on {
		return
	}
	if worked := p.now().Sub(p.since); worked >= 2*time.Millisecond {
		p.sleep(worked)
		p.since = p.now()
	}
}

// Progress returns a progress report (done of total) that reports to
// next, if not nil, and then rests: a build by one worker that reports
// through it takes about half of one core.
func Progress(next func(done, total int)) func(done, total int) {
	return progress(next, New(true))
}

// progress is Progress resting with p.
func progress(next func(done, total int), p *Pacer) func(done, total int) {
	return func(done, total int) {
		if next != nil {
			next(done, total)
		}
		p.Rest()
	}
}
