// This file holds the rule for nodes behind on the schema. Each node
// answers from its own copy of the schema, and a node restarted while the
// cluster has no leader serves before that copy has caught up: Raft
// applies the entries after its last snapshot only once a leader confirms
// them, and the node opens a class's index a moment after its schema
// holds the class. Meanwhile it says over gRPC and GraphQL that it does
// not know the class, and over REST that an object of it is not there
// (HTTP 404), which is false. So a node's word that it does not know a
// class sends the call to the next node, and a 404 about an object counts
// only from a node that has just confirmed it has the class's index.

package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/cairndb/cairn/vector"
)

// classUnknown matches a node's word over gRPC that its schema has no
// such class.
var classUnknown = regexp.MustCompile(`could not find class (\S+) in schema`)

// fieldUnknown matches the same word in a GraphQL answer: the schema the
// node built its GraphQL types from has no such class (a field of Get
// or Aggregate).
var fieldUnknown = regexp.MustCompile(`Cannot query field "(\w+)" on type "(?:Get|Aggregate)ObjectsObj"`)

// unknownClass reports whether a GraphQL answer's errors, msg, say that
// the node's schema has no class cls: in GraphQL's words, or in gRPC's
// (which a node's GraphQL passes on from its search).
func unknownClass(msg, cls string) bool {
	for _, re := range []*regexp.Regexp{fieldUnknown, classUnknown} {
		if m := re.FindStringSubmatch(msg); m != nil && m[1] == cls {
			return true
		}
	}
	return false
}

// noGraphQLProvider is the word of a node whose schema has no class at
// all, to any GraphQL query.
const noGraphQLProvider = "no graphql provider present"

// classBehind is the answer to a node's word that it does not know class
// cls (said): the call is worth another attempt, on the next node. The
// leader's schema is asked whether cls is there; if it is not, and no
// node's own schema holds it either (leaderLacks), the error says the
// class is gone (it wraps vector.ErrNotFound too), and a call whose every
// attempt ends so fails with it, wrapped in ErrUnavailable.
func (c *client) classBehind(ctx context.Context, cls string, said error) (retry bool, err error) {
	st, _, err := c.attempt(ctx, c.ring.pick(), http.MethodGet, "/v1/schema/"+url.PathEscape(cls)+"?consistency=true", nil)
	if err != nil || st != http.StatusNotFound {
		return true, said
	}
	if _, err := c.leaderLacks(ctx, cls); errors.Is(err, vector.ErrNotFound) {
		return true, fmt.Errorf("%w: %w", err, said)
	}
	return true, said
}

// leaderLacks is the rule for the leader's word that its schema has no
// class cls. One such answer cannot settle it: a leader elected a moment
// ago has not yet applied the log it holds, and its schema can lack a
// class that exists (TestClusterRejoinReads saw it). So it counts only if
// no node that answers holds cls in its own schema: then the error wraps
// vector.ErrNotFound, and is final. Otherwise the leader is behind, or a
// node has not yet applied the class's deletion: the call is worth
// another attempt.
func (c *client) leaderLacks(ctx context.Context, cls string) (retry bool, err error) {
	if n := c.heldBy(ctx, cls); n >= 0 {
		return true, fmt.Errorf("weaviate: class %s is not in the leader's schema but is in %s's", cls, c.nodes[n])
	}
	return false, fmt.Errorf("%w: class %s", vector.ErrNotFound, cls)
}

// ownSchemaWait bounds how long heldBy waits for a node's answer: a node
// that takes longer is likely cut off, and reads that need the answer
// should not wait out a whole attempt for it.
const ownSchemaWait = 2 * time.Second

// heldBy asks every node at once whether its own schema holds class cls
// and returns the first that says it does; -1 if none that answers
// within ownSchemaWait does.
func (c *client) heldBy(ctx context.Context, cls string) int {
	ctx, cancel := context.WithTimeout(ctx, ownSchemaWait)
	defer cancel()
	holds := make(chan int, len(c.nodes))
	for node := range c.nodes {
		go func() {
			st, _, err := c.attempt(ctx, node, http.MethodGet, "/v1/schema/"+url.PathEscape(cls)+"?consistency=false", nil)
			if err != nil || st != http.StatusOK {
				node = -1
			}
			holds <- node
		}()
	}
	for range c.nodes {
		if n := <-holds; n >= 0 {
			return n
		}
	}
	return -1
}

// shardStatus is a node's word on one of its shards of a class.
type shardStatus struct {
	Status string `json:"status"`
}

func (s shardStatus) loading() bool { return s.Status == "LOADING" }

// confirmedFor is how long a node's confirmation that it has a class's
// index vouches for its 404 answers: less than a node takes to restart
// and answer again (seconds), so that no restart fits in between.
const confirmedFor = time.Second

// classSeen records, per node, when the node last confirmed that it has a
// class's index. It is safe for concurrent use.
type classSeen struct {
	mu sync.Mutex
	at []map[string]time.Time // per node, by class
}

// fresh reports whether node confirmed cls before sent, and less than
// confirmedFor before.
func (s *classSeen) fresh(node int, cls string, sent time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if node >= len(s.at) {
		return false
	}
	at, ok := s.at[node][cls]
	return ok && !sent.Before(at) && sent.Sub(at) < confirmedFor
}

// note records that node confirmed cls at t.
func (s *classSeen) note(node int, cls string, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.at) <= node {
		s.at = append(s.at, map[string]time.Time{})
	}
	s.at[node][cls] = t
}

// serving reports whether node sees every node of the cluster healthy,
// and every shard of cls loaded (/v1/nodes).
func (c *client) serving(ctx context.Context, node int, cls string) bool {
	st, data, err := c.attempt(ctx, node, http.MethodGet, "/v1/nodes?output=verbose", nil)
	var ans nodesAnswer
	return err == nil && st == http.StatusOK && json.Unmarshal(data, &ans) == nil && ans.serving(cls)
}

// notFound decides whether a 404 that node gave, to a request about an
// object of class cls sent at sent, means the object is not there. It
// does if the node had confirmed, shortly before, that it has the
// class's index, its local shards loaded, and that every node of the
// cluster is healthy with its shards of the class loaded. A node's
// schema holds a class a moment before its index is there, and meanwhile
// it answers 404 too; and a read's level counts the replicas that are
// up, so with one down the read asks only the others, and a replica
// that was killed before it wrote down its last writes says they are not
// there (CI saw it: a Get through a restarted node said "not found" just
// before the other restarted replica came back, and found the item once
// it had). Otherwise the node is asked now: if all that holds, the
// request is to be sent to it again (again is set), its 404 to be
// believed then; if the node lacks the index, it is behind or the class
// deleted (classBehind); if a node is down or loading, the call is worth
// another attempt.
func (c *client) notFound(ctx context.Context, node int, cls string, sent time.Time) (again, retry bool, err error) {
	if c.seen.fresh(node, cls, sent) {
		return false, false, nil
	}
	st, data, err := c.attempt(ctx, node, http.MethodGet, "/v1/schema/"+url.PathEscape(cls)+"/shards", nil)
	if err != nil {
		return false, true, err
	}
	// The shards' statuses fail while a node that holds one of them is
	// gone (its name no longer resolves), and for a whole election; the
	// cluster's view (/v1/nodes) does not.
	var shards []shardStatus
	ownLoaded := st == http.StatusOK && json.Unmarshal(data, &shards) == nil && !slices.ContainsFunc(shards, shardStatus.loading)
	if ownLoaded || st != http.StatusOK {
		if c.serving(ctx, node, cls) {
			c.seen.note(node, cls, time.Now())
			return true, false, nil
		}
		if ownLoaded {
			return false, true, fmt.Errorf("weaviate: %s: class %s: a node is down or loading, so a 404 may leave out a replica", c.nodes[node], cls)
		}
	}
	retry, err = c.classBehind(ctx, cls, fmt.Errorf("weaviate: %s: class %s not served yet (HTTP %d: %s)", c.nodes[node], cls, st, errorMessage(data)))
	return false, retry, err
}
