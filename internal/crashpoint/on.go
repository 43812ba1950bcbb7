//go:build cairn_crashpoint && unix

package crashpoint

import (
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
)

// Enabled reports whether this build honours [Env].
const Enabled = true

var (
	armed string
	after int64
	hits  atomic.Int64
)

func init() {
	name, n, ok := strings.Cut(os.Getenv(Env), ":")
	if !ok {
		return
	}
	if k, err := strconv.ParseInt(n, 10, 64); err == nil && k > 0 {
		armed, after = name, k
	}
}

// Hit counts a pass through the point name and kills the process with
// SIGKILL if it is the armed point and this is its armed count.
func Hit(name string) {
	if name == armed && hits.Add(1) == after {
		syscall.Kill(os.Getpid(), syscall.SIGKILL)
		select {} // the signal is on its way
	}
}
