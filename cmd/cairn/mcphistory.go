package main

// This file holds the MCP tools over a memory's history: memory_history
// and memory_restore, which rehearses unless confirmed.

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// defaultHistory is how long a collection that cairn mcp creates keeps
// the versions of its memories (-history).
const defaultHistory = 30 * 24 * time.Hour

// maxListed bounds the ids a restore lists of each kind.
const maxListed = 100

type (
	historyIn struct {
		ID        string `json:"id" jsonschema:"the id of the memory"`
		Namespace string `json:"namespace,omitempty" jsonschema:"the namespace the memory is in; default: the server's"`
	}
	versionOut struct {
		Text     string `json:"text,omitempty"`
		Metadata outMap `json:"metadata,omitempty"`
		Deleted  bool   `json:"deleted,omitempty" jsonschema:"true if the memory did not exist then (before it was stored, or after it was deleted)"`
		From     string `json:"from,omitempty" jsonschema:"when this version was written (RFC 3339); absent if before the kept history"`
		Until    string `json:"until,omitempty" jsonschema:"when it was changed or deleted (RFC 3339); absent for the current version"`
	}
	historyOut struct {
		Versions []versionOut `json:"versions" jsonschema:"the memory's versions, newest first"`
		// SizeLimited is set when the versions were cut short by pageBytes.
		SizeLimited bool `json:"size_limited,omitempty" jsonschema:"true if older versions were left out because the answer reached 256 KiB"`
	}
	restoreIn struct {
		To        string   `json:"to" jsonschema:"the time to go back to, RFC 3339 (e.g. 2026-12-01T09:00:00Z): every memory changed since is put back as it was then"`
		IDs       []string `json:"ids,omitempty" jsonschema:"restore only these memories; default: all"`
		Confirm   bool     `json:"confirm,omitempty" jsonschema:"false (the default): only report what would change; true: make the change"`
		Namespace string   `json:"namespace,omitempty" jsonschema:"the namespace to restore; default: the server's"`
	}
	restoreOut struct {
		Applied   bool     `json:"applied" jsonschema:"whether the memories were changed (confirm was true)"`
		Restored  []string `json:"restored" jsonschema:"ids put back as they were (at most 100 listed)"`
		Deleted   []string `json:"deleted" jsonschema:"ids deleted, which did not exist then (at most 100 listed)"`
		NRestored int      `json:"restored_count"`
		NDeleted  int      `json:"deleted_count"`
		UndoTo    string   `json:"undo_to,omitempty" jsonschema:"after a change: call memory_restore with this time as to to undo it"`
	}
)

// addHistoryTools adds memory_history and memory_restore to s.
func (m *memory) addHistoryTools(s *mcp.Server, in map[string]*jsonschema.Schema) {
	mcp.AddTool(s, &mcp.Tool{
		Name:        "memory_history",
		InputSchema: in["memory_history"],
		Annotations: &mcp.ToolAnnotations{Title: "A memory's history", ReadOnlyHint: true, OpenWorldHint: new(false)},
		Description: "List the versions of a memory, newest first: what it said and when, including when it was deleted. " +
			"Use it to see what changed, before memory_restore.",
	}, bounded(m.callTimeout, exactOutput(m.historyTool)))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "memory_restore",
		InputSchema: in["memory_restore"],
		Annotations: &mcp.ToolAnnotations{Title: "Restore memories", DestructiveHint: new(true), OpenWorldHint: new(false)},
		Description: "Put memories back as they were at a past time: those changed since are rewritten as they were, those stored since are deleted. " +
			"Without confirm: true it only reports what it would change; do that first and check. A restore can itself be undone (undo_to).",
	}, bounded(m.callTimeout, exactOutput(m.restoreTool)))
}

// historyErr explains the errors of the history calls; to is the time
// asked for, if any.
func historyErr(err error, to string) error {
	switch {
	case errors.Is(err, cairn.ErrNoHistory):
		return toolError("this memory keeps no history: it was made without one (cairn mcp -history keeps one in collections it creates)")
	case errors.Is(err, cairn.ErrBeforeHistory):
		return toolError("the kept history does not reach back to %s: it begins later, when the memory was made or where older versions were let go", to)
	}
	return explain(err)
}

func (m *memory) historyTool(ctx context.Context, _ *mcp.CallToolRequest, in historyIn) (*mcp.CallToolResult, historyOut, error) {
	out := historyOut{Versions: []versionOut{}}
	if in.ID == "" {
		return nil, out, toolError("id is empty")
	}
	c, err := m.space(ctx, in.Namespace)
	if err != nil {
		return nil, out, err
	}
	if c == nil {
		return nil, out, toolError("no memory has the id %q", in.ID)
	}
	vs, err := c.History(ctx, in.ID)
	if errors.Is(err, vector.ErrNotFound) {
		return nil, out, toolError("no memory has had the id %q", in.ID)
	}
	if err != nil {
		return nil, out, historyErr(err, "")
	}
	used := 0
	for _, v := range vs {
		o := versionOut{Deleted: v.Absent, From: stamp(v.From), Until: stamp(v.Until)}
		if !v.Absent {
			o.Text, o.Metadata = v.Item.Text, v.Item.Metadata
		}
		b, _ := json.Marshal(o)
		if len(out.Versions) > 0 && used+len(b) > pageBytes {
			out.SizeLimited = true
			break
		}
		used += len(b)
		out.Versions = append(out.Versions, o)
	}
	return nil, out, nil
}

// stamp is t in RFC 3339, "" for the zero time.
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func (m *memory) restoreTool(ctx context.Context, _ *mcp.CallToolRequest, in restoreIn) (*mcp.CallToolResult, restoreOut, error) {
	out := restoreOut{Restored: []string{}, Deleted: []string{}}
	to, err := time.Parse(time.RFC3339Nano, in.To)
	if err != nil {
		return nil, out, toolError("to is not an RFC 3339 time (like 2026-12-01T09:00:00Z): %q", in.To)
	}
	c, err := m.space(ctx, in.Namespace)
	if err != nil {
		return nil, out, err
	}
	if c == nil {
		return nil, out, nil // nothing stored: nothing to restore
	}
	if in.Confirm {
		defer m.writing(in.Namespace)()
	}
	res, err := c.Restore(ctx, to, &cairn.RestoreOptions{IDs: in.IDs, DryRun: !in.Confirm})
	if err != nil {
		return nil, out, historyErr(err, in.To)
	}
	out.Applied = in.Confirm && !res.Undo.IsZero()
	out.NRestored, out.NDeleted = len(res.Put), len(res.Deleted)
	out.Restored = append(out.Restored, res.Put[:min(len(res.Put), maxListed)]...)
	out.Deleted = append(out.Deleted, res.Deleted[:min(len(res.Deleted), maxListed)]...)
	out.UndoTo = stamp(res.Undo)
	return nil, out, nil
}
