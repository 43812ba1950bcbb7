// mcpconn.go holds the stdio transport of "cairn mcp": newline-delimited
// JSON-RPC in which one bad line costs one error reply, not the session.

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxMessage bounds one message on stdin, as the SDK's own stdio transport
// does (mcp.DefaultMaxLineLength).
const maxMessage = mcp.DefaultMaxLineLength

// lineTransport is an mcp.Transport over newline-delimited JSON-RPC:
// each line of r is one message, each message written to w is one line.
//
// Unlike the SDK's stdio transport, which ends the session at the first
// line it cannot decode, it answers a bad line as JSON-RPC 2.0 says and
// reads on: a line that is not JSON (or holds more than one value, or is
// cut short) gets a -32700 Parse error; JSON that is not one JSON-RPC
// message (an array, a string, an object without "jsonrpc":"2.0" or a
// method) gets a -32600 Invalid Request. Batches (arrays) are refused:
// MCP dropped them in its 2025-06-18 revision. A request whose id the SDK
// would not answer as sent (null, a fraction, an integer past 2^53), or
// that of a call not yet answered, gets a -32600 too, and does not run.
// The error reply carries the request's id when the line has a usable
// one, else null. A line still without its newline is waited for; blank
// lines are skipped.
//
// At the end of r, or once stop closes (an interrupt), the requests
// already read are answered before the session ends, so that a script
// piped into the server gets every reply, and a client every reply to a
// call that ran.
type lineTransport struct {
	r       io.Reader
	w       io.Writer
	log     io.Writer       // bad lines are reported here as well
	maxLine int             // longest line read; 0 means maxMessage
	stop    <-chan struct{} // ends the session as the end of r does; nil for never
}

func (t *lineTransport) Connect(context.Context) (mcp.Connection, error) {
	limit := t.maxLine
	if limit <= 0 {
		limit = maxMessage
	}
	c := &lineConn{
		w:        t.w,
		log:      t.log,
		incoming: make(chan jsonrpc.Message),
		done:     make(chan struct{}),
		pending:  make(map[jsonrpc.ID]struct{}),
		stop:     t.stop,
	}
	go c.readLoop(t.r, limit)
	return c, nil
}

// lineConn is the connection of a lineTransport.
type lineConn struct {
	wmu sync.Mutex // serialises writes to w
	w   io.Writer
	log io.Writer

	incoming chan jsonrpc.Message // closed at the end of input, after readErr is set
	readErr  error

	mu      sync.Mutex
	pending map[jsonrpc.ID]struct{} // calls decoded and not yet answered
	drained chan struct{}           // closed when pending empties, if waited for

	closeOnce sync.Once
	done      chan struct{}   // closed by Close
	stop      <-chan struct{} // lineTransport.stop
}

func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	var end error
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, io.EOF
	case <-c.stop:
		end = io.EOF
	case msg, ok := <-c.incoming:
		if ok {
			return msg, nil
		}
		end = c.readErr
	}
	// The input ended, or the session was stopped: let the calls in
	// flight answer first.
	c.mu.Lock()
	if len(c.pending) > 0 && c.drained == nil {
		c.drained = make(chan struct{})
	}
	drained := c.drained
	c.mu.Unlock()
	if drained != nil {
		select {
		case <-drained:
		case <-c.done:
		case <-ctx.Done():
		}
	}
	return nil, end
}

func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("encoding a message: %w", err)
	}
	if err := c.writeLine(data); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		c.mu.Lock()
		delete(c.pending, resp.ID)
		if len(c.pending) == 0 && c.drained != nil {
			close(c.drained)
			c.drained = nil
		}
		c.mu.Unlock()
	}
	return nil
}

func (c *lineConn) writeLine(data []byte) error {
	select {
	case <-c.done:
		return mcp.ErrConnectionClosed
	default:
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err := c.w.Write(append(data, '\n'))
	return err
}

// Close ends the connection. It does not close the reader (stdin): a read
// blocked in it is left to end with the process, as in the SDK.
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() { close(c.done) })
	return nil
}

// readLoop reads lines until the end of r, passing on the messages and
// answering the bad lines.
func (c *lineConn) readLoop(r io.Reader, limit int) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		line, long, err := readLine(br, limit)
		if msg := c.decode(n, line, long, limit); msg != nil {
			select {
			case c.incoming <- msg:
			case <-c.done:
				return
			case <-c.stop:
				// Read no longer takes messages: a call read after (or
				// as) the session was stopped is answered as not run,
				// or Read would wait for its reply for ever.
				c.notRun(msg)
			}
		}
		if err != nil {
			c.readErr = err
			close(c.incoming)
			return
		}
	}
}

// notRun answers msg, if it is a call, with an error saying it was not
// run: the server is stopping.
func (c *lineConn) notRun(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok || !req.IsCall() {
		return
	}
	c.Write(context.Background(), &jsonrpc.Response{ID: req.ID,
		Error: &jsonrpc.Error{Code: codeStopping, Message: "the server is stopping (interrupted): the call was not run"}})
}

// codeStopping is the JSON-RPC error code of a call refused because the
// server is stopping: one of those JSON-RPC leaves to servers.
const codeStopping = -32001

// readLine returns the next line of br without its line end. If the line
// is longer than limit, it is read to its end and dropped, and long is
// set. At the end of the input, err is io.EOF and line is what followed
// the last newline.
func readLine(br *bufio.Reader, limit int) (line []byte, long bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !long {
			if len(line)+len(frag) > limit+2 { // +2 for "\r\n"
				long, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		return line, long, err
	}
}

// decode returns the message on line number n, or nil after answering a
// bad line (and for a blank one).
func (c *lineConn) decode(n int, line []byte, long bool, limit int) jsonrpc.Message {
	line = bytes.TrimSpace(line)
	switch {
	case long:
		c.refuse(n, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: a message is at most %d bytes", limit))
		return nil
	case len(line) == 0:
		return nil
	}
	if !json.Valid(line) || !utf8.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		reason := "not JSON"
		switch {
		case err != nil:
			reason = err.Error()
		case !utf8.Valid(line):
			// Decoding would make each bad byte U+FFFD: two names that
			// differ only there would be one.
			reason = "not UTF-8"
		}
		c.refuse(n, nil, jsonrpc.CodeParseError, "Parse error: "+reason+" (one JSON-RPC message per line)")
		return nil
	}
	switch line[0] {
	case '{':
	case '[':
		c.refuse(n, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: batches (arrays) are not supported; send one message per line")
		return nil
	default:
		c.refuse(n, nil, jsonrpc.CodeInvalidRequest, "Invalid Request: a message is a JSON object")
		return nil
	}
	// The members as the SDK reads them: by their exact names (a
	// struct would match "Id" or "ID" too), the last of two alike, a
	// method present even if null.
	var env map[string]json.RawMessage
	json.Unmarshal(line, &env)
	rawID, hasID := env["id"]
	_, hasMethod := env["method"]
	var id json.RawMessage // the id to answer with: nil for none usable
	if len(rawID) > 0 && (rawID[0] == '"' || rawID[0] == '-' || rawID[0] >= '0' && rawID[0] <= '9') {
		id = rawID
	}
	if hasMethod && hasID {
		// The SDK takes a null id for none (and answers nothing), and
		// rounds a number to an integer of 64 bits (answering another
		// id than the one asked with).
		if problem := badID(rawID); problem != "" {
			c.refuse(n, id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+problem)
			return nil
		}
	}
	msg, err := jsonrpc.DecodeMessage(line)
	if err != nil {
		c.refuse(n, id, jsonrpc.CodeInvalidRequest, "Invalid Request: "+describeDecode(err))
		return nil
	}
	if req, ok := msg.(*jsonrpc.Request); ok && req.IsCall() {
		// The SDK drops a call whose id another call in flight has.
		c.mu.Lock()
		_, busy := c.pending[req.ID]
		if !busy {
			c.pending[req.ID] = struct{}{}
		}
		c.mu.Unlock()
		if busy {
			c.refuse(n, id, jsonrpc.CodeInvalidRequest, "Invalid Request: the id "+string(id)+" is that of a call not yet answered")
			return nil
		}
	}
	return msg
}

// badID says what is wrong with raw, the id of a request, or "" if
// nothing is: MCP asks for a string or an integer, and the SDK reads a
// number as a float64, so that only an integer of at most 2^53 comes
// back in the reply as it was sent.
func badID(raw json.RawMessage) string {
	switch raw[0] {
	case '"':
		return ""
	case 'n':
		return "the id is null: a request's id is a string or an integer (a notification has none)"
	}
	const exact = 1 << 53
	if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil && -exact <= n && n <= exact {
		return ""
	}
	return "the id " + string(raw) + " is not a string or an integer in digits of at most 2^53"
}

// describeDecode words the SDK's reason for refusing a message.
func describeDecode(err error) string {
	var we *jsonrpc.Error
	if errors.As(err, &we) && we.Code == jsonrpc.CodeInvalidRequest {
		return `neither a request (with "method") nor a response (with "id")`
	}
	return err.Error()
}

// refuse answers line number n with a JSON-RPC error (id is null if nil)
// and notes it in the log.
func (c *lineConn) refuse(n int, id json.RawMessage, code int, message string) {
	if id == nil {
		id = json.RawMessage("null")
	}
	if c.log != nil {
		fmt.Fprintf(c.log, "cairn mcp: input line %d: %s\n", n, message)
	}
	type wireError struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   wireError       `json:"error"`
	}{"2.0", id, wireError{code, message}})
	if err != nil {
		return // cannot happen: the id is valid JSON
	}
	c.writeLine(data) // a failed write ends the session at the next Write
}
