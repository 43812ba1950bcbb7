package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeMCPConfig runs the MCP client configuration of the README:
// its command line, with the file and the embedder moved to the test's,
// must start the server (which stops at the end of its empty stdin).
func TestReadmeMCPConfig(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "claude_desktop_config.json")
	if !ok {
		t.Fatal("README.md has no MCP client configuration")
	}
	_, block, ok := strings.Cut(after, "```json\n")
	if !ok {
		t.Fatal("README.md's MCP configuration has no JSON block")
	}
	block, _, _ = strings.Cut(block, "```")
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(block), &cfg); err != nil {
		t.Fatalf("README's MCP configuration: %v", err)
	}
	srv := cfg.MCPServers["memory"]
	if srv.Command != "cairn" || len(srv.Args) == 0 || srv.Args[0] != "mcp" {
		t.Fatalf("README's MCP configuration: %+v", cfg)
	}
	emb := newEmbedServer(t)
	args := append([]string(nil), srv.Args...)
	for i := 1; i+1 < len(args); i++ {
		switch args[i] {
		case "-db":
			args[i+1] = filepath.Join(t.TempDir(), "memory.db")
		case "-embed-url":
			args[i+1] = emb.url()
		}
	}
	if r := runCmd(t, "", args...); r.code != 0 {
		t.Fatalf("cairn %s: %+v", strings.Join(args, " "), r)
	}
}
