package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/module"
)

// proxyInfo is the JSON of a version's .info file in the module proxy
// protocol (`go help goproxy`).
type proxyInfo struct {
	Version string
	Time    time.Time
}

// writeProxyModule adds version m of a module to the file tree of a module
// proxy rooted at root: <path>/@v/list gets the version on a line of its
// own, and <path>/@v/<version>.info, .mod and .zip are written, with path
// and version case-escaped as the protocol says.
func writeProxyModule(root string, m module.Version, at time.Time, goMod, zipData []byte) error {
	escPath, err := module.EscapePath(m.Path)
	if err != nil {
		return fmt.Errorf("proxy path of %s: %w", m.Path, err)
	}
	escVersion, err := module.EscapeVersion(m.Version)
	if err != nil {
		return fmt.Errorf("proxy version of %s: %w", m, err)
	}
	dir := filepath.Join(root, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("proxy of %s: %w", m, err)
	}
	info, err := json.Marshal(proxyInfo{Version: m.Version, Time: at})
	if err != nil {
		return fmt.Errorf("proxy info of %s: %w", m, err)
	}
	for ext, data := range map[string][]byte{".info": info, ".mod": goMod, ".zip": zipData} {
		if err := os.WriteFile(filepath.Join(dir, escVersion+ext), data, 0o644); err != nil {
			return fmt.Errorf("proxy of %s: %w", m, err)
		}
	}
	list, err := os.OpenFile(filepath.Join(dir, "list"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("proxy list of %s: %w", m.Path, err)
	}
	if _, err := fmt.Fprintln(list, m.Version); err != nil {
		list.Close()
		return fmt.Errorf("proxy list of %s: %w", m.Path, err)
	}
	if err := list.Close(); err != nil {
		return fmt.Errorf("proxy list of %s: %w", m.Path, err)
	}
	return nil
}

// proxyURL is the GOPROXY entry of a file tree at the absolute path root.
func proxyURL(root string) string {
	return "file://" + filepath.ToSlash(root)
}
