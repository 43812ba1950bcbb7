package route

import (
	"testing"
	"time"
)

// TestRetry: each failure in a row doubles the back-off, from Backoff up
// to MaxBackoff, and a measurement may start again once it is over.
func TestRetry(t *testing.T) {
	now := time.Unix(1e9, 0)
	var r Retry
	if !r.Ready(now) {
		t.Fatalf("the zero Retry holds back a measurement")
	}
	for want := Backoff; want <= 2*MaxBackoff; want *= 2 {
		r.Fail(now)
		if w := min(want, MaxBackoff); r.Wait != w || !r.At.Equal(now.Add(w)) {
			t.Fatalf("back-off %+v, want %v after %v", r, w, now)
		}
		if r.Ready(now.Add(r.Wait-1)) || !r.Ready(now.Add(r.Wait)) {
			t.Fatalf("back-off %+v: ready before %v, or not at it", r, r.At)
		}
	}
}
