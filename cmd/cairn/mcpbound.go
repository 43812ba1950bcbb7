// mcpbound.go holds the middleware of "cairn mcp" that shapes what it sends
// back: error texts bounded, results with their numbers exact.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxErrorText bounds the text of an error reply, in bytes, less the
// note of what was left out.
const maxErrorText = 1024

// boundErrors is a receiving middleware that shortens the text of a
// failed tool call, and the message of a JSON-RPC error, to about
// maxErrorText bytes, leaving out the middle: the SDK's schema errors
// quote the argument they refuse whole, so that a text of 12 MB over
// -max-text came back in a reply of 12 MB. The start says what failed
// and the end by how much.
func boundErrors(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && r.IsError {
			for _, c := range r.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					tc.Text = shorten(tc.Text)
				}
			}
		}
		var we *jsonrpc.Error
		switch {
		case err == nil:
		case errors.As(err, &we):
			if len(we.Message) > maxErrorText {
				short := *we
				short.Message = shorten(we.Message)
				err = &short
			}
		case len(err.Error()) > maxErrorText:
			err = errors.New(shorten(err.Error()))
		}
		return res, err
	}
}

// exactResults is a receiving middleware that sends a tool's structured
// content as the JSON of its text, where exactOutput wrote Out exactly:
// the SDK's own structured content went through float64 numbers.
func exactResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if r, ok := res.(*mcp.CallToolResult); ok && r != nil && !r.IsError && r.StructuredContent != nil && len(r.Content) == 1 {
			if tc, ok := r.Content[0].(*mcp.TextContent); ok && strings.HasPrefix(tc.Text, "{") && json.Valid([]byte(tc.Text)) {
				r.StructuredContent = json.RawMessage(tc.Text)
			}
		}
		return res, err
	}
}

// shorten returns s if it is at most maxErrorText bytes long, else its
// first and last bytes around a note of how many were left out, cut at
// character boundaries.
func shorten(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	head, tail := maxErrorText*3/4, len(s)-maxErrorText/4
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s…[%d bytes left out]…%s", s[:head], tail-head, s[tail:])
}
