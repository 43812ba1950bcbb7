package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/cairndb/cairn"
)

// gatedEmbedder is bowEmbedder whose embedding of a text holding "slow"
// waits: it says so on entered, then waits for release to close.
func gatedEmbedder() (emb cairn.Embedder, entered chan struct{}, release chan struct{}) {
	entered, release = make(chan struct{}, 8), make(chan struct{})
	return cairn.EmbedderFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i, s := range texts {
			if strings.Contains(s, "slow") {
				entered <- struct{}{}
				<-release
			}
			out[i] = bagOfWords(s)
		}
		return out, nil
	}), entered, release
}

// TestMCPWritesOfOneMemory runs tool calls that write one memory while
// another call on it waits for its embedding: none may undo another's
// answered change (a lost update, a deleted memory back, a stored one
// replaced).
func TestMCPWritesOfOneMemory(t *testing.T) {
	emb, entered, release := gatedEmbedder()
	cs := connect(t, newTestMemory(t, emb))
	pending := func(name string, args map[string]any) chan string {
		done := make(chan string, 1)
		go func() { done <- call(t, cs, name, args, nil) }()
		<-entered
		return done
	}
	call(t, cs, "memory_store", map[string]any{"id": "m", "text": "lives in Lisbon", "metadata": map[string]any{"v": 1}}, nil)

	// A text update waits for its embedding while a metadata update is
	// answered.
	text := pending("memory_update", map[string]any{"id": "m", "text": "lives in Porto slow"})
	if e := call(t, cs, "memory_update", map[string]any{"id": "m", "metadata": map[string]any{"v": 2}}, nil); e != "" {
		t.Fatalf("metadata update: %s", e)
	}
	close(release)
	if e := <-text; e != "" {
		t.Fatalf("text update: %s", e)
	}
	var got memoriesOut
	call(t, cs, "memory_get", map[string]any{"ids": []string{"m"}}, &got)
	if m := got.Memories; len(m) != 1 || m[0].Text != "lives in Porto slow" || fmt.Sprint(m[0].Metadata["v"]) != "2" {
		t.Errorf("after a text and a metadata update: %+v, want both changes", m)
	}
}

// TestMCPUpdateOfDeletedMemory deletes a memory while an update of it
// waits for its embedding: the update must fail as for an unknown id,
// and the memory stay deleted.
func TestMCPUpdateOfDeletedMemory(t *testing.T) {
	emb, entered, release := gatedEmbedder()
	cs := connect(t, newTestMemory(t, emb))
	call(t, cs, "memory_store", map[string]any{"id": "m", "text": "a hint to forget"}, nil)
	done := make(chan string, 1)
	go func() {
		done <- call(t, cs, "memory_update", map[string]any{"id": "m", "text": "a new hint slow"}, nil)
	}()
	<-entered
	if e := call(t, cs, "memory_delete", map[string]any{"ids": []string{"m"}}, nil); e != "" {
		t.Fatalf("delete: %s", e)
	}
	close(release)
	if e := <-done; !strings.Contains(e, `no memory has the id "m"`) {
		t.Errorf("update of a memory deleted meanwhile: %q, want no memory has the id", e)
	}
	var list listOut
	if call(t, cs, "memory_list", nil, &list); len(list.Memories) != 0 {
		t.Errorf("after the delete: %+v", list.Memories)
	}
}

// TestMCPMergingStoresOfOneID stores one id twice at once with
// merge_similar: one store must fail as for an id that exists, and the
// memory be the other's.
func TestMCPMergingStoresOfOneID(t *testing.T) {
	emb, entered, release := gatedEmbedder()
	cs := connect(t, newTestMemory(t, emb))
	call(t, cs, "memory_store", map[string]any{"id": "seed", "text": "unrelated"}, nil)
	done := make(chan string, 1)
	go func() {
		done <- call(t, cs, "memory_store", map[string]any{"id": "x", "text": "allergic to peanuts slow", "merge_similar": 0.99}, nil)
	}()
	<-entered
	if e := call(t, cs, "memory_store", map[string]any{"id": "x", "text": "birthday in May", "merge_similar": 0.99}, nil); e != "" {
		t.Fatalf("second store: %s", e)
	}
	close(release)
	if e := <-done; !strings.Contains(e, `a memory with id "x" exists`) {
		t.Errorf("the store that embedded last: %q, want the id exists", e)
	}
	var got memoriesOut
	call(t, cs, "memory_get", map[string]any{"ids": []string{"x"}}, &got)
	if m := got.Memories; len(m) != 1 || m[0].Text != "birthday in May" {
		t.Errorf("memory x: %+v, want the answered store's", m)
	}
}

// TestExplainCancelled checks that a call the client cancelled is not
// blamed on the embedder, whose error carries the cancellation.
func TestExplainCancelled(t *testing.T) {
	err := fmt.Errorf("cairn: query: embedding: %w", &embedError{fmt.Errorf("openai: embeddings: %w", context.Canceled)})
	if got := explain(err).Error(); !strings.HasPrefix(got, "cancelled") {
		t.Errorf("explain(a cancelled embedding) = %q, want it to say cancelled", got)
	}
	err = fmt.Errorf("cairn: query: embedding: %w", &embedError{errors.New("connection refused")})
	if got := explain(err).Error(); !strings.Contains(got, "embedding service failed") {
		t.Errorf("explain(a failed embedding) = %q", got)
	}
}

// TestMCPNamespaceFlag refuses a -namespace that no call could name: not
// UTF-8, or longer than a call's namespace may be.
func TestMCPNamespaceFlag(t *testing.T) {
	for _, ns := range []string{"n\xffs", strings.Repeat("n", maxNamespace+1)} {
		code, _, log := serveScript(t, initLines, "-namespace", ns)
		if code != exitUsage || !strings.Contains(log, "-namespace") {
			t.Errorf("-namespace %q: exit %d, log %q; want a usage error", ns, code, log)
		}
	}
}
