// This file holds the calibration a graph is saved with (format version
// 4, see encode.go), so that a graph loaded with the same recall target
// answers under it from its first query without calibrating again.

package hnsw

import (
	"encoding/binary"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/cairndb/cairn/vector"
)

// maxSavedReason bounds the length of a saved Calibration.Reason; the
// reasons the calibration writes are a few dozen bytes.
const maxSavedReason = 1 << 10

// savedCalibration is the recall-target state a graph carries in its
// encoding: the index's latest Calibration and the deletes counted since
// it, all that noteChange and recalibrateOnQueries need to decide when to
// calibrate again (the reservoir of recent queries is not saved: a loaded
// index restarts it, as one that has just calibrated does). It alone
// encodes, decodes and checks that state, and decides whether it applies
// to the index that loads it.
type savedCalibration struct {
	cal     Calibration
	deletes int
}

// savedSources numbers the calibration sources in the encoding; 0 is none.
var savedSources = [...]CalibrationSource{1: SourceQueries, 2: SourceHeldOut, 3: SourceCaller, 4: SourceMixed}

// saved returns the calibration and deletes that WriteTo saves, and false
// if the index has no recall target or no calibration yet (WriteTo then
// writes a format without one). One snapshot: the version and the body
// written must agree.
func (cal *calibrator) saved(o *Options) (*savedCalibration, bool) {
	if o.TargetRecall == 0 {
		return nil, false
	}
	cal.mu.Lock()
	defer cal.mu.Unlock()
	c := cal.cur.Load()
	if c == nil {
		return nil, false
	}
	return &savedCalibration{cal: *c, deletes: max(0, cal.deletes)}, true
}

// restore installs s, or no calibration if s is nil, as the calibration
// of the graph ReadFrom has just installed (measured on this graph, or
// none: the one before was measured on the graph replaced). With s, the
// reservoir of recent queries restarts at size, the size a calibration
// would give it now, so that real queries replace s by the usual rule
// ([Calibration.RecalibratesOn]); without, the calibration the load
// starts restarts it.
func (cal *calibrator) restore(s *savedCalibration, size int) {
	cal.mu.Lock()
	defer cal.mu.Unlock()
	if s == nil {
		cal.cur.Store(nil)
		cal.deletes = 0
		return
	}
	c := s.cal
	cal.cur.Store(&c)
	cal.deletes = s.deletes
	cal.queries.Restart(size)
}

// appendTo appends the encoding of s (see encode.go).
func (s *savedCalibration) appendTo(b []byte) []byte {
	le := binary.LittleEndian
	c := &s.cal
	b = le.AppendUint64(b, math.Float64bits(c.Target))
	b = le.AppendUint32(b, uint32(c.K))
	b = le.AppendUint32(b, uint32(c.Ef))
	var exact byte
	if c.Exact {
		exact = 1
	}
	b = append(b, exact)
	b = le.AppendUint64(b, math.Float64bits(c.Recall))
	b = le.AppendUint64(b, math.Float64bits(c.StdErr))
	b = le.AppendUint32(b, uint32(c.Queries))
	b = le.AppendUint32(b, uint32(c.RealQueries))
	var src byte
	for i, v := range savedSources {
		if v != "" && v == c.Source {
			src = byte(i)
		}
	}
	b = append(b, src)
	b = le.AppendUint32(b, uint32(c.Len))
	b = le.AppendUint64(b, uint64(max(0, c.Took)))
	b = le.AppendUint32(b, uint32(min(uint64(s.deletes), math.MaxUint32)))
	reason := c.Reason
	if len(reason) > maxSavedReason {
		reason = reason[:maxSavedReason]
	}
	b = le.AppendUint32(b, uint32(len(reason)))
	return append(b, reason...)
}

// decodeCalibration reads the calibration of a version-4 body, checking
// each field against what a calibration can hold: a damaged one gives an
// error wrapping [vector.ErrCorrupt].
func decodeCalibration(d *decoder) (*savedCalibration, error) {
	var s savedCalibration
	c := &s.cal
	c.Target = math.Float64frombits(d.u64())
	c.K = int(d.u32())
	c.Ef = int(d.u32())
	exact := d.u8()
	c.Exact = exact == 1
	c.Recall = math.Float64frombits(d.u64())
	c.StdErr = math.Float64frombits(d.u64())
	c.Queries = int(d.u32())
	c.RealQueries = int(d.u32())
	src := int(d.u8())
	c.Len = int(d.u32())
	took := d.u64()
	s.deletes = int(d.u32())
	n := d.u32()
	if d.err != nil {
		return nil, fmt.Errorf("%w: calibration: %v", vector.ErrCorrupt, d.err)
	}
	bad := func(what string, v any) error {
		return fmt.Errorf("%w: calibration: %s %v", vector.ErrCorrupt, what, v)
	}
	switch {
	case !(c.Target > 0 && c.Target <= 1):
		return nil, bad("target", c.Target)
	case c.K < 1 || c.K > MaxEf:
		return nil, bad("k", c.K)
	case exact > 1:
		return nil, bad("exact flag", exact)
	case c.Exact && c.Ef != 0, !c.Exact && (c.Ef < c.K || c.Ef > MaxEf):
		return nil, bad("ef", fmt.Sprintf("%d (exact %v, k %d)", c.Ef, c.Exact, c.K))
	case !(c.Recall >= 0 && c.Recall <= 1):
		return nil, bad("recall", c.Recall)
	case !(c.StdErr >= 0 && c.StdErr <= 1):
		return nil, bad("standard error", c.StdErr)
	case c.RealQueries > c.Queries:
		return nil, bad("real queries", fmt.Sprintf("%d of %d", c.RealQueries, c.Queries))
	case src >= len(savedSources) || savedSources[src] == "":
		return nil, bad("source", src)
	case took > math.MaxInt64:
		return nil, bad("duration", took)
	case n > maxSavedReason || uint64(n) > uint64(len(d.b)):
		return nil, bad("reason of", fmt.Sprintf("%d bytes", n))
	}
	c.Source, c.Took = savedSources[src], time.Duration(took)
	reason := d.take(int(n))
	if !utf8.Valid(reason) {
		return nil, bad("reason", fmt.Sprintf("%q", reason))
	}
	c.Reason = string(reason)
	return &s, nil
}

// applies reports whether s may stand as the calibration of the graph it
// was saved with, loaded into an index whose options (the graph's, from
// the stream, with the loading index's target) are o: it must have been
// measured for the same recall@K, and on the same walk. The graph's shape
// and quantization come from the stream the calibration was saved in, so
// they are the ones it measured; the walk differs only when the load
// trained codes (retrained: the saved quantizer was stale or missing, or
// the graph was saved without quantization and the loading index asks
// for it), and their estimates with it.
func (s *savedCalibration) applies(o *Options, retrained bool) bool {
	return s.cal.Target == o.TargetRecall && s.cal.K == o.TargetK && !retrained
}
